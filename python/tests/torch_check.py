# SPDX-License-Identifier: MIT
"""Tests of the ccom torch.distributed backend, against gloo on the same inputs.

Run with Debian's interpreter and the library on the loader path:
    LD_LIBRARY_PATH=build/lib /usr/bin/python3 python/tests/torch_check.py [-n 2 -n 4]

Scenarios (each in fresh processes started with the spawn method):
  main  (n ranks)  gloo is the default group, ccom a group over the same
                   ranks: every collective x every dtype, ccom's result equal
                   to gloo's (bitwise for integers) and to a reference
                   computed here; where gloo refuses an op or dtype, only the
                   reference is checked and the case is listed as ccom-only.
                   Then: async overlap, Work.wait(timeout), non-contiguous
                   tensors, dtype errors, new_group, a DDP step (gradients
                   equal to gloo's), destroy_process_group freeing the comm.
  default (n)      ccom as the default backend (tcp:// init method).
  cpp   (n)        C++ callers holding Works: torch's broadcast_coalesced
                   and DDP with many small buckets (once hung in a Work's
                   base wait, issue 28).
  timeout (n)      the last rank skips a monitored_barrier (rank 0 names it)
                   and an all_reduce (the others raise within the group's
                   timeout, naming it).
  torchrun (2)     env:// under torchrun.
  kill  (n)        the last rank dies; every survivor's next collective
                   raises an exception naming it, within CCOM_OP_TIMEOUT.
The last line is "P passed, F failed" (tools/check-summary reads it); the
exit status is 0 only if nothing failed.
"""
import argparse
import copy
import datetime
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

DTYPES = [torch.int8, torch.uint8, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64]
TOL = {torch.float16: 1e-2, torch.bfloat16: 3e-2, torch.float32: 1e-5, torch.float64: 1e-12}
KILL_OP_TIMEOUT = 20
CPP_ROUNDS = 200


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def inputs(rank, dtype, numel, seed):
    g = torch.Generator().manual_seed(seed * 1000 + rank)
    if dtype.is_floating_point:
        return (torch.rand(numel, generator=g, dtype=torch.float64) + 0.5).to(dtype)
    return torch.randint(1, 4, (numel,), generator=g, dtype=torch.int64).to(dtype)


def reduce_ref(tensors, op, n):
    """The reduction of @tensors computed in float64 / int64, cast back."""
    dtype = tensors[0].dtype
    wide = [t.double() if dtype.is_floating_point else t.long() for t in tensors]
    acc = wide[0].clone()
    for t in wide[1:]:
        if op == "sum" or op == "avg":
            acc += t
        elif op == "prod":
            acc *= t
        elif op == "min":
            acc = torch.minimum(acc, t)
        elif op == "max":
            acc = torch.maximum(acc, t)
    if op == "avg":
        acc = acc / n if dtype.is_floating_point else torch.div(acc, n, rounding_mode="trunc")
    return acc.to(dtype)


