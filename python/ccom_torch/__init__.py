# SPDX-License-Identifier: MIT
"""ccom_torch: the "ccom" torch.distributed backend for CPU tensors.

    import ccom_torch  # registers the backend
    torch.distributed.init_process_group("ccom", init_method=..., rank=r, world_size=n)

Operations run on libccom (libccom.so.1, loaded with ctypes); see
python/README.md.
"""
import torch.distributed as _dist

from ._lib import CcomError  # noqa: F401
from .backend import ProcessGroupCCOM, Work, create  # noqa: F401

__all__ = ["ProcessGroupCCOM", "Work", "CcomError", "BACKEND"]
BACKEND = "ccom"

if "CCOM" not in getattr(_dist.Backend, "_plugins", {}):
    _dist.Backend.register_backend(BACKEND, create)
