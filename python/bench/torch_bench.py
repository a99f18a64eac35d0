# SPDX-License-Identifier: MIT
"""torch.distributed all_reduce and one DDP step: ccom vs gloo, same run.

    LD_LIBRARY_PATH=build/lib /usr/bin/python3 python/bench/torch_bench.py [-n 2 -n 4]

For each world size: float32 all_reduce of 8 bytes and from 4 KiB to
256 MiB (x4 steps), alternating the two backends per size, median of the
timed iterations on rank 0 (each iteration ends with the op's wait), and
the ratio; for 8 bytes also libccom called directly through ctypes on the
same communicator (ccomAllReduce + ccomCommSynchronize: what the Python
layer adds is the difference); then the median step time (forward,
backward with DDP's gradient all_reduce, optimizer step) of a small MLP
under DDP with each backend.  Prints /proc/loadavg before and after.  Not
a test: numbers depend on the host and its load.
"""
import argparse
import datetime
import os
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402


def timed(fn, iters):
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def worker(rank, n, port, out, max_bytes):
    import ccom_torch  # noqa: F401
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=n, timeout=datetime.timedelta(seconds=600))
    groups = {"gloo": dist.group.WORLD, "ccom": dist.new_group(backend="ccom")}
    if rank == 0:
        out.put(("load", open("/proc/loadavg").read().strip()))
    import ctypes
    from ccom_torch import _lib as L
    small = torch.ones(2)
    comm = groups["ccom"]._st.comm

    def raw():
        L.lib().ccomAllReduce(ctypes.c_void_p(small.data_ptr()), ctypes.c_void_p(small.data_ptr()),
                              2, L.FLOAT32, L.SUM, comm, None)
        L.lib().ccomCommSynchronize(comm)
    row = {}
    for name in ("gloo", "ccom", "raw", "gloo", "ccom", "raw"):
        fn = raw if name == "raw" else (lambda g=groups[name]: dist.all_reduce(small, group=g))
        fn()
        dist.barrier(group=groups["gloo"])
        row.setdefault(name, []).append(timed(fn, 2000))
    if rank == 0:
        out.put(("small", n, min(row["gloo"]), min(row["ccom"]), min(row["raw"])))
    size = 4096
    while size <= max_bytes:
        t = torch.ones(size // 4)
        iters = max(3, min(50, (64 << 20) // size))
        row = {}
        for name in ("gloo", "ccom", "gloo", "ccom"):
            g = groups[name]
            dist.all_reduce(t, group=g)  # warm-up
            dist.barrier(group=groups["gloo"])
            row.setdefault(name, []).append(timed(lambda: dist.all_reduce(t, group=g), iters))
        if rank == 0:
            out.put(("ar", n, size, min(row["gloo"]), min(row["ccom"])))
        size *= 4
    torch.manual_seed(0)
    steps = {}
    for name in ("gloo", "ccom"):
        model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                    torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                    torch.nn.Linear(1024, 10))
        ddp = torch.nn.parallel.DistributedDataParallel(model, process_group=groups[name])
        opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
        x, y = torch.randn(64, 512), torch.randint(0, 10, (64,))

        def step():
            opt.zero_grad()
            torch.nn.functional.cross_entropy(ddp(x), y).backward()
            opt.step()
        step()
        dist.barrier(group=groups["gloo"])
        steps[name] = timed(step, 20)
    if rank == 0:
        out.put(("ddp", n, steps["gloo"], steps["ccom"]))
        out.put(("done",))
    dist.barrier(group=groups["gloo"])
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, action="append")
    ap.add_argument("--max-bytes", type=int, default=256 << 20)
    args = ap.parse_args()
    ctx = mp.get_context("spawn")
    for n in args.n or [2, 4]:
        out = ctx.Queue()
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        procs = [ctx.Process(target=worker, args=(r, n, port, out, args.max_bytes))
                 for r in range(n)]
        for p in procs:
            p.start()
        print("%d processes: all_reduce float32, median us per op" % n)
        print("%12s %12s %12s %8s" % ("bytes", "gloo", "ccom", "gloo/ccom"))
        while True:
            m = out.get(timeout=1800)
            if m[0] == "load":
                print("loadavg at start: %s" % m[1])
            elif m[0] == "small":
                print("%12d %12.1f %12.1f %8.2f   (libccom via ctypes: %.1f us; the Python "
                      "backend adds %.1f us)" % (8, m[2] * 1e6, m[3] * 1e6, m[2] / m[3],
                                                 m[4] * 1e6, (m[3] - m[4]) * 1e6), flush=True)
            elif m[0] == "ar":
                print("%12d %12.1f %12.1f %8.2f" % (m[2], m[3] * 1e6, m[4] * 1e6, m[3] / m[4]),
                      flush=True)
            elif m[0] == "ddp":
                print("DDP step (MLP 512-1024-1024-10, batch 64): gloo %.2f ms, ccom %.2f ms, "
                      "ratio %.2f" % (m[2] * 1e3, m[3] * 1e3, m[2] / m[3]), flush=True)
            else:
                break
        for p in procs:
            p.join()
        print("loadavg at end: %s" % open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