class Checker:
    def __init__(self, rank, out):
        self.rank = rank
        self.out = out
        self.passed = 0
        self.failed = 0
        self.ccom_only = set()

    def ok(self, name, cond, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            self.out.put(("FAIL", self.rank, name, detail))

    def same(self, name, got, want):
        if got.dtype != want.dtype or got.shape != want.shape:
            self.ok(name, False, "dtype/shape %s %s vs %s %s" % (got.dtype, tuple(got.shape),
                                                               want.dtype, tuple(want.shape)))
            return
        if got.dtype.is_floating_point:
            tol = TOL[got.dtype]
            good = torch.allclose(got.double(), want.double(), rtol=tol, atol=tol)
            diff = (got.double() - want.double()).abs().max().item() if got.numel() else 0.0
            self.ok(name, good, "max |diff| %g" % diff)
        else:
            self.ok(name, torch.equal(got, want),
                    "%d elements differ" % int((got != want).sum()))

    def run(self, name, fn):
        try:
            fn()
        except Exception as e:
            self.ok(name, False, "%s\n%s" % (e, traceback.format_exc()))


def both(ck, name, fn, ref, gloo, ccom):
    """Run fn(group) -> result tensor on gloo and on ccom; compare."""
    got = fn(ccom)
    if ref is not None:
        ck.same(name + " ccom==reference", got, ref)
    try:
        want = fn(gloo)
    except RuntimeError:
        ck.ccom_only.add(name.split("[")[0] + "[" + str(got.dtype).replace("torch.", "") + "]")
        return
    if not got.dtype.is_floating_point:
        ck.ok(name + " ccom==gloo (bitwise)", torch.equal(got, want),
              "%d elements differ" % int((got != want).sum()) if got.shape == want.shape else "shape")
    else:
        ck.same(name + " ccom==gloo", got, want)


def collectives(ck, rank, n, gloo, ccom, dtype, numel, seed):
    dt = str(dtype).replace("torch.", "")
    all_in = [inputs(r, dtype, numel, seed) for r in range(n)]
    mine = all_in[rank]

    ops = [("sum", dist.ReduceOp.SUM), ("prod", dist.ReduceOp.PRODUCT),
           ("min", dist.ReduceOp.MIN), ("max", dist.ReduceOp.MAX), ("avg", dist.ReduceOp.AVG)]
    for opname, op in ops:
        def f(g, op=op):
            t = mine.clone()
            dist.all_reduce(t, op=op, group=g)
            return t
        both(ck, "all_reduce %s[%s]" % (opname, dt), f, reduce_ref(all_in, opname, n), gloo, ccom)

    def bcast(g):
        t = mine.clone()
        dist.broadcast(t, src=n - 1, group=g)
        return t
    both(ck, "broadcast[%s]" % dt, bcast, all_in[n - 1], gloo, ccom)

    def red(g):
        t = mine.clone()
        dist.reduce(t, dst=1, op=dist.ReduceOp.SUM, group=g)
        return t if rank == 1 else torch.zeros(0, dtype=dtype)
    both(ck, "reduce[%s]" % dt, red,
         reduce_ref(all_in, "sum", n) if rank == 1 else torch.zeros(0, dtype=dtype), gloo, ccom)

    def ag(g):
        outs = [torch.full((numel,), 7, dtype=dtype) for _ in range(n)]
        dist.all_gather(outs, mine, group=g)
        return torch.cat(outs)
    both(ck, "all_gather list[%s]" % dt, ag, torch.cat(all_in), gloo, ccom)

    def agt(g):
        out = torch.empty(n * numel, dtype=dtype)
        dist.all_gather_into_tensor(out, mine, group=g)
        return out
    both(ck, "all_gather_into_tensor[%s]" % dt, agt, torch.cat(all_in), gloo, ccom)

    # reduce_scatter: each rank's input has n blocks of `blk` elements.
    blk = numel // n
    rs_in = [t[:blk * n] for t in all_in]
    rs_ref = reduce_ref(rs_in, "sum", n)[rank * blk:(rank + 1) * blk]

    def rs(g):
        out = torch.empty(blk, dtype=dtype)
        dist.reduce_scatter(out, list(rs_in[rank].clone().chunk(n)), group=g)
        return out
    both(ck, "reduce_scatter list[%s]" % dt, rs, rs_ref, gloo, ccom)

    def rst(g):
        out = torch.empty(blk, dtype=dtype)
        dist.reduce_scatter_tensor(out, rs_in[rank].clone(), group=g)
        return out
    both(ck, "reduce_scatter_tensor[%s]" % dt, rst, rs_ref, gloo, ccom)

    def a2a(g):
        out = torch.empty(blk * n, dtype=dtype)
        dist.all_to_all_single(out, rs_in[rank].clone(), group=g)
        return out
    a2a_ref = torch.cat([rs_in[p][rank * blk:(rank + 1) * blk] for p in range(n)])
    both(ck, "all_to_all_single[%s]" % dt, a2a, a2a_ref, gloo, ccom)

    # Uneven splits: rank p sends (p + q + 1) rows of 3 elements to rank q.
    def rows(p, q):
        return p + q + 1

    def uneven_in(p):
        return inputs(p, dtype, 3 * sum(rows(p, q) for q in range(n)), seed + 1).view(-1, 3)

    def a2av(g):
        src = uneven_in(rank)
        out = torch.empty(sum(rows(p, rank) for p in range(n)), 3, dtype=dtype)
        dist.all_to_all_single(out, src, [rows(p, rank) for p in range(n)],
                               [rows(rank, q) for q in range(n)], group=g)
        return out

    def a2av_ref():
        parts = []
        for p in range(n):
            src = uneven_in(p)
            off = sum(rows(p, q) for q in range(rank))
            parts.append(src[off:off + rows(p, rank)])
        return torch.cat(parts)
    both(ck, "all_to_all_single uneven[%s]" % dt, a2av, a2av_ref(), gloo, ccom)

    def a2al(g):
        ins = [t.clone() for t in uneven_in(rank).split([rows(rank, q) for q in range(n)])]
        outs = [torch.empty(rows(p, rank), 3, dtype=dtype) for p in range(n)]
        dist.all_to_all(outs, ins, group=g)
        return torch.cat(outs)
    both(ck, "all_to_all list[%s]" % dt, a2al, a2av_ref(), gloo, ccom)

    # send/recv: even ranks send first, odd ranks receive first (ring).
    def sr(g):
        nxt, prv = (rank + 1) % n, (rank - 1) % n
        got = torch.zeros(numel, dtype=dtype)
        if rank % 2 == 0:
            dist.send(mine.clone(), dst=nxt, group=g)
            dist.recv(got, src=prv, group=g)
        else:
            dist.recv(got, src=prv, group=g)
            dist.send(mine.clone(), dst=nxt, group=g)
        return got
    both(ck, "send/recv[%s]" % dt, sr, all_in[(rank - 1) % n], gloo, ccom)

    def gat(g):
        outs = [torch.zeros(numel, dtype=dtype) for _ in range(n)] if rank == 0 else None
        dist.gather(mine.clone(), outs, dst=0, group=g)
        return torch.cat(outs) if rank == 0 else torch.zeros(0, dtype=dtype)
    both(ck, "gather[%s]" % dt, gat,
         torch.cat(all_in) if rank == 0 else torch.zeros(0, dtype=dtype), gloo, ccom)

    def sca(g):
        out = torch.zeros(numel, dtype=dtype)
        dist.scatter(out, [inputs(p + 10, dtype, numel, seed) for p in range(n)] if rank == 0
                     else None, src=0, group=g)
        return out
    both(ck, "scatter[%s]" % dt, sca, inputs(rank + 10, dtype, numel, seed), gloo, ccom)


def scenario_main(rank, n, port, out):
    import ccom_torch
    ck = Checker(rank, out)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=n, timeout=datetime.timedelta(seconds=120))
    gloo = dist.group.WORLD
    ccom = dist.new_group(backend="ccom")
    ck.ok("new_group(backend=ccom) is a ProcessGroupCCOM",
          isinstance(ccom, ccom_torch.ProcessGroupCCOM), repr(type(ccom)))

    for i, dtype in enumerate(DTYPES):
        ck.run("collectives[%s]" % dtype, lambda: collectives(ck, rank, n, gloo, ccom, dtype,
                                                              1031 * n, 7 + i))
    # A size above the direct engines' chunk (1 MiB per rank) for one dtype.
    ck.run("collectives large", lambda: collectives(ck, rank, n, gloo, ccom, torch.float32,
                                                    (1 << 19) + 3 * n, 99))

    def gather_coalesced():
        # torch's layout out[rank][i]; shapes differ per input.
        for k in (1, 2, 3):
            def f(g):
                ins = [torch.arange(3 + i, dtype=torch.float32) + 10 * i + 100 * rank
                       for i in range(k)]
                outs = [[torch.zeros(3 + i) for i in range(k)] for _ in range(n)]
                dist.all_gather_coalesced(outs, ins, group=g)
                return torch.cat([t for row in outs for t in row])
            ref = torch.cat([torch.arange(3 + i, dtype=torch.float32) + 10 * i + 100 * r
                             for r in range(n) for i in range(k)])
            both(ck, "all_gather_coalesced %d inputs[float32]" % k, f, ref, gloo, ccom)
    ck.run("all_gather_coalesced", gather_coalesced)

    def coalesced_and_hooks():
        def arc(g):
            ts = [inputs(rank, torch.float32, 17 + i, 40 + i) for i in range(3)]
            dist.all_reduce_coalesced(ts, group=g)
            return torch.cat(ts)
        both(ck, "all_reduce_coalesced 3 tensors[float32]", arc,
             torch.cat([reduce_ref([inputs(r, torch.float32, 17 + i, 40 + i) for r in range(n)],
                                   "sum", n) for i in range(3)]), gloo, ccom)
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        for hook in (default_hooks.allreduce_hook, default_hooks.fp16_compress_hook):
            grads = []
            for g in (gloo, ccom):
                torch.manual_seed(0)
                m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Linear(32, 4))
                d = torch.nn.parallel.DistributedDataParallel(m, process_group=g)
                d.register_comm_hook(g, hook)
                torch.manual_seed(200 + rank)
                d(torch.randn(8, 16)).sum().backward()
                grads.append([p.grad for p in m.parameters()])
            ck.ok("DDP comm hook %s: ccom's gradients equal gloo's" % hook.__name__,
                  all(torch.allclose(a, b, rtol=1e-3, atol=1e-3)
                      for a, b in zip(grads[0], grads[1])))
        w = dist.all_reduce(torch.ones(3), group=ccom, async_op=True)
        ck.ok("get_future() of an all_reduce holds its result",
              torch.equal(w.get_future().wait()[0], torch.full((3,), float(n))))
    ck.run("coalesced and comm hooks", coalesced_and_hooks)

    def batch_p2p():
        # Every rank receives from each peer before sending to it: the
        # receives would wait for sends queued behind them unless
        # batch_isend_irecv runs them as one group.
        def f(g):
            ops, outs = [], []
            for p in range(n):
                if p == rank:
                    continue
                outs.append(torch.zeros(5 + p))
                ops.append(dist.P2POp(dist.irecv, outs[-1], p, g))
                ops.append(dist.P2POp(dist.isend, torch.full((5 + rank,), float(rank)), p, g))
            for w in dist.batch_isend_irecv(ops):
                w.wait()
            return torch.cat(outs)
        ref = torch.cat([torch.full((5 + p,), float(p)) for p in range(n) if p != rank])
        both(ck, "batch_isend_irecv, receives first[float32]", f, ref, gloo, ccom)

        # The same without a batch (what torch 2.x does with a CPU batch).
        def g_(g):
            outs, ws = [], []
            for p in range(n):
                if p != rank:
                    outs.append(torch.zeros(5 + p))
                    ws.append(dist.irecv(outs[-1], p, group=g))
            for p in range(n):
                if p != rank:
                    ws.append(dist.isend(torch.full((5 + rank,), float(rank)), p, group=g))
            for w in ws:
                w.wait()
            return torch.cat(outs)
        both(ck, "irecv from every peer, then isend[float32]", g_, ref, gloo, ccom)
    # torch 1.13 brackets the batch with _start/_end_coalescing; torch 2.x
    # issues CPU operations one by one, which the backend's deferred
    # sends and receives (issued as one group) must cover.
    ck.run("batch_isend_irecv", batch_p2p)

    def refusals():
        # Tags are checked: the same tag on both sides passes, another fails
        # the receive naming both.
        nxt, prv = (rank + 1) % n, (rank - 1) % n
        got = torch.zeros(3)
        ws = [ccom.send([torch.full((3,), float(rank))], nxt, 7 + rank),
              ccom.recv([got], prv, 7 + prv)]
        for w in ws:
            w.wait()
        ck.ok("send/recv with matching tags", torch.equal(got, torch.full((3,), float(prv))))
        ws = [ccom.send([torch.full((3,), float(rank))], nxt, 7),
              ccom.recv([got], prv, 8)]
        try:
            for w in ws:
                w.wait()
            ck.ok("a recv whose tag differs from the send's raises", False, "no error")
        except RuntimeError as e:
            ck.ok("a recv whose tag differs from the send's raises naming both tags",
                  "with tag 8" in str(e) and "sent with tag 7" in str(e), str(e))
        if int(torch.__version__.split(".")[0]) < 2:
            try:
                dist.all_reduce(torch.ones(2), op=dist._make_nccl_premul_sum(2.0), group=ccom)
                ck.ok("PREMUL_SUM is refused", False, "no error")
            except ValueError as e:
                ck.ok("PREMUL_SUM is refused with a clear error", "factor" in str(e), str(e))
        ck.ok("monitored_barrier with every rank returns",
              ccom.monitored_barrier(datetime.timedelta(seconds=60), True) is None)
    ck.run("refusals", refusals)

    def premul_sum():
        # torch 2.x: PREMUL_SUM through ccomRedOpCreatePreMulSum, against a
        # reference (gloo has no PREMUL_SUM): each rank's factor differs.
        for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
            dt = str(dtype).replace("torch.", "")
            ins = [inputs(r, dtype, 37 * n, 60) for r in range(n)]
            fac = [0.5 + r for r in range(n)]
            ref = sum((ins[r].double() * fac[r]).to(dtype).double() for r in range(n)).to(dtype)
            t = ins[rank].clone()
            dist.all_reduce(t, op=dist._make_nccl_premul_sum(fac[rank]), group=ccom)
            ck.same("all_reduce PREMUL_SUM[%s] ccom==reference" % dt, t, ref)
            t = ins[rank].clone()
            dist.all_reduce(t, op=dist._make_nccl_premul_sum(torch.tensor([fac[rank]])),
                            group=ccom)
            ck.same("all_reduce PREMUL_SUM tensor factor[%s] ccom==reference" % dt, t, ref)
            out = torch.zeros(37, dtype=dtype)
            dist.reduce_scatter_tensor(out, ins[rank].clone(),
                                       op=dist._make_nccl_premul_sum(fac[rank]), group=ccom)
            ck.same("reduce_scatter_tensor PREMUL_SUM[%s] ccom==reference" % dt, out,
                    ref[37 * rank:37 * (rank + 1)])
            t = ins[rank].clone()
            dist.reduce(t, 0, op=dist._make_nccl_premul_sum(fac[rank]), group=ccom)
            if rank == 0:
                ck.same("reduce PREMUL_SUM[%s] ccom==reference" % dt, t, ref)
    if int(torch.__version__.split(".")[0]) >= 2:
        ck.run("PREMUL_SUM", premul_sum)

    def any_source():
        # recv() without src: rank 0 takes two messages from every other
        # rank, each naming its sender and number; the reported source must
        # be the sender and each sender's messages must come in order.
        want = sorted((p, k) for p in range(1, n) for k in range(2))
        for name, g in (("gloo", gloo), ("ccom", ccom)):
            if rank:
                for k in range(2):
                    dist.send(torch.tensor([rank, k, 7], dtype=torch.int64), 0, group=g)
                continue
            got, seen = [], {}
            for _ in range(len(want)):
                t = torch.zeros(3, dtype=torch.int64)
                src = dist.recv(t, group=g)
                got.append((src, int(t[1])))
                ck.ok("%s: recv without src reports the sender" % name,
                      src == int(t[0]) and int(t[2]) == 7, "src %s, data %s" % (src, t.tolist()))
                ck.ok("%s: one sender's messages in order" % name,
                      int(t[1]) == seen.get(src, 0), "src %d message %d" % (src, int(t[1])))
                seen[src] = int(t[1]) + 1
            ck.ok("%s: recv without src took every message once" % name, sorted(got) == want,
                  str(got))
        # irecv without src: the Work names the source once completed.  The
        # barrier keeps rank 1's third send out of rank 0's loop above, where
        # an any-source receive may rightly take it before rank 2's second.
        dist.barrier(group=gloo)
        if rank == 1:
            dist.send(torch.tensor([1, 9, 7], dtype=torch.int64), 0, group=ccom)
        elif rank == 0:
            t = torch.zeros(3, dtype=torch.int64)
            w = dist.irecv(t, group=ccom)
            w.wait()
            ck.ok("ccom: irecv without src: Work._source_rank() is the sender",
                  w._source_rank() == 1 and t.tolist() == [1, 9, 7],
                  "%s %s" % (w._source_rank(), t.tolist()))
        dist.barrier(group=gloo)
    ck.run("recv from any source", any_source)

    def barrier():
        w = dist.barrier(group=ccom, async_op=True)
        w.wait()
        ck.ok("barrier completes", w.is_completed())
    ck.run("barrier", barrier)

    def overlap():
        big = torch.ones(1 << 24)  # 64 MiB
        w = dist.all_reduce(big, group=ccom, async_op=True)
        pending = not w.is_completed()
        a = torch.randn(256, 256)
        for _ in range(20):
            a = torch.tanh(a @ a)
        fut = w.get_future()
        w.wait()
        ck.ok("async all_reduce returns before it completes", pending)
        ck.ok("async all_reduce result", bool((big == n).all()))
        ck.ok("future done after wait", fut.done())
        ck.ok("future value is the tensor", fut.value()[0] is big)
    ck.run("overlap", overlap)

    def wait_timeout():
        t = torch.zeros(4)
        if rank == 0:
            w = ccom.recv([t], 1, 0)
            try:
                w.wait(datetime.timedelta(milliseconds=300))
                ck.ok("Work.wait(timeout) raises when the peer has not sent", False,
                      "wait returned")
            except RuntimeError as e:
                ck.ok("Work.wait(timeout) raises when the peer has not sent",
                      "did not complete within" in str(e), str(e))
            ck.ok("is_completed() is false before the send", not w.is_completed())
            dist.barrier(group=gloo)
            w.wait(datetime.timedelta(seconds=60))
            ck.ok("recv completes after the send", bool((t == 5).all()))
        elif rank == 1:
            dist.barrier(group=gloo)
            ccom.send([torch.full((4,), 5.0)], 0, 0).wait()
        else:
            dist.barrier(group=gloo)
    ck.run("wait timeout", wait_timeout)

    def noncontig():
        base = inputs(rank, torch.float32, 64 * 32, 3).view(64, 32)
        ref_all = [inputs(r, torch.float32, 64 * 32, 3).view(64, 32) for r in range(n)]
        t = base.clone().t()[:, ::2]  # non-contiguous view
        dist.all_reduce(t, group=ccom)
        want = reduce_ref([x.t()[:, ::2].contiguous() for x in ref_all], "sum", n)
        ck.same("all_reduce of a non-contiguous tensor", t.contiguous(), want)
        outs = [torch.zeros(32, 64).t() for _ in range(n)]  # non-contiguous outputs
        dist.all_gather(outs, base, group=ccom)
        ck.ok("all_gather into non-contiguous outputs",
              all(torch.equal(o, ref_all[r]) for r, o in enumerate(outs)))
    ck.run("noncontig", noncontig)

    def errors():
        for bad in (torch.zeros(4, dtype=torch.int16), torch.zeros(4, dtype=torch.bool)):
            try:
                dist.all_reduce(bad, group=ccom)
                ck.ok("dtype %s is refused" % bad.dtype, False, "no error")
            except TypeError as e:
                ck.ok("dtype %s is refused with a clear error" % bad.dtype,
                      "not supported" in str(e) and "float32" in str(e), str(e))
        try:
            dist.all_reduce(torch.ones(4, dtype=torch.int32), op=dist.ReduceOp.BAND, group=ccom)
            ck.ok("BAND is refused", False, "no error")
        except ValueError as e:
            ck.ok("BAND is refused with a clear error", "not supported" in str(e), str(e))
    ck.run("errors", errors)

    def subgroup():
        members = [0, 1] if n == 2 else [1, 3]
        g = dist.new_group(members, backend="ccom")
        if rank in members:
            t = torch.full((1000,), float(rank + 1))
            dist.all_reduce(t, group=g)
            ck.ok("new_group(%s) all_reduce" % members,
                  bool((t == sum(r + 1 for r in members)).all()), str(t[:2]))
            w = torch.zeros(1000)
            dist.broadcast(w if rank != members[-1] else torch.full((1000,), 9.0),
                           src=members[-1], group=g)
            if rank != members[-1]:
                ck.ok("new_group broadcast from a global rank", bool((w == 9).all()))
        else:
            ck.ok("non-member gets GroupMember.NON_GROUP_MEMBER",
                  g == dist.GroupMember.NON_GROUP_MEMBER)
        dist.barrier(group=gloo)
    ck.run("new_group", subgroup)

    def ddp():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(),
                                    torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                    torch.nn.Linear(64, 4))
        m_gloo, m_ccom = model, copy.deepcopy(model)
        d_gloo = torch.nn.parallel.DistributedDataParallel(m_gloo, process_group=gloo)
        d_ccom = torch.nn.parallel.DistributedDataParallel(m_ccom, process_group=ccom)
        torch.manual_seed(100 + rank)
        x, y = torch.randn(32, 16), torch.randn(32, 4)
        for d in (d_gloo, d_ccom):
            torch.nn.functional.mse_loss(d(x), y).backward()
        for (name, p), q in zip(m_gloo.named_parameters(), m_ccom.parameters()):
            ck.same("DDP gradient %s" % name, q.grad, p.grad)
        # no_sync(): two local steps accumulate, the third all-reduces the sum.
        for d in (d_gloo, d_ccom):
            d.zero_grad()
            for i in range(3):
                torch.manual_seed(300 + 10 * rank + i)
                xi, yi = torch.randn(8, 16), torch.randn(8, 4)
                if i < 2:
                    with d.no_sync():
                        torch.nn.functional.mse_loss(d(xi), yi).backward()
                else:
                    torch.nn.functional.mse_loss(d(xi), yi).backward()
        for (name, p), q in zip(m_gloo.named_parameters(), m_ccom.parameters()):
            ck.same("DDP no_sync accumulated gradient %s" % name, q.grad, p.grad)
    ck.run("ddp", ddp)
    ck.run("shutdown joins the watchdog", lambda: check_shutdown_joins_watchdog(ck, rank))

    import gc
    from ccom_torch import backend
    before = backend.live_communicators()
    dist.destroy_process_group(ccom)
    ccom = None
    gc.collect()
    after = backend.live_communicators()
    ck.ok("destroy_process_group frees the communicator", after == before - 1,
          "%d -> %d live communicators" % (before, after))
    dist.destroy_process_group()
    out.put(("DONE", rank, ck.passed, ck.failed, sorted(ck.ccom_only)))


