# SPDX-License-Identifier: MIT
"""ProcessGroupCCOM: torch.distributed's process-group interface over libccom.

Every operation is enqueued on the communicator's default stream by the
calling thread (the ccom call returns once the operation is queued) and a
Work object is returned at once.  One waiter thread per process group calls
ccomCommSynchronize() and completes the Work objects (and their futures) in
issue order; a thread that waits on a Work without a timeout synchronizes
and completes them itself, which is faster than being woken.  Contiguous CPU tensors are handed to libccom in place;
non-contiguous ones go through a contiguous copy that is written back when
the operation completes.
"""
import ctypes
import datetime
import os
import threading
import time
import weakref

import torch
import torch.distributed as dist

from . import _compat, _lib as L
from .watchdog import Watchdog, monitored_barrier

_DTYPES = {
    torch.int8: L.INT8,
    torch.uint8: L.UINT8,
    torch.int32: L.INT32,
    torch.int64: L.INT64,
    torch.float16: L.FLOAT16,
    torch.bfloat16: L.BFLOAT16,
    torch.float32: L.FLOAT32,
    torch.float64: L.FLOAT64,
}


def _ops():
    R = dist.ReduceOp
    table = [(R.SUM, L.SUM), (R.PRODUCT, L.PROD), (R.MIN, L.MIN), (R.MAX, L.MAX)]
    if hasattr(R, "AVG"):
        table.append((R.AVG, L.AVG))
    return table


class _PreMul:
    """A PREMUL_SUM op's factor: each launch makes a ccom op of it for the
    tensor's dtype (ccomRedOpCreatePreMulSum, the value copied at once) and
    destroys it after the enqueue, which captured it."""

    def __init__(self, factor):
        if isinstance(factor, torch.Tensor):
            if factor.numel() != 1:
                raise ValueError("ccom_torch: PREMUL_SUM's factor tensor has %d elements, not 1" %
                                 factor.numel())
            factor = factor.item()  # read at issue (NCCL reads it at execution)
        self.factor = factor

    def run(self, comm, buf, fn):
        scalar = torch.tensor([self.factor], dtype=buf.t.dtype)
        op = ctypes.c_int()
        L.call("ccomRedOpCreatePreMulSum", ctypes.byref(op), scalar.data_ptr(), buf.dt,
               L.SCALAR_HOST_IMMEDIATE, comm)
        try:
            fn(op.value)
        finally:
            L.lib().ccomRedOpDestroy(op.value, comm)


def _with_op(op, comm, buf, fn):
    """fn(ccom op) for a reduction of @buf with @op (a ccom op or a _PreMul)."""
    if isinstance(op, _PreMul):
        op.run(comm, buf, fn)
    else:
        fn(op)


def _red_op(op):
    for top, cop in _ops():
        if op == top:
            return cop
    if hasattr(dist.ReduceOp, "PREMUL_SUM") and op == dist.ReduceOp.PREMUL_SUM:
        # torch 2.x shows the factor of _make_nccl_premul_sum() through
        # ReduceOp.__getstate__() (op, factor); torch 1.13 keeps it in C++
        # (ReduceOp's supplement), where a Python backend cannot read it.
        state = op.__getstate__() if hasattr(op, "__getstate__") else None
        if isinstance(state, tuple) and len(state) == 2 and state[1] is not None:
            return _PreMul(state[1])
        raise ValueError("ccom_torch: PREMUL_SUM is not supported: this torch does not show a "
                         "Python backend its factor; multiply the tensor by the factor and "
                         "use ReduceOp.SUM")
    raise ValueError("ccom_torch: reduce op %s is not supported; ccom reduces with SUM, "
                     "PRODUCT, MIN, MAX and AVG" % (op,))


def _dtype(t):
    if not isinstance(t, torch.Tensor):
        raise TypeError("ccom_torch: expected a torch.Tensor, got %s" % type(t).__name__)
    if t.device.type != "cpu":
        raise ValueError("ccom_torch: tensor is on %s; the ccom backend takes CPU tensors only "
                         "(move it with .cpu() or use another backend for it)" % t.device)
    if t.layout != torch.strided:
        raise ValueError("ccom_torch: %s tensors are not supported; use a dense tensor" % t.layout)
    try:
        return _DTYPES[t.dtype]
    except KeyError:
        raise TypeError("ccom_torch: dtype %s is not supported; ccom takes %s" % (
            t.dtype, ", ".join(str(d).replace("torch.", "") for d in _DTYPES))) from None


