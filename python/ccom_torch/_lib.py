# SPDX-License-Identifier: MIT
"""ctypes bindings of the parts of libccom.so.1 (ccom.h) the backend uses.

No compiled extension: the library is found like any shared library
(LD_LIBRARY_PATH, the ld.so cache), so one package serves every torch
release that has torch.distributed.ProcessGroup subclassing.
"""
import ctypes

UNIQUE_ID_BYTES = 128
CONFIG_MAGIC = 0xCC0FC0F1
CONFIG_UNDEF_INT = -(2 ** 31)

SUCCESS = 0
IN_PROGRESS = 7

RESULT_NAMES = {
    0: "ccomSuccess", 1: "ccomUnhandledDeviceError", 2: "ccomSystemError",
    3: "ccomInternalError", 4: "ccomInvalidArgument", 5: "ccomInvalidUsage",
    6: "ccomRemoteError", 7: "ccomInProgress", 8: "ccomTimeout",
}

# ccomDataType_t
INT8, UINT8, INT32, UINT32, INT64, UINT64, FLOAT16, FLOAT32, FLOAT64, BFLOAT16 = range(10)
# ccomRedOp_t
SUM, PROD, MAX, MIN, AVG = range(5)
SCALAR_HOST_IMMEDIATE = 1  # ccomScalarHostImmediate


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * UNIQUE_ID_BYTES)]


class Config(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("magic", ctypes.c_uint),
        ("version", ctypes.c_uint),
        ("blocking", ctypes.c_int),
        ("device", ctypes.c_int),
        ("timeoutSec", ctypes.c_int),
        ("reserved", ctypes.c_int * 9),
        # CCOM_1.3
        ("commName", ctypes.c_char_p),
        ("netName", ctypes.c_char_p),
        ("trafficClass", ctypes.c_int),
        ("reserved2", ctypes.c_int),
    ]


comm_t = ctypes.c_void_p
stream_t = ctypes.c_void_p
_res = ctypes.c_int
_p = ctypes.c_void_p
_sz = ctypes.c_size_t
_i = ctypes.c_int

_PROTOS = {
    "ccomGetVersion": [ctypes.POINTER(_i)],
    "ccomGetErrorString": [_i],
    "ccomGetLastError": [comm_t],
    "ccomGetUniqueId": [ctypes.POINTER(UniqueId)],
    "ccomCommInitRankConfig": [ctypes.POINTER(comm_t), _i, UniqueId, _i, ctypes.POINTER(Config)],
    "ccomCommSplit": [comm_t, _i, _i, ctypes.POINTER(comm_t), ctypes.POINTER(Config)],
    "ccomCommFinalize": [comm_t],
    "ccomCommDestroy": [comm_t],
    "ccomCommAbort": [comm_t],
    "ccomCommGetAsyncError": [comm_t, ctypes.POINTER(_i)],
    "ccomCommRevoke": [comm_t, _i],
    "ccomCommGetFailedRanks": [comm_t, ctypes.POINTER(_i), ctypes.POINTER(_i)],
    "ccomCommCount": [comm_t, ctypes.POINTER(_i)],
    "ccomCommUserRank": [comm_t, ctypes.POINTER(_i)],
    "ccomGroupStart": [],
    "ccomGroupEnd": [],
    "ccomCommSynchronize": [comm_t],
    "ccomStreamQuery": [stream_t],
    "ccomAllReduce": [_p, _p, _sz, _i, _i, comm_t, stream_t],
    "ccomBroadcast": [_p, _p, _sz, _i, _i, comm_t, stream_t],
    "ccomReduce": [_p, _p, _sz, _i, _i, _i, comm_t, stream_t],
    "ccomAllGather": [_p, _p, _sz, _i, comm_t, stream_t],
    "ccomReduceScatter": [_p, _p, _sz, _i, _i, comm_t, stream_t],
    "ccomAlltoAll": [_p, _p, _sz, _i, comm_t, stream_t],
    "ccomSend": [_p, _sz, _i, _i, comm_t, stream_t],
    "ccomRecv": [_p, _sz, _i, _i, comm_t, stream_t],
    "ccomGather": [_p, _p, _sz, _i, _i, comm_t, stream_t],
    "ccomScatter": [_p, _p, _sz, _i, _i, comm_t, stream_t],
    "ccomRecvAny": [_p, _sz, _i, ctypes.POINTER(_i), comm_t, stream_t],
    "ccomRedOpCreatePreMulSum": [ctypes.POINTER(_i), _p, _i, _i, comm_t],
    "ccomRedOpDestroy": [_i, comm_t],
}

_lib = None


class CcomError(RuntimeError):
    """A libccom call failed; the message is ccomGetLastError()'s sentence."""

    def __init__(self, func, code, message):
        self.func = func
        self.code = code
        self.ccom_message = message
        super().__init__("ccom: %s failed: %s (%s)" % (func, message or "no message",
                                                       RESULT_NAMES.get(code, code)))


def lib():
    """libccom.so.1, loaded on first use (OSError with a fix if missing)."""
    global _lib
    if _lib is not None:
        return _lib
    try:
        handle = ctypes.CDLL("libccom.so.1")
    except OSError as e:
        raise OSError("ccom_torch: cannot load libccom.so.1 (%s); install libccom1 "
                      "or put the directory holding it in LD_LIBRARY_PATH" % e) from None
    for name, args in _PROTOS.items():
        fn = getattr(handle, name)
        fn.argtypes = args
        fn.restype = ctypes.c_char_p if name in ("ccomGetErrorString", "ccomGetLastError") else _res
    _lib = handle
    return _lib


def last_error():
    msg = lib().ccomGetLastError(None)
    return msg.decode("utf-8", "replace") if msg else ""


def check(func, code):
    """Raise CcomError for a failed call; return the code otherwise."""
    if code not in (SUCCESS, IN_PROGRESS):
        raise CcomError(func, code, last_error())
    return code


def call(func, *args):
    return check(func, getattr(lib(), func)(*args))


# Bytes of Config.commName, its terminating NUL included, at most (ccom.h).
COMM_NAME_MAX = 64


def comm_name(text):
    """@text as a commName: printable ASCII, cut to COMM_NAME_MAX - 1 bytes
    (the library refuses longer names and control characters)."""
    clean = "".join(c if " " <= c <= "~" else "?" for c in str(text))
    return clean[:COMM_NAME_MAX - 1].encode("ascii")


def default_config(timeout_s=None, name=None):
    """A Config at the library's defaults; @name (str) becomes commName."""
    cfg = Config()
    cfg.size = ctypes.sizeof(Config)
    cfg.magic = CONFIG_MAGIC
    ver = ctypes.c_int()
    call("ccomGetVersion", ctypes.byref(ver))
    cfg.version = ver.value
    cfg.blocking = 1
    cfg.device = CONFIG_UNDEF_INT
    cfg.timeoutSec = CONFIG_UNDEF_INT if timeout_s is None else max(1, int(timeout_s))
    cfg.trafficClass = CONFIG_UNDEF_INT
    if name is not None:
        # The bytes object must outlive the init call: the library copies it there.
        cfg._name = comm_name(name)
        cfg.commName = cfg._name
    return cfg