class _SlowStore:
    """The store calls a 1-rank ProcessGroupCCOM makes (set, get, add),
    with add() held while @slow is set, until @release is."""

    def __init__(self):
        self.kv, self.slow = {}, False
        self.inside, self.release = threading.Event(), threading.Event()

    def set(self, key, value):
        self.kv[key] = value

    def get(self, key):
        return self.kv[key]

    def add(self, key, delta):
        if self.slow:
            self.inside.set()
            self.release.wait(5)
        self.kv[key] = self.kv.get(key, 0) + delta
        return self.kv[key]


def check_shutdown_joins_watchdog(ck, rank):
    """shutdown() waits for a watchdog that is inside a store call.  One
    still there when the interpreter finalizes aborted the process ("terminate
    called without an active exception") after a torchrun worker finished."""
    from ccom_torch import backend
    store = _SlowStore()
    before = set(threading.enumerate())
    pg = backend.ProcessGroupCCOM(store, 0, 1, timeout=datetime.timedelta(seconds=0.4))
    mine = [t for t in threading.enumerate() if t not in before and t.name.startswith("ccom-")]
    store.slow = True
    inside = store.inside.wait(10)
    threading.Timer(0.3, store.release.set).start()
    t0 = time.monotonic()
    pg.shutdown()
    took = time.monotonic() - t0
    alive = [t.name for t in mine if t.is_alive()]
    ck.ok("rank %d: shutdown waits for a watchdog inside a store call" % rank,
          len(mine) == 2 and inside and not alive and took >= 0.2,
          "the group's threads: %s, watchdog in the store: %s, alive after shutdown: %s, "
          "shutdown took %.2f s" % ([t.name for t in mine], inside, alive, took))


