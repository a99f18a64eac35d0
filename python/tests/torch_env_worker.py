# SPDX-License-Identifier: MIT
"""One rank under torchrun (env://): init "ccom", all_reduce, print torchrun-ok."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import ccom_torch  # noqa: E402,F401

dist.init_process_group("ccom", init_method="env://")
rank, n = dist.get_rank(), dist.get_world_size()
assert rank == int(os.environ["RANK"]) and n == int(os.environ["WORLD_SIZE"])
t = torch.full((100,), float(rank + 1))
dist.all_reduce(t)
if bool((t == n * (n + 1) / 2).all()):
    print("torchrun-ok rank %d" % rank, flush=True)
dist.destroy_process_group()