def _seconds(timeout):
    """None for no limit (None or torch's timedelta(0) default), else seconds."""
    if timeout is None:
        return None
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    return None if timeout <= 0 else float(timeout)


class _Buf:
    """A tensor as libccom sees it: contiguous, with a pointer and a count.

    A non-contiguous tensor gets a contiguous copy; writeback() copies the
    result back (called once the operation completed)."""

    def __init__(self, t, output=True):
        self.dt = _dtype(t)
        self.orig = t
        self.t = t if t.is_contiguous() else t.contiguous()
        self.copied = self.t is not t
        self.output = output

    @property
    def ptr(self):
        return ctypes.c_void_p(self.t.data_ptr())

    @property
    def count(self):
        return self.t.numel()

    def writeback(self):
        if self.copied and self.output:
            self.orig.copy_(self.t)


def _grouped(fn):
    """fn(comm) between ccomGroupStart() and ccomGroupEnd()."""
    def run(comm):
        L.call("ccomGroupStart")
        try:
            fn(comm)
        finally:
            L.call("ccomGroupEnd")
    return run


# A deferred send/receive that nobody waits on starts after this long (see
# ProcessGroupCCOM._submit).  Long next to the gap between the operations
# of one batch_isend_irecv, which this timer must not split.
P2P_FLUSH_S = float(os.environ.get("CCOM_TORCH_P2P_FLUSH_MS", "1000")) / 1000.0


class TagMismatch(RuntimeError):
    """A receive got a message sent with another tag."""


class Work(dist.Work):
    """An operation of a ProcessGroupCCOM, completed by the waiter thread.

    torch 1.13 calls a Python Work from C++ (DDP's broadcast_coalesced and
    reducer) through a pybind11 trampoline whose C++ object outlives the
    Python one: once the Python object is gone, a C++ wait() reaches the
    base class, which waits for a completion only torch's own backends
    signal, and hangs.  So a Work keeps itself alive (in _State.held) from
    its issue until it has completed *and* been claimed by a wait() or
    get_future() - every C++ caller does one of the two once.  A Work that
    nobody waits on stays held until its process group is shut down."""

    def __init__(self, name, result, keep, finish=None):
        super().__init__()
        self._name = name
        self._result = result
        self._keep = keep
        self._finish = finish
        self._event = threading.Event()
        self._exc = None
        self._fut = torch.futures.Future()
        self._held = None  # _State.held once issued
        self._state = None
        self._claimed = False
        self.t_issue = 0.0
        self.coll_seq = 0  # collectives of the group issued up to this one
        self.p2p = False
        self._source = -1
        self.seq = 0
        self._defer_st = None  # _State holding it in its deferred p2p batch

    def _kick(self):
        """A deferred send/receive starts when anyone looks at its Work."""
        st = self._defer_st
        if st is not None:
            st.flush_p2p()

    def _release_if_done(self):
        if self._held is not None and self._claimed and self._event.is_set():
            self._held.discard(self)

    def _claim(self):
        self._claimed = True
        self._release_if_done()

    def _complete(self, exc):
        if exc is None:
            try:
                for b in self._keep:
                    if isinstance(b, _Buf):
                        b.writeback()
                if self._finish:
                    self._finish()
            except TagMismatch as e:
                exc = e
            except Exception as e:  # a copy-back failed: report it as the op's error
                exc = RuntimeError("ccom_torch: %s: copying the result out failed: %s" %
                                   (self._name, e))
        self._keep = None
        self._finish = None
        self._exc = exc
        self._event.set()
        if exc is None:
            self._fut.set_result(self._result)
        else:
            self._fut.set_exception(exc)
        self._release_if_done()

    def is_completed(self):
        self._kick()
        return self._event.is_set()

    def is_success(self):
        self._kick()
        return self._event.is_set() and self._exc is None

    def exception(self):
        self._kick()
        return self._exc

    def wait(self, timeout=None):
        """Wait for the operation (at most @timeout); raise its error.  With
        no @timeout the group's watchdog bounds it by the group's timeout."""
        self._claim()
        self._kick()
        secs = _seconds(timeout)
        if secs is None and not self._event.is_set() and self._state is not None:
            self._state.sync_for(self)  # this thread synchronizes: no hand-off
        if not self._event.wait(secs):
            raise RuntimeError("ccom_torch: %s did not complete within %.3f s (Work.wait "
                               "timeout); the operation is still queued" % (self._name, secs))
        if self._exc is not None:
            raise self._exc
        return True

    def get_future(self):
        self._claim()
        self._kick()
        return self._fut

    def result(self):
        return self._result

    def source_rank(self):
        if self._source < 0:
            raise RuntimeError("ccom_torch: source_rank() is only defined for a receive from "
                               "any source")
        return self._source

    _source_rank = source_rank

    def synchronize(self):
        pass