def check_registration(ck, caught):
    """How ccom_torch registered (python/ccom_torch/_compat.py)."""
    plugin = dist.Backend._plugins.get("CCOM")
    ck.ok("registered through the extended API", plugin is not None and plugin.extended_api,
          str(plugin))
    cap = getattr(dist.Backend, "backend_capability", None)
    if cap is not None:  # torch 2.x: register_backend(devices=)
        ck.ok("registered for devices ['cpu']", cap.get("ccom") == ["cpu"], str(cap.get("ccom")))
    noise = [str(w.message) for w in caught if "ccom" in str(w.message).lower()]
    ck.ok("registering warns nothing", not noise, "; ".join(noise))


def scenario_default(rank, n, port, out):
    # The INFO log of this rank in a file (read once init is done): the
    # communicator must carry the group's name (ccom_torch.create_extended).
    logdir = tempfile.mkdtemp(prefix="ccom-torch-log-")
    os.environ["CCOM_DEBUG"] = "INFO"
    os.environ["CCOM_DEBUG_FILE"] = os.path.join(logdir, "rank.%p.log")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import ccom_torch  # noqa: F401
    ck = Checker(rank, out)
    check_registration(ck, caught)
    dist.init_process_group("ccom", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=n)
    ck.ok("default backend is ccom", dist.get_backend() == "ccom", dist.get_backend())
    with open(os.path.join(logdir, "rank.%d.log" % os.getpid())) as f:
        inits = [line.strip() for line in f if "Init COMPLETE" in line]
    ck.ok("the communicator is named after the group (commName \"torch pg 0\")",
          len(inits) == 1 and 'commName "torch pg 0"' in inits[0], "; ".join(inits))
    if hasattr(dist.group.WORLD, "group_name"):  # torch 2.x asks a Python group for it
        want = dist.distributed_c10d._world.pg_names[dist.group.WORLD]
        ck.ok("the group has its name", dist.group.WORLD.group_name == want,
              "%r, not %r" % (dist.group.WORLD.group_name, want))
    try:
        dist.new_group(list(range(n)), pg_options=types.SimpleNamespace(x=1))
        ck.ok("new_group(pg_options=) is refused", False, "accepted and ignored")
    except ValueError as e:
        ck.ok("new_group(pg_options=) is refused", "pg_options" in str(e), str(e))
    t = torch.full((10,), float(rank))
    dist.all_reduce(t)
    ck.ok("default-group all_reduce", bool((t == sum(range(n))).all()), str(t[:2]))
    dist.barrier()
    dist.destroy_process_group()
    out.put(("DONE", rank, ck.passed, ck.failed, []))


