# SPDX-License-Identifier: MIT
"""What watches a ProcessGroupCCOM from outside the communicator, through
the group's torch Store: the group's timeout on every operation (a
watchdog thread that names the ranks behind a stuck operation) and
monitored_barrier.  Nothing here is sent per operation: the watchdogs
answer a progress query once a period, and only a timeout asks one.
"""
import ctypes
import datetime
import threading
import time

from . import _lib as L


def _seconds(timeout):
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


class Watchdog:
    """The timeout half of backend._State (its lock, comm, pending Works,
    rank, colls, timeout, store, timed_out and diagnosing)."""

    QUERY = "ccom_torch/progress_query"
    VERDICT = "ccom_torch/timeout_verdict"

    # A store call the watchdog may be in when the group shuts down: a
    # query's round trip, or a diagnosis of at most 3 periods + 1 s.
    JOIN_S = 10.0

    def join_watchdog(self):
        """Wait for the watchdog thread to end (after @stop is set).  A
        daemon thread still inside a store call (torch's C++, the GIL
        released) when the interpreter finalizes is ended by CPython with
        pthread_exit, whose unwinding through those C++ frames aborts the
        process: "terminate called without an active exception", after the
        script had finished (1 torchrun rank in 40 runs here, and one in a
        full check).  Bounded: a store that no longer answers keeps it."""
        t = self.watchdog_thread
        if t is not None and t is not threading.current_thread():
            t.join(self.JOIN_S)

    def _failure(self, rc, msg):
        """The exception of a failed operation.  When a rank's watchdog
        revoked the communicator (its own or a peer's), its diagnosis is
        the message: the peers' libccom only sees the revoke."""
        end = time.monotonic() + 10
        while self.diagnosing and self.timed_out is None and time.monotonic() < end:
            time.sleep(0.01)
        if self.timed_out is not None:
            return self.timed_out
        try:
            if self.store is not None and self.store.add(self.VERDICT + "s", 0):
                msg += " (%s)" % self.store.get(self.VERDICT).decode()
        except Exception:  # no store to ask: libccom's sentence alone
            pass
        return L.CcomError("rank %d: operation" % self.rank, rc, msg)

    def watchdog(self, store, nranks):
        """The group's timeout on every operation.  When the oldest pending
        operation has waited longer, this rank asks every rank for its
        progress through the group's Store (each watchdog answers a query
        within a period), names the ranks that have not issued that
        operation or did not answer, revokes the communicator
        (ccomCommRevoke: the operation and everything queued fail at once,
        the peers' operations fail too) and fails it with that message."""
        period = min(1.0, self.timeout / 4)
        answered = 0
        while True:
            with self.lock:
                if self.stop or not self.comm:
                    return
                late = (self.pending[0] if self.pending and
                        time.monotonic() - self.pending[0].t_issue > self.timeout else None)
                issued = self.colls
            try:
                if late is not None:
                    self._time_out(late, store, nranks, period)
                    return
                # Stores of torch 1.13 have no check(): add(key, 0) reads a
                # counter without blocking (a missing key reads 0).
                answered = self._answer(store, answered, issued)
            except Exception:  # the store went away (shutdown): nothing to answer
                pass
            with self.lock:
                if self.stop or not self.comm:
                    return
                self.lock.wait(period)

    def _answer(self, store, answered, issued):
        """Answer the progress queries numbered above @answered; the last one."""
        q = store.add(self.QUERY, 0)
        for k in range(answered + 1, q + 1):
            store.add("%s/%d/%d" % (self.QUERY, k, self.rank), issued + 1)
        return max(q, answered)

    def _time_out(self, w, store, nranks, period):
        self.diagnosing = True
        behind, silent = [], []
        try:
            q = store.add(self.QUERY, 1)
            store.add("%s/%d/%d" % (self.QUERY, q, self.rank), self.colls + 1)
            want = [r for r in range(nranks) if r != self.rank]
            deadline = time.monotonic() + 3 * period + 1
            answered = q
            while want and time.monotonic() < deadline:
                answered = self._answer(store, answered, self.colls)  # a peer timing out too
                for r in list(want):
                    got = store.add("%s/%d/%d" % (self.QUERY, q, r), 0)
                    if got:
                        want.remove(r)
                        if got - 1 < w.coll_seq:
                            behind.append(r)
                time.sleep(0.02)
            silent = want
        except Exception as e:
            silent = ["? (the store failed: %s)" % e]
        lib = L.lib()
        with self.lock:
            if not self.comm:
                return
            room = 64
            arr, cnt = (ctypes.c_int * room)(), ctypes.c_int(room)
            lib.ccomCommGetFailedRanks(self.comm, arr, ctypes.byref(cnt))
            failed = [arr[i] for i in range(min(cnt.value, room))]
            parts = []
            if behind:
                parts.append("rank(s) %s have not issued %s" % (
                    ", ".join(map(str, behind)),
                    "the collectives before it" if w.p2p else "it"))
            if silent:
                parts.append("rank(s) %s did not answer (dead or stuck outside torch)" %
                             ", ".join(map(str, silent)))
            if failed:
                parts.append("libccom knows rank(s) %s to have failed" %
                             ", ".join(map(str, failed)))
            if not parts:
                parts.append("every rank has issued it, so it is stuck inside the "
                             "communicator (ccomctl job names the rank)")
            self.timed_out = RuntimeError(
                "ccom_torch: rank %d: %s (after collective %d of the group) did not complete "
                "within the process group's timeout (%g s): %s; the communicator is revoked, "
                "create a new group" % (self.rank, w._name, w.coll_seq, self.timeout,
                                        "; ".join(parts)))
            try:
                store.set(self.VERDICT, str(self.timed_out))
                store.add(self.VERDICT + "s", 1)
            except Exception:  # the peers get libccom's sentence alone
                pass
            lib.ccomCommRevoke(self.comm, 0)