_live = set()  # _State of every communicator not yet destroyed


def live_communicators():
    """Number of ccom communicators this process holds (tests, leak checks)."""
    return len(_live)


class _State(Watchdog):
    """What the waiter thread shares with its process group: the
    communicator and the queue of Work objects.  Kept apart from the group
    so that the thread does not keep the group alive."""

    def __init__(self, rank):
        self.rank = rank
        self.comm = L.comm_t()
        self.lock = threading.Condition()
        self.pending = []
        self.issued = 0  # Works issued (the waiter's order)
        self.colls = 0  # collectives issued: the same count on every rank
        self.stop = False
        self.error = None
        self.thread = None
        self.watchdog_thread = None
        self.held = set()  # Works a C++ caller may still wait on (see Work)
        self.timeout = None  # the group's timeout (s): the watchdog's bound
        self.timed_out = None
        self.diagnosing = False
        self.store = None
        self.deferred = []  # (launch, Work) of sends/receives not yet issued
        self.deferred_t = 0.0  # when the first of them was deferred

    def issue(self, batch, p2p):
        """Enqueue the (launch, Work) pairs of @batch (more than one: as one
        ccom group) and hand their Works to the waiter."""
        name = batch[0][1]._name
        with self.lock:
            if not self.comm:
                raise RuntimeError("ccom_torch: %s on a destroyed process group" % name)
            if self.error is not None:
                raise RuntimeError("ccom_torch: %s: the communicator failed earlier: %s" %
                                   (name, self.error))
            if len(batch) == 1:
                batch[0][0](self.comm)
            else:
                _grouped(lambda comm: [launch(comm) for launch, _ in batch])(self.comm)
            if not p2p:
                self.colls += 1
            for _, work in batch:
                work._defer_st = None
                work._held = self.held
                work._state = self
                self.held.add(work)
                work.t_issue = time.monotonic()
                self.issued += 1
                work.seq = self.issued
                work.coll_seq = self.colls
                work.p2p = p2p
                self.pending.append(work)
            self.lock.notify_all()

    def defer(self, launch, work):
        """Hold a send/receive until flush_p2p() (see ProcessGroupCCOM._submit)."""
        with self.lock:
            if not self.deferred:
                self.deferred_t = time.monotonic()
            work._defer_st = self
            self.deferred.append((launch, work))
            self.lock.notify_all()

    def flush_p2p(self):
        """Issue the deferred sends and receives as one ccom group; if that
        fails, their Works fail with the error."""
        with self.lock:
            batch, self.deferred = self.deferred, []
            if not batch:
                return
            try:
                self.issue(batch, True)
            except Exception as e:
                for _, work in batch:
                    work._defer_st = None
                    work._complete(e)

    def waiter(self):
        lib = L.lib()
        while True:
            with self.lock:
                while not self.pending and not self.stop:
                    if not self.deferred:
                        self.lock.wait()
                        continue
                    left = self.deferred_t + P2P_FLUSH_S - time.monotonic()
                    if left > 0:
                        self.lock.wait(left)
                    else:
                        self.flush_p2p()  # nobody looked at them: start them anyway
                if not self.pending:
                    return
                target = self.issued
                comm = self.comm
            exc = None
            if not comm:
                exc = RuntimeError("ccom_torch: rank %d: the communicator was aborted" % self.rank)
            else:
                rc = lib.ccomCommSynchronize(comm)
                if rc != L.SUCCESS:
                    exc = self._failure(rc, L.last_error())
            self._complete_upto(target, exc)

    def sync_for(self, work):
        """Synchronize the stream on the calling thread (a wait() without a
        timeout) and complete the Works issued so far, as the waiter does:
        the caller need not be woken by the waiter thread, which costs
        more than a small operation does."""
        with self.lock:
            comm, target = self.comm, self.issued
            if not comm or work._event.is_set():
                return
        rc = L.lib().ccomCommSynchronize(comm)
        exc = None if rc == L.SUCCESS else self._failure(rc, L.last_error())
        self._complete_upto(target, exc)

    def _complete_upto(self, target, exc):
        """Complete the pending Works issued up to @target (their stream
        synchronized) with @exc; the first failure stays the group's."""
        with self.lock:
            done = [w for w in self.pending if w.seq <= target]
            self.pending = [w for w in self.pending if w.seq > target]
            if exc is not None and self.error is None:
                self.error = exc
        for w in done:
            w._complete(exc)

    def shutdown(self):
        """Wait for the queued operations, stop the waiter, destroy the comm."""
        self.flush_p2p()
        with self.lock:
            if not self.comm:
                return
            self.stop = True
            self.lock.notify_all()
        if self.thread is not None and threading.current_thread() is not self.thread:
            self.thread.join()
        self.join_watchdog()
        with self.lock:
            comm, self.comm = self.comm, L.comm_t()
        _live.discard(self)
        self.held.clear()
        if comm:
            L.lib().ccomCommDestroy(comm)

    def abort(self):
        with self.lock:
            comm, self.comm = self.comm, L.comm_t()
            self.stop = True
            self.lock.notify_all()
        self.join_watchdog()
        _live.discard(self)
        self.held.clear()
        if comm:
            L.lib().ccomCommAbort(comm)