def scenario_kill(rank, n, port, out):
    import ccom_torch  # noqa: F401
    ck = Checker(rank, out)
    dist.init_process_group("ccom", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=n)
    t = torch.ones(1 << 16)
    dist.all_reduce(t)
    dist.barrier()
    if rank == n - 1:
        out.put(("DONE", rank, 0, 0, []))
        out.close()
        out.join_thread()
        os._exit(0)  # dies without leaving the communicator
    t0 = time.monotonic()
    try:
        for _ in range(100):
            dist.all_reduce(t)
        ck.ok("a collective after rank %d died raises" % (n - 1), False, "no exception")
    except Exception as e:
        dt = time.monotonic() - t0
        ck.ok("the exception names the dead rank %d" % (n - 1),
              "rank %d" % (n - 1) in str(e), str(e))
        ck.ok("it came within CCOM_OP_TIMEOUT (%d s)" % KILL_OP_TIMEOUT,
              dt < KILL_OP_TIMEOUT + 5, "%.1f s" % dt)
    out.put(("DONE", rank, ck.passed, ck.failed, []))
    out.close()
    out.join_thread()
    os._exit(0)  # the group cannot be finalized with a dead member


def scenario_cpp(rank, n, port, out):
    """C++ callers that keep a Work past its Python object: torch's
    broadcast_coalesced (DDP's parameter sync) issues bucket k+1 before it
    waits on bucket k, so bucket k often completes, and the Python side drops
    it, before the C++ wait.  That wait must not block on a completion that
    is never signalled (the spawn deadline turns such a hang into a FAIL)."""
    import ccom_torch  # noqa: F401
    ck = Checker(rank, out)
    dist.init_process_group("ccom", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=n, timeout=datetime.timedelta(seconds=60))
    pg = dist.group.WORLD
    good = True
    for it in range(CPP_ROUNDS):
        ts = [torch.full((64,), float(rank * 1000 + it * 10 + i)) for i in range(8)]
        # 256-byte buckets: one per tensor, eight C++-held Works per call.
        dist._broadcast_coalesced(pg, ts, 256, 0)
        good = good and all(bool((t == it * 10 + i).all()) for i, t in enumerate(ts))
        if it % 16 == 0:
            import gc
            gc.collect()
    ck.ok("broadcast_coalesced x %d (C++ waits on dropped Works) returns the root's data"
          % CPP_ROUNDS, good)
    # DDP: its constructor syncs through broadcast_coalesced, its reducer
    # takes each bucket's future from C++.
    torch.manual_seed(rank)
    model = torch.nn.Sequential(*[torch.nn.Linear(32, 32) for _ in range(6)])
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.004)
    for _ in range(5):
        ddp(torch.randn(4, 32)).sum().backward()
    ref = [p.grad.clone() for p in ddp.parameters()]
    for g in ref:
        dist.all_reduce(g, op=dist.ReduceOp.MAX)
    ck.ok("DDP with small buckets: equal gradients on every rank",
          all(torch.equal(p.grad, g) for p, g in zip(ddp.parameters(), ref)))
    dist.destroy_process_group()
    out.put(("DONE", rank, ck.passed, ck.failed, []))


