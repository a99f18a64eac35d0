# SPDX-License-Identifier: MIT
"""ccom_torch: the "ccom" torch.distributed backend for CPU tensors.

    import ccom_torch  # registers the backend
    torch.distributed.init_process_group("ccom", init_method=..., rank=r, world_size=n)

Operations run on libccom (libccom.so.1, loaded with ctypes); see
python/README.md.  Works on torch 1.13 and 2.x (_compat.py says what
differs).
"""
import torch.distributed as _dist

from . import _compat
from ._lib import CcomError  # noqa: F401
from .backend import ProcessGroupCCOM, Work, create  # noqa: F401

__all__ = ["ProcessGroupCCOM", "Work", "CcomError", "BACKEND", "create", "create_extended"]
BACKEND = "ccom"


def create_extended(opts, pg_options=None):
    """The creator torch.distributed calls for backend "ccom" (the extended
    API of register_backend): @opts carries the group's store, rank, size
    and timeout.  ccom has no per-group options; passing some is refused
    rather than ignored."""
    if pg_options is not None:
        raise ValueError("ccom_torch: the ccom backend takes no pg_options (got %s); drop "
                         "pg_options= or use CCOM_* environment variables" %
                         type(pg_options).__name__)
    # The group id names the communicator where users look (ccomctl comm
    # show, the INFO log, ccomd): "torch pg 0" for the default group.
    gid = getattr(opts, "group_id", None)
    name = None if gid is None else "torch pg %s" % gid
    return ProcessGroupCCOM(opts.store, opts.group_rank, opts.group_size, opts.timeout, name)


if BACKEND.upper() not in getattr(_dist.Backend, "_plugins", {}):
    _compat.register_backend(BACKEND, create_extended)