class ProcessGroupCCOM(_compat.ProcessGroup):
    """torch.distributed process group backed by one ccom communicator."""

    def __init__(self, store, rank, size, timeout=None, name=None):
        """@name: the communicator's commName (ccomctl comm show, logs,
        ccomd); create_extended() passes "torch pg <group id>"."""
        super().__init__(rank, size)
        st = self._st = _State(rank)
        secs = _seconds(timeout)
        self._timeout = secs
        self._store = store
        self._mb_seq = 0
        self._coalescing = False  # inside torch 1.13's batch_isend_irecv
        cfg = L.default_config(secs, name)
        uid = L.UniqueId()
        key = "ccom_torch/unique_id"
        if rank == 0:
            L.call("ccomGetUniqueId", ctypes.byref(uid))
            store.set(key, ctypes.string_at(ctypes.addressof(uid), L.UNIQUE_ID_BYTES))
        else:
            raw = store.get(key)
            if len(raw) != L.UNIQUE_ID_BYTES:
                raise RuntimeError("ccom_torch: the unique id in the store has %d bytes, not %d: "
                                   "another program wrote key %s" % (len(raw), L.UNIQUE_ID_BYTES, key))
            ctypes.memmove(ctypes.addressof(uid), raw, L.UNIQUE_ID_BYTES)
        comm = L.comm_t()
        rc = L.lib().ccomCommInitRankConfig(ctypes.byref(comm), size, uid, rank,
                                            ctypes.byref(cfg))
        if rc != L.SUCCESS:
            msg = L.last_error()
            if comm:
                L.lib().ccomCommDestroy(comm)
            raise L.CcomError("ccomCommInitRank (rank %d of %d)" % (rank, size), rc, msg)
        st.comm = comm
        _live.add(st)
        st.thread = threading.Thread(target=st.waiter, name="ccom-waiter-%d" % rank, daemon=True)
        st.thread.start()
        if secs is not None:
            st.timeout = secs
            st.store = store
            st.watchdog_thread = threading.Thread(target=st.watchdog, args=(store, size),
                                                  name="ccom-watchdog-%d" % rank, daemon=True)
            st.watchdog_thread.start()
        self._finalizer = weakref.finalize(self, st.shutdown)

    # ----------------------------------------------------------- plumbing

    def _submit(self, name, launch, result, keep, finish=None, p2p=False):
        """Run @launch (the ccom enqueue calls) and return a Work for it.

        Sends and receives are deferred: they are issued together, as one
        ccom group, when one of their Works is looked at (wait,
        is_completed, get_future, ...), before the group's next collective,
        at shutdown, or P2P_FLUSH_S after the first of them if nobody
        looks.  ccom runs a rank's operations in issue order (as NCCL does)
        and torch 2.x issues a CPU batch_isend_irecv one operation at a
        time, so a receive issued before the send its peer waits for would
        otherwise hold that send behind it; in one group they progress
        together, as gloo's independent pairs do."""
        work = Work(name, result, keep, finish)
        st = self._st
        if p2p:
            st.defer(launch, work)
            return work
        with st.lock:
            st.flush_p2p()
            self._issue([(launch, work)], p2p)
        return work

    def _issue(self, batch, p2p):
        self._st.issue(batch, p2p)

    def _start_coalescing(self, *_device):
        """torch 1.13's batch_isend_irecv brackets its operations with
        _start_coalescing() and _end_coalescing(): they are deferred like
        every send and receive (see _submit) and issued at the end."""
        if self._coalescing:
            raise RuntimeError("ccom_torch: batch_isend_irecv inside another one")
        self._coalescing = True

    def _end_coalescing(self, *_reqs_or_device):
        self._coalescing = False
        self._st.flush_p2p()

    @staticmethod
    def _grouped(fn):
        return _grouped(fn)

    def _check_rank(self, r, what):
        if not 0 <= r < self.size():
            raise ValueError("ccom_torch: %s %d is out of range for a group of %d ranks" %
                             (what, r, self.size()))

    # ---------------------------------------------------------- lifecycle

    def shutdown(self):
        """Wait for the queued operations and destroy the communicator (not
        collective).  Also run when the group is garbage collected."""
        self._finalizer()

    def abort(self):
        """ccomCommAbort(): peers get a ccomRemoteError naming this rank."""
        self._st.abort()

    def getBackendName(self):
        return "ccom"

    def name(self):
        return "ccom"

    # --------------------------------------------------------- collectives

    def allreduce(self, tensors, opts=None):
        op = _red_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        bufs = [_Buf(t) for t in tensors]

        def launch(comm):
            for b in bufs:
                _with_op(op, comm, b, lambda o, b=b: L.call(
                    "ccomAllReduce", b.ptr, b.ptr, b.count, b.dt, o, comm, None))
        return self._submit("allreduce", launch, list(tensors), bufs)

    def allreduce_coalesced(self, tensors, opts=None):
        o = dist.AllreduceOptions()
        if opts is not None:
            o.reduceOp = opts.reduceOp
        return self.allreduce(tensors, o)

    def broadcast(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        self._check_rank(root, "broadcast root")
        bufs = [_Buf(t) for t in tensors]

        def launch(comm):
            for b in bufs:
                L.call("ccomBroadcast", b.ptr, b.ptr, b.count, b.dt, root, comm, None)
        return self._submit("broadcast", launch, list(tensors), bufs)

    def reduce(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        self._check_rank(root, "reduce root")
        op = _red_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        bufs = [_Buf(t, output=self.rank() == root) for t in tensors]

        def launch(comm):
            for b in bufs:
                _with_op(op, comm, b, lambda o, b=b: L.call(
                    "ccomReduce", b.ptr, b.ptr, b.count, b.dt, o, root, comm, None))
        return self._submit("reduce", launch, list(tensors), bufs)

    def _gather_shapes(self, outs, inp, what):
        if len(outs) != self.size():
            raise ValueError("ccom_torch: %s needs %d output tensors (one per rank), got %d" %
                             (what, self.size(), len(outs)))
        for o in outs:
            if o.dtype != inp.dtype or o.numel() != inp.numel():
                raise ValueError("ccom_torch: %s: every output tensor must have the input's "
                                 "dtype and size (%s, %d elements), got %s, %d" %
                                 (what, inp.dtype, inp.numel(), o.dtype, o.numel()))

    def allgather(self, output_lists, input_tensors, opts=None):
        if len(output_lists) != len(input_tensors):
            raise ValueError("ccom_torch: allgather needs one output list per input tensor")
        jobs = []
        for outs, inp in zip(output_lists, input_tensors):
            self._gather_shapes(outs, inp, "allgather")
            src = _Buf(inp, output=False)
            flat = torch.empty(inp.numel() * self.size(), dtype=inp.dtype)
            jobs.append((src, _Buf(flat), outs))

        def launch(comm):
            for src, dst, _ in jobs:
                L.call("ccomAllGather", src.ptr, dst.ptr, src.count, src.dt, comm, None)

        def finish():
            for src, dst, outs in jobs:
                for r, o in enumerate(dst.t.chunk(self.size())):
                    outs[r].copy_(o.view(outs[r].shape))
        return self._submit("allgather", launch, [t for outs in output_lists for t in outs],
                            jobs, finish)

    def _allgather_base(self, output, input, opts=None):
        if output.dtype != input.dtype or output.numel() != input.numel() * self.size():
            raise ValueError("ccom_torch: allgather into a tensor needs an output of %d x %d "
                             "elements of %s, got %d of %s" % (self.size(), input.numel(),
                                                               input.dtype, output.numel(),
                                                               output.dtype))
        src, dst = _Buf(input, output=False), _Buf(output)

        def launch(comm):
            L.call("ccomAllGather", src.ptr, dst.ptr, src.count, src.dt, comm, None)
        return self._submit("allgather", launch, [output], [src, dst])

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        """torch's layout: output_lists[rank][i] gets rank's input_list[i]."""
        n = self.size()
        if len(output_lists) != n:
            raise ValueError("ccom_torch: all_gather_coalesced needs %d output lists (one per "
                             "rank), got %d" % (n, len(output_lists)))
        for r, outs in enumerate(output_lists):
            if len(outs) != len(input_list):
                raise ValueError("ccom_torch: all_gather_coalesced: output list %d has %d "
                                 "tensors for %d inputs" % (r, len(outs), len(input_list)))
        per_input = [[output_lists[r][i] for r in range(n)] for i in range(len(input_list))]
        work = self.allgather(per_input, input_list, opts)
        work._name = "allgather_coalesced"
        return work

    def reduce_scatter(self, outputs, input_lists, opts=None):
        op = _red_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        if len(outputs) != len(input_lists):
            raise ValueError("ccom_torch: reduce_scatter needs one input list per output tensor")
        jobs = []
        for out, ins in zip(outputs, input_lists):
            self._gather_shapes(ins, out, "reduce_scatter")
            flat = torch.cat([t.reshape(-1) for t in ins])
            jobs.append((_Buf(flat, output=False), _Buf(out)))

        def launch(comm):
            for src, dst in jobs:
                _with_op(op, comm, dst, lambda o, src=src, dst=dst: L.call(
                    "ccomReduceScatter", src.ptr, dst.ptr, dst.count, dst.dt, o, comm, None))
        return self._submit("reduce_scatter", launch, list(outputs),
                            [b for j in jobs for b in j])

    def _reduce_scatter_base(self, output, input, opts=None):
        op = _red_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        if output.dtype != input.dtype or input.numel() != output.numel() * self.size():
            raise ValueError("ccom_torch: reduce_scatter of a tensor needs an input of %d x %d "
                             "elements of %s, got %d of %s" % (self.size(), output.numel(),
                                                               output.dtype, input.numel(),
                                                               input.dtype))
        src, dst = _Buf(input, output=False), _Buf(output)

        def launch(comm):
            _with_op(op, comm, dst, lambda o: L.call(
                "ccomReduceScatter", src.ptr, dst.ptr, dst.count, dst.dt, o, comm, None))
        return self._submit("reduce_scatter", launch, [output], [src, dst])

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        n = self.size()
        src, dst = _Buf(input, output=False), _Buf(output)
        if src.dt != dst.dt:
            raise ValueError("ccom_torch: alltoall needs input and output of one dtype")
        if not output_split_sizes and not input_split_sizes:
            if input.numel() % n or input.numel() != output.numel():
                raise ValueError("ccom_torch: alltoall without split sizes needs input and output "
                                 "of equal size divisible by %d ranks (got %d and %d elements)" %
                                 (n, input.numel(), output.numel()))

            def launch(comm):
                L.call("ccomAlltoAll", src.ptr, dst.ptr, src.count // n, src.dt, comm, None)
            return self._submit("alltoall", launch, [output], [src, dst])
        ins = self._splits(input, input_split_sizes, "input")
        outs = self._splits(output, output_split_sizes, "output")
        return self._exchange("alltoall", src, dst, ins, outs, [output])

    def _splits(self, t, sizes, what):
        n = self.size()
        rows = t.shape[0] if t.dim() > 0 else 1
        sizes = list(sizes) if sizes else [rows // n] * n
        if len(sizes) != n or sum(sizes) != rows or (not sizes and rows % n):
            raise ValueError("ccom_torch: alltoall %s split sizes %s do not cover the %d rows in "
                             "%d parts" % (what, sizes, rows, n))
        per_row = t.numel() // rows if rows else 0
        off, out = 0, []
        for s in sizes:
            out.append((off * per_row, s * per_row))
            off += s
        return out

    def _exchange(self, name, src, dst, ins, outs, result, finish=None):
        """Rank-to-rank blocks: (offset, count) of src to each peer, of dst from each peer."""
        me = self.rank()
        esz = src.t.element_size()

        def launch(comm):
            so, sc = ins[me]
            do, dc = outs[me]
            if sc != dc:
                raise ValueError("ccom_torch: %s: this rank sends itself %d elements but expects %d"
                                 % (name, sc, dc))
            ctypes.memmove(dst.t.data_ptr() + do * esz, src.t.data_ptr() + so * esz, sc * esz)

            def p2p(c):
                for p in range(self.size()):
                    if p == me:
                        continue
                    o, cnt = ins[p]
                    if cnt:
                        L.call("ccomSend", ctypes.c_void_p(src.t.data_ptr() + o * esz), cnt,
                               src.dt, p, c, None)
                    o, cnt = outs[p]
                    if cnt:
                        L.call("ccomRecv", ctypes.c_void_p(dst.t.data_ptr() + o * esz), cnt,
                               dst.dt, p, c, None)
            self._grouped(p2p)(comm)
        return self._submit(name, launch, result, [src, dst], finish)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        n = self.size()
        if len(output_tensors) != n or len(input_tensors) != n:
            raise ValueError("ccom_torch: alltoall needs %d input and %d output tensors" % (n, n))
        for t in list(input_tensors) + list(output_tensors):
            if t.dtype != input_tensors[0].dtype:
                raise ValueError("ccom_torch: alltoall needs tensors of one dtype")
        src = _Buf(torch.cat([t.reshape(-1) for t in input_tensors]), output=False)
        dst = _Buf(torch.empty(sum(t.numel() for t in output_tensors),
                               dtype=output_tensors[0].dtype))
        ins, outs, a, b = [], [], 0, 0
        for i, o in zip(input_tensors, output_tensors):
            ins.append((a, i.numel()))
            outs.append((b, o.numel()))
            a += i.numel()
            b += o.numel()
        def finish():
            for (o, cnt), t in zip(outs, output_tensors):
                t.copy_(dst.t[o:o + cnt].view(t.shape))
        return self._exchange("alltoall", src, dst, ins, outs, list(output_tensors), finish)

    def gather(self, output_lists, input_tensors, opts=None):
        """ccomGather into one flat buffer on the root, copied out to the
        root's tensors on completion."""
        root = opts.rootRank if opts is not None else 0
        self._check_rank(root, "gather root")
        inp = input_tensors[0]
        me = self.rank()
        outs = output_lists[0] if me == root else []
        if me == root:
            self._gather_shapes(outs, inp, "gather")
        src = _Buf(inp, output=False)
        flat = _Buf(torch.empty(inp.numel() * self.size(), dtype=inp.dtype)) if me == root \
            else None

        def launch(comm):
            L.call("ccomGather", src.ptr, flat.ptr if flat else None, src.count, src.dt, root,
                   comm, None)

        def finish():
            for r, o in enumerate(flat.t.chunk(self.size()) if flat else []):
                outs[r].copy_(o.view(outs[r].shape))
        return self._submit("gather", launch, list(outs), [src, flat], finish)

    def scatter(self, output_tensors, input_lists, opts=None):
        """ccomScatter from the root's inputs, concatenated into one buffer."""
        root = opts.rootRank if opts is not None else 0
        self._check_rank(root, "scatter root")
        out = output_tensors[0]
        me = self.rank()
        ins = input_lists[0] if me == root else []
        if me == root:
            self._gather_shapes(ins, out, "scatter")
        dst = _Buf(out)
        flat = _Buf(torch.cat([t.reshape(-1) for t in ins]), output=False) if me == root \
            else None

        def launch(comm):
            L.call("ccomScatter", flat.ptr if flat else None, dst.ptr, dst.count, dst.dt, root,
                   comm, None)
        return self._submit("scatter", launch, [out], [dst, flat])

    # Every send/recv carries its tag in an 8-byte message of the same ccom
    # group: ccom pairs the messages of two ranks in issue order, so a tag
    # cannot pick a message, but the receiver checks that the tags agree
    # (test_send_recv_with_tag's pattern) and fails the receive naming both
    # otherwise, instead of handing over another message's data silently.

    def send(self, tensors, dst_rank, tag=0):
        self._check_rank(dst_rank, "send destination")
        bufs = [_Buf(t, output=False) for t in tensors]
        hdr = _Buf(torch.tensor([tag], dtype=torch.int64), output=False)

        def launch(comm):
            def p2p(c):
                L.call("ccomSend", hdr.ptr, 1, hdr.dt, dst_rank, c, None)
                for b in bufs:
                    L.call("ccomSend", b.ptr, b.count, b.dt, dst_rank, c, None)
            self._grouped(p2p)(comm)
        return self._submit("send to rank %d" % dst_rank, launch, list(tensors),
                            bufs + [hdr], p2p=True)

    def recv(self, tensors, src_rank, tag=0):
        self._check_rank(src_rank, "recv source")
        bufs = [_Buf(t) for t in tensors]
        hdr = _Buf(torch.tensor([-1], dtype=torch.int64))

        def launch(comm):
            def p2p(c):
                L.call("ccomRecv", hdr.ptr, 1, hdr.dt, src_rank, c, None)
                for b in bufs:
                    L.call("ccomRecv", b.ptr, b.count, b.dt, src_rank, c, None)
            self._grouped(p2p)(comm)

        def finish():
            got = int(hdr.t[0])
            if got != tag:
                raise TagMismatch(
                    "ccom_torch: recv from rank %d with tag %d got rank %d's next message, "
                    "sent with tag %d: ccom pairs the messages of two ranks in issue order, "
                    "so issue sends and receives in the same order on both sides" %
                    (src_rank, tag, src_rank, got))
        return self._submit("recv from rank %d" % src_rank, launch, list(tensors),
                            bufs + [hdr], finish, p2p=True)

    def recv_anysource(self, tensors, tag=0):
        """recv() without src: ccomRecvAny takes the first peer's next send
        (round robin between peers whose sends are there), and the same
        group's ccomRecvAny calls take the rest of that peer's message (its
        tag message first, then its tensors, as send() groups them)."""
        bufs = [_Buf(t) for t in tensors]
        hdr = _Buf(torch.tensor([-1], dtype=torch.int64))
        peers = [ctypes.c_int(-1) for _ in range(len(bufs) + 1)]

        def launch(comm):
            def p2p(c):
                L.call("ccomRecvAny", hdr.ptr, 1, hdr.dt, ctypes.byref(peers[0]), c, None)
                for b, p in zip(bufs, peers[1:]):
                    L.call("ccomRecvAny", b.ptr, b.count, b.dt, ctypes.byref(p), c, None)
            self._grouped(p2p)(comm)

        def finish():
            src = peers[0].value
            if any(p.value != src for p in peers) or not 0 <= src < self.size():
                raise RuntimeError("ccom_torch: recv from any source: the parts came from "
                                   "ranks %s" % [p.value for p in peers])
            work._source = src
            got = int(hdr.t[0])
            if got != tag:
                raise TagMismatch(
                    "ccom_torch: recv from any source with tag %d got rank %d's next message, "
                    "sent with tag %d: ccom matches a rank's sends in issue order, so a tag "
                    "cannot pick one" % (tag, src, got))
        # Not deferred with the other sends and receives: a ccom group may
        # not mix ccomRecvAny with them.  Those before it go first.
        work = Work("recv from any source", list(tensors), bufs + [hdr, peers], finish)
        with self._st.lock:
            self._st.flush_p2p()
            self._issue([(launch, work)], True)
        return work

    def barrier(self, opts=None):
        t = torch.zeros(1, dtype=torch.int32)
        b = _Buf(t)

        def launch(comm):
            L.call("ccomAllReduce", b.ptr, b.ptr, 1, b.dt, L.SUM, comm, None)
        return self._submit("barrier", launch, [t], [b])

    def monitored_barrier(self, timeout=None, wait_all_ranks=False):
        """A barrier through the Store naming the ranks that did not arrive
        within @timeout (watchdog.monitored_barrier)."""
        return monitored_barrier(self, timeout, wait_all_ranks)


def create(store, rank, size, timeout):
    """The creator torch.distributed calls for backend "ccom"."""
    return ProcessGroupCCOM(store, rank, size, timeout)