def scenario_timeout(rank, n, port, out):
    """The last rank skips a monitored barrier, then an all_reduce: the
    others' calls raise within the group's timeout naming it."""
    import ccom_torch  # noqa: F401
    ck = Checker(rank, out)
    limit = 4
    dist.init_process_group("ccom", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=n, timeout=datetime.timedelta(seconds=limit))
    pg, last = dist.group.WORLD, n - 1
    dist.all_reduce(torch.ones(4))
    for wait_all in (False, True):
        if rank != last:
            try:
                pg.monitored_barrier(datetime.timedelta(seconds=2), wait_all)
                ck.ok("monitored_barrier without rank %d raises" % last, False, "returned")
            except RuntimeError as e:
                ck.ok("monitored_barrier(wait_all_ranks=%s) names rank %d" % (wait_all, last),
                      ("Rank %d failed to pass monitoredBarrier" % last) in str(e), str(e))
        else:
            time.sleep(3)
    if rank == last:
        time.sleep(limit + 8)  # answers the others' progress query, issues nothing
    else:
        t0 = time.monotonic()
        try:
            dist.all_reduce(torch.ones(4))
            ck.ok("an all_reduce that rank %d skips raises" % last, False, "returned")
        except RuntimeError as e:
            dt = time.monotonic() - t0
            ck.ok("the timeout names rank %d as not having issued it" % last,
                  "process group's timeout" in str(e) and
                  ("rank(s) %d have not issued it" % last) in str(e), str(e))
            ck.ok("it raised within the group's timeout (+ 5 s)", dt < limit + 5, "%.1f s" % dt)
    out.put(("DONE", rank, ck.passed, ck.failed, []))
    out.close()
    out.join_thread()
    os._exit(0)  # the communicator is revoked


