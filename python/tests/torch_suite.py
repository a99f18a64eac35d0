# SPDX-License-Identifier: MIT
"""PyTorch's own distributed test suite on the ccom backend, compared with gloo.

    LD_LIBRARY_PATH=build/lib /usr/bin/python3 python/tests/torch_suite.py [options]

Runs torch.testing._internal.distributed.distributed_test's
DistributedTest._DistTestBase the way torch's test_distributed_spawn.py
does (each test in fresh processes, file:// init; forked unless --spawn), for
backend gloo with torch's stock feature sets and for backend ccom added to
the sets it supports ("plugin", "ddp", "subgroup", "gpu": the suite gates
generic CPU tests, object collectives among them, on these names), at each
world size.  By default ccom runs the very tests the suite selects for gloo
(--select).  Then every test that passed on gloo must pass on ccom, or be
in torch_suite_known.txt with its reason.

  --world N        world sizes (default 2 and 3)
  --only REGEX     run only the tests whose name matches (both backends)
  --keep DIR       save each run's outcomes in DIR (BACKEND-WORLD.json) and
                   reuse a gloo run saved there
  --select S       gloo (default): ccom runs the tests the suite selects for
                   gloo (it selects many by backend name); features: those
                   it selects for ccom's feature sets
  --spawn          start each test's ranks with spawn (as test_distributed_spawn
                   does; the default fork is several times faster)
  --repeat N       run the selected tests N times on ccom only, each must pass
                   every time (gloo is not run)
  --backend B --world N --json F   one run (what the driver starts)

The last line is "P passed, F failed" (tools/check-summary): passed counts
each (world, test) pair that gloo and ccom agree on (or ccom passed in a
--repeat run), failed each one ccom lost.
torch's harness imports the expecttest module for its TestCase base
class; Debian 12 does not package it, so when it is missing suite_shim/
(a unittest.TestCase and ACCEPT = False) is put on the path.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
try:
    import expecttest  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(HERE, "suite_shim"))

KNOWN = os.path.join(HERE, "torch_suite_known.txt")

if "BACKEND" in os.environ and "WORLD_SIZE" in os.environ:
    # One run (also what every spawned rank imports as __mp_main__).
    import torch.multiprocessing
    import ccom_torch  # noqa: F401  registers "ccom"
    from torch.testing._internal.common_distributed import DistTestCases
    if os.environ["BACKEND"] == "ccom":
        for feature in ("plugin", "ddp", "subgroup", "gpu"):
            DistTestCases.backend_feature.setdefault(feature, set()).add("ccom")
    # TestDistBackend._run turns on DDP's ReplicatedTensor prototype, whose
    # import (torch.distributed._shard) fails on Python 3.11 with Debian's
    # torch 1.13 (a dataclass field with a mutable default), which fails
    # every DDP test on every backend; keep DDP on its default path, the one
    # users run.  (torch 2.x has no such prototype.)
    try:
        import torch.nn.parallel._replicated_tensor_ddp_utils as _rt
        _set_replicated = _rt._set_ddp_with_replicated_tensor
        _rt._set_ddp_with_replicated_tensor = lambda value: _set_replicated(False)
    except (ImportError, AttributeError):
        pass
    # The suite decides which tests run for a backend when it is imported
    # (decorators read BACKEND), many by name ("requires backend gloo",
    # "get_future is only supported on mpi, nccl and gloo").  By default
    # ccom runs the tests selected for gloo: the module is imported with
    # BACKEND=gloo, then its BACKEND (what init_process_group gets and
    # what test bodies check) and the environment say ccom again.  With
    # CCOM_SUITE_SELECT=features, ccom's own selection (the feature sets).
    _real = os.environ["BACKEND"]
    if _real == "ccom" and os.environ.get("CCOM_SUITE_SELECT", "gloo") == "gloo":
        os.environ["BACKEND"] = "gloo"
    from torch.testing._internal.distributed import distributed_test as _dt
    from torch.testing._internal.distributed.distributed_test import (
        DistributedTest, TestDistBackend)
    os.environ["BACKEND"] = _dt.BACKEND = _real

    class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
        def setUp(self):
            super().setUp()
            # fork (torch's old test_distributed_fork) unless --spawn: each
            # spawned rank imports torch again, 3-4 s per test on 2 CPUs.
            if os.environ.get("CCOM_SUITE_START") == "spawn":
                self._spawn_processes()
            else:
                self._start_processes(torch.multiprocessing.get_context("fork").Process)


def read_list(path):
    """name -> reason of a list file ("name  reason" lines, # comments)."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, _, why = line.partition(" ")
                out[name] = why.strip()
    return out


class Recorder(unittest.TextTestResult):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.outcome = {}
        self.t0 = {}

    def startTest(self, test):
        self.t0[test.id()] = time.monotonic()
        super().startTest(test)

    def _set(self, test, what, detail=""):
        name = test.id().split(".")[-1]
        self.outcome[name] = {"result": what, "detail": detail[-4000:],
                              "seconds": round(time.monotonic() - self.t0.get(test.id(), 0), 1)}

    def addSuccess(self, test):
        super().addSuccess(test)
        self._set(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._set(test, "failed", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._set(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._set(test, "skipped", str(reason))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._set(test, "passed")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._set(test, "failed", "unexpected success")


def one_run(args):
    loader = unittest.TestLoader()
    names = loader.getTestCaseNames(TestDistBackendWithSpawn)
    if args.only:
        names = [n for n in names if re.search(args.only, n)]
    if args.names:
        wanted = set(read_list(args.names))
        names = [n for n in names if n in wanted]
    suite = unittest.TestSuite(TestDistBackendWithSpawn(n) for n in names)
    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=Recorder)
    res = runner.run(suite)
    with open(args.json, "w") as f:
        json.dump(res.outcome, f, indent=1, sort_keys=True)
    return 0


def run_backend(backend, world, only=None, names=None, keep=None):
    """Run the suite for one backend and world size in a child; outcomes.
    With @keep (a directory) the outcomes are also saved there as
    BACKEND-WORLD.json, and a gloo run found there is reused."""
    saved = os.path.join(keep, "%s-%d.json" % (backend, world)) if keep else None
    if saved and backend == "gloo" and os.path.exists(saved):
        with open(saved) as f:
            out = json.load(f)
        print("| %s, %d ranks | %s | (reused %s)" % (backend, world, " | ".join(
            str(sum(1 for v in out.values() if v["result"] == k))
            for k in ("passed", "failed", "error", "skipped")), saved), flush=True)
        return out
    fd, path = tempfile.mkstemp(prefix="ccom-suite-%s-%d-" % (backend, world), suffix=".json")
    os.close(fd)
    env = dict(os.environ, BACKEND=backend, WORLD_SIZE=str(world))
    env.setdefault("CCOM_OP_TIMEOUT", "60")
    cmd = [sys.executable, os.path.abspath(__file__), "--backend", backend, "--world",
           str(world), "--json", path]
    if only:
        cmd += ["--only", only]
    if names:
        cmd += ["--names", names]
    t0 = time.monotonic()
    log = path[:-5] + ".log"
    with open(log, "w") as lf:
        subprocess.run(cmd, env=env, stdout=lf, stderr=subprocess.STDOUT)
    try:
        with open(path) as f:
            out = json.load(f)
    except (OSError, ValueError):
        out = {}
    os.unlink(path)
    if saved and out:
        with open(saved, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
    counts = {k: sum(1 for v in out.values() if v["result"] == k)
              for k in ("passed", "failed", "error", "skipped")}
    if out and not counts["failed"] and not counts["error"]:
        os.unlink(log)
        log = "removed: nothing failed"
    print("| %s, %d ranks | %d | %d | %d | %d | (%.0f s, log %s)" % (
        backend, world, counts["passed"], counts["failed"], counts["error"], counts["skipped"],
        time.monotonic() - t0, log), flush=True)
    return out


def compare(world, gloo, ccom, known):
    agree = lost = 0
    for name in sorted(gloo):
        if gloo[name]["result"] != "passed":
            continue
        got = ccom.get(name, {"result": "missing", "detail": "not run"})
        if got["result"] == "passed":
            agree += 1
        elif name in known:
            print("  known  %d ranks %s: %s (%s)" % (world, name, got["result"], known[name]))
        else:
            lost += 1
            print("FAIL %d ranks %s: passes on gloo, %s on ccom:\n%s" % (
                world, name, got["result"], got["detail"][-1500:]))
    return agree, lost


def main():
    sys.stdout.reconfigure(line_buffering=True)
    ap = argparse.ArgumentParser()
    ap.add_argument("--world", type=int, action="append")
    ap.add_argument("--backend")
    ap.add_argument("--json")
    ap.add_argument("--only")
    ap.add_argument("--names")
    ap.add_argument("--spawn", action="store_true", help="start ranks with spawn, not fork")
    ap.add_argument("--select", choices=("gloo", "features"), default="gloo",
                    help="ccom runs the tests selected for gloo (default) or for its features")
    ap.add_argument("--repeat", type=int, default=0)
    ap.add_argument("--keep", help="save each run's outcomes here; reuse gloo's")
    ap.add_argument("--backends", default="gloo,ccom", help="gloo,ccom (compare) or one")
    ap.add_argument("--known", default=KNOWN,
                    help="the reviewed list of tests allowed to fail on ccom only "
                    "(torch_suite_known2.txt for torch 2.x)")
    args = ap.parse_args()
    if args.backend:
        return one_run(args)
    if args.spawn:
        os.environ["CCOM_SUITE_START"] = "spawn"
    os.environ["CCOM_SUITE_SELECT"] = args.select
    known = read_list(args.known)
    names = None
    P = F = 0
    print("| run | passed | failed | error | skipped |")
    print("|---|---|---|---|---|")
    for world in args.world or [2, 3]:
        if args.repeat:
            for i in range(args.repeat):
                ccom = run_backend("ccom", world, args.only, names)
                ran = [v for v in ccom.values() if v["result"] != "skipped"]
                bad = [n for n, v in ccom.items() if v["result"] in ("failed", "error")]
                for n in bad:
                    print("FAIL %d ranks rerun %d %s:\n%s" % (world, i + 1, n,
                                                             ccom[n]["detail"][-1500:]))
                P, F = P + len(ran) - len(bad), F + len(bad) + (0 if ccom else 1)
            continue
        if args.backends != "gloo,ccom":
            run_backend(args.backends, world, args.only, names, args.keep)
            continue
        gloo = run_backend("gloo", world, args.only, names, args.keep)
        ccom = run_backend("ccom", world, args.only, names, args.keep)
        if not gloo or not ccom:
            print("FAIL %d ranks: a run produced no results" % world)
            F += 1
            continue
        a, lost = compare(world, gloo, ccom, known)
        extra = sorted(n for n, v in ccom.items()
                       if v["result"] == "passed" and gloo.get(n, {}).get("result") != "passed")
        if extra:
            print("  %d ranks: %d tests pass on ccom only: %s" % (world, len(extra),
                                                                 " ".join(extra)))
        P, F = P + a, F + lost
    print("torch suite: %d passed, %d failed" % (P, F))
    print("%d passed, %d failed" % (P, F))
    return 0 if F == 0 and P > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