def monitored_barrier(pg, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks that did not arrive within @timeout.

    Through the group's torch Store, not the communicator, so that a rank
    stuck elsewhere (or dead) cannot hold the others: each rank but 0
    posts an arrival key; rank 0 waits for them until the deadline and
    posts the verdict, which the others wait for.  Raises RuntimeError
    "Rank(s) ... failed to pass monitoredBarrier in N ms" (torch's
    wording) on every rank that sees it; with @wait_all_ranks False only
    the lowest missing rank is named.  Synchronous; returns None.
    torch 1.13's dist.monitored_barrier() accepts only gloo groups: call
    this method on the group."""
    if timeout is None:
        secs = pg._timeout if pg._timeout is not None else 1800.0
    else:  # here timedelta(0) is no time at all, as in gloo
        secs = max(0.0, timeout.total_seconds() if isinstance(timeout, datetime.timedelta)
                   else float(timeout))
    ms = int(secs * 1000)
    if secs == 0:
        raise RuntimeError("ccom_torch: Rank %d timed out in monitoredBarrier after 0 ms "
                           "(a timeout of 0)" % pg.rank())
    pg._mb_seq += 1
    base = "ccom_torch/monitored_barrier/%d/" % pg._mb_seq
    me, n, store = pg.rank(), pg.size(), pg._store
    deadline = time.monotonic() + secs
    if me != 0:
        store.add(base + str(me), 1)
        store.add(base + "arrived", 1)
        while not store.add(base + "done", 0):
            if time.monotonic() > deadline + 5:  # rank 0 posts at its deadline
                raise RuntimeError("ccom_torch: rank %d: rank 0 did not finish "
                                   "monitoredBarrier in %d ms (+ 5 s)" % (me, ms))
            time.sleep(0.005)
        verdict = store.get(base + "verdict").decode()
        if verdict != "ok":
            raise RuntimeError("ccom_torch: rank %d: %s" % (me, verdict))
        return None
    while store.add(base + "arrived", 0) < n - 1 and time.monotonic() <= deadline:
        time.sleep(0.005)
    missing = [r for r in range(1, n) if not store.add(base + str(r), 0)]
    if not missing:
        store.set(base + "verdict", "ok")
        store.add(base + "done", 1)
        return None
    if not wait_all_ranks:
        missing = missing[:1]
    msg = ("Rank %d failed to pass monitoredBarrier in %d ms" % (missing[0], ms)
           if len(missing) == 1 else
           "Ranks %s failed to pass monitoredBarrier in %d ms" %
           (", ".join(str(r) for r in missing), ms))
    store.set(base + "verdict", msg)
    store.add(base + "done", 1)
    raise RuntimeError("ccom_torch: rank 0: " + msg)