def worker(scenario, rank, n, port, out):
    try:
        {"main": scenario_main, "default": scenario_default, "cpp": scenario_cpp,
         "timeout": scenario_timeout,
         "kill": scenario_kill}[scenario](rank, n, port, out)
    except Exception as e:
        out.put(("FAIL", rank, scenario, "%s\n%s" % (e, traceback.format_exc())))
        out.put(("DONE", rank, 0, 1, []))


def spawn(scenario, n, timeout):
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(scenario, r, n, port, out)) for r in range(n)]
    for p in procs:
        p.start()
    passed = failed = 0
    done = 0
    only = set()
    deadline = time.monotonic() + timeout
    while done < n:
        try:
            msg = out.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            print("FAIL %s n=%d: %d of %d ranks did not finish within %d s" %
                  (scenario, n, n - done, n, timeout))
            failed += 1
            break
        if msg[0] == "FAIL":
            print("FAIL %s n=%d rank %d: %s: %s" % (scenario, n, msg[1], msg[2], msg[3]))
            continue
        if msg[0] == "KNOWN":
            print("KNOWN %s n=%d: %s not run (neither passed nor failed): %s" %
                  (scenario, n, msg[2], msg[3]))
            continue
        else:
            done += 1
            passed += msg[2]
            failed += msg[3]
            only.update(msg[4])
    for p in procs:
        p.join(10)
        if p.is_alive():
            p.kill()
            p.join()
    print("%-8s n=%d: %d checks passed, %d failed" % (scenario, n, passed, failed))
    if only:
        print("  ccom-only (gloo refused them, checked against the reference): " +
              ", ".join(sorted(only)))
    return passed, failed


