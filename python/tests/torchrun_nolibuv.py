# SPDX-License-Identifier: MIT
"""torchrun for a torch built without libuv (Debian 13's python3-torch 2.6).

torch 2.6 builds two TCPStores without asking USE_LIBUV: torchrun's static
rendezvous (the agent's store server) and, under torchrun, each worker's
env:// client of it.  Both then ask for libuv, and a torch built without it
fails before any backend is created ("use_libuv was requested but PyTorch
was build without libuv support": torchrun is unusable for every backend,
gloo included; pytorch#148283).  This makes those two stores honour
USE_LIBUV as the rest of torch does (tcp:// and env:// without torchrun),
which changes only which store server implementation runs.
    python3 torchrun_nolibuv.py TORCHRUN-ARGS...      the agent
    python3 torchrun_nolibuv.py --script FILE ARGS...  a worker (torchrun --no-python)
"""
import os
import runpy
import sys

import torch.distributed as dist
import torch.distributed.rendezvous  # noqa: F401 (torch.distributed.rendezvous is also a function)
from torch.distributed.elastic.rendezvous import static_tcp_rendezvous as _static


class _TCPStore(dist.TCPStore):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("use_libuv", os.environ.get("USE_LIBUV", "1") == "1")
        super().__init__(*args, **kwargs)


_static.TCPStore = _TCPStore
sys.modules["torch.distributed.rendezvous"].TCPStore = _TCPStore

if __name__ == "__main__":
    if sys.argv[1:2] == ["--script"]:
        sys.argv = sys.argv[2:]
        runpy.run_path(sys.argv[0], run_name="__main__")
    else:
        from torch.distributed.run import main
        sys.argv[0] = "torchrun"
        main()