def torchrun(n):
    """env:// under torchrun: ranks run torch_env_worker.py."""
    worker = [os.path.join(HERE, "torch_env_worker.py")]
    launcher = ["-m", "torch.distributed.run"]
    if os.environ.get("USE_LIBUV") == "0":
        # A torch built without libuv (Debian 13's 2.6): torchrun's stores
        # ignore USE_LIBUV; torchrun_nolibuv.py makes them follow it.
        nolibuv = os.path.join(HERE, "torchrun_nolibuv.py")
        launcher = [nolibuv]
        worker = ["--no-python", sys.executable, nolibuv, "--script"] + worker
    cmd = [sys.executable] + launcher + ["--nproc_per_node=%d" % n,
           "--master_addr=127.0.0.1", "--master_port=%d" % free_port(),
           # Debian's torch 1.13 on Python 3.11: Std.from_str("0") is None
           # (IntFlag no longer iterates its zero member), so torchrun's
           # default --redirects=0 --tee=0 crash; 1 (stdout) parses.
           "--redirects=1", "--tee=1", "--log_dir=%s" % tempfile.mkdtemp(prefix="ccom-torchrun-")] + worker
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120,
                           universal_newlines=True)
        text, rc = r.stdout, r.returncode
    except subprocess.TimeoutExpired as e:
        text, rc = (e.stdout or ""), -1
    oks = text.count("torchrun-ok")
    good = rc == 0 and oks == n
    print("torchrun n=%d: %s (%d of %d ranks ok, exit %d)" % (n, "passed" if good else "FAILED",
                                                              oks, n, rc))
    if not good:
        print(text[-3000:])
    return (1, 0) if good else (0, 1)


def main():
    sys.stdout.reconfigure(line_buffering=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, action="append", help="world sizes (default 2 and 4)")
    ap.add_argument("--scenario", action="append", help="main, default, torchrun, kill")
    args = ap.parse_args()
    sizes = args.n or [2, 4]
    scen = args.scenario or ["main", "default", "cpp", "timeout", "torchrun", "kill"]
    os.environ["CCOM_OP_TIMEOUT"] = os.environ.get("CCOM_OP_TIMEOUT", "120")
    P = F = 0
    for s in scen:
        if s == "torchrun":
            p, f = torchrun(2)
            P, F = P + p, F + f
            continue
        for n in sizes:
            if s == "kill":
                os.environ["CCOM_OP_TIMEOUT"] = str(KILL_OP_TIMEOUT)
            p, f = spawn(s, n, 300 if s == "main" else 90 if s == "cpp" else 120)
            P, F = P + p, F + f
    print("torch: %d passed, %d failed" % (P, F))
    print("%d passed, %d failed" % (P, F))
    return 0 if F == 0 and P > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
