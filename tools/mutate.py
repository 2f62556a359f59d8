"""Curated mutation testing for dpcert's privacy-critical code (issue 20).

Each mutant in :mod:`tools.mutants` is a one-line change shaped like a real privacy bug (a
sensitivity off by a factor, a dropped allowance, a loosened comparison, a forgotten δ, the wrong
rounding direction, the wrong end of a sampler cell, ``d_in`` ignored).  For every mutant the
runner copies ``src/`` to a scratch directory, applies the change there (never in the working
tree), runs the mutant's tests against the copy with a per-mutant timeout, and counts the mutant
*killed* if any test fails.  It prints the score and every survivor, and exits non-zero if the
score is below ``--min-score`` or a mutant no longer applies (its ``find`` text must occur exactly
once in its file, so the list cannot silently rot).

Usage::

    python tools/mutate.py                 # every mutant (``make mutate``)
    python tools/mutate.py --subset ci     # the fast curated subset CI runs
    python tools/mutate.py --only lap-      # mutants whose id starts with "lap-"
    python tools/mutate.py --list          # list mutants without running them
    python tools/mutate.py --killers       # also record WHICH tests kill each mutant (no -x)

With ``--killers`` (``make mutate``, ``tools/map_coverage.py``) every mutant's tests run to the
end with a JUnit XML report, and the runner lists the mutants killed by exactly one test
function (parametrisations of one function count as one test): a privacy map that a single
test guards is one deleted assertion away from being unguarded (issue 20, item 4).

Survivors that are equivalent (no behaviour change) are listed with their argument in
``docs/mutation.md`` and marked ``equivalent=True``; they count as neither killed nor survived.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.mutants import MUTANTS, Mutant  # noqa: E402

#: Default wall-clock limit for one mutant's tests (seconds); a timeout counts as killed.
TIMEOUT_S = 240


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    status: str  # "killed", "survived", "timeout", "stale"
    seconds: float
    detail: str = ""
    #: test functions that failed (``--killers`` only), e.g. ``tests/x.py::test_y``
    killers: tuple[str, ...] = ()


def _apply(text: str, m: Mutant) -> str | None:
    if text.count(m.find) != 1:
        return None
    return text.replace(m.find, m.replace, 1)


class Workspace:
    """A private copy of ``src/`` that one worker mutates and restores."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="dpcert-mutate-"))
        shutil.copytree(ROOT / "src", self.dir / "src",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))

    def baseline(self, tests: list[str], timeout: float, python: str) -> tuple[bool, str]:
        """Run ``tests`` on the unmutated copy: they must pass, or kills mean nothing."""
        env = dict(os.environ, PYTHONPATH=str(self.dir / "src"), PYTHONDONTWRITEBYTECODE="1")
        cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
               "-o", "addopts=--import-mode=importlib", *tests]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout * 4)
        return proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-1000:]

    def run(self, m: Mutant, timeout: float, python: str, killers: bool = False,
            maxfail: int = 0) -> Outcome:
        target = self.dir / "src" / m.path
        original = (ROOT / "src" / m.path).read_text()
        mutated = _apply(original, m)
        if mutated is None:
            n = original.count(m.find)
            return Outcome(m, "stale", 0.0, f"find text occurs {n} times in src/{m.path}")
        env = dict(os.environ, PYTHONPATH=str(self.dir / "src"), PYTHONDONTWRITEBYTECODE="1")
        xml = self.dir / "junit.xml"
        stop = ["--junitxml", str(xml)] if killers else ["-x"]
        if killers and maxfail > 0:
            stop += ["-p", "tools.stop_after"]
            env["DPCERT_STOP_AFTER"] = str(maxfail)
        cmd = [python, "-m", "pytest", *stop, "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
               "-o", "addopts=--import-mode=importlib", *m.tests]
        xml.unlink(missing_ok=True)
        start = time.monotonic()
        target.write_text(mutated)
        try:
            proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return Outcome(m, "timeout", time.monotonic() - start)
        finally:
            target.write_text(original)
        took = time.monotonic() - start
        if proc.returncode == 0:
            return Outcome(m, "survived", took)
        if proc.returncode in (4, 5):  # usage error / no tests collected: a broken mutant entry
            return Outcome(m, "stale", took, proc.stdout[-400:] + proc.stderr[-400:])
        last = [ln for ln in proc.stdout.splitlines() if ln.startswith("FAILED")]
        who = _failed_tests(xml) if killers else ()
        return Outcome(m, "killed", took, last[0] if last else "", who)

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def _failed_tests(xml: Path) -> tuple[str, ...]:
    """Test functions with a failure or error in a JUnit XML report (parameters dropped)."""
    if not xml.exists():
        return ()
    out: set[str] = set()
    for case in ET.parse(xml).getroot().iter("testcase"):
        if case.find("failure") is None and case.find("error") is None:
            continue
        cls = case.get("classname", "")
        name = case.get("name", "").split("[")[0]
        parts = cls.split(".")
        # "tests.frame.test_x" or "tests.frame.test_x.TestClass": path up to the test_ module
        i = max((k for k, p in enumerate(parts) if p.startswith("test_")), default=len(parts) - 1)
        path = "/".join(parts[:i + 1]) + ".py"
        out.add(f"{path}::{'.'.join([*parts[i + 1:], name])}")
    return tuple(sorted(out))


def _broadened(m: Mutant) -> Mutant:
    """``m`` with the test folder mirroring its module's package appended (``tests/<pkg>``)."""
    from dataclasses import replace

    pkg = m.path.split("/")[1]  # "dpcert/<pkg>/..."
    extra = f"tests/{pkg}" if (ROOT / "tests" / pkg).is_dir() else None
    if extra is None or extra in m.tests:
        return m
    return replace(m, tests=(*m.tests, extra))


def _select(args: argparse.Namespace) -> list[Mutant]:
    ms = list(MUTANTS)
    if args.subset == "ci":
        ms = [m for m in ms if m.ci]
    if args.only:
        ms = [m for m in ms if any(m.id.startswith(p) for p in args.only)]
    return ms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--subset", choices=["all", "ci"], default="all")
    ap.add_argument("--only", nargs="*", default=[], help="id prefixes to run")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S)
    ap.add_argument("--min-score", type=float, default=95.0)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--check", action="store_true",
                    help="only check that every mutant still applies (no tests run)")
    ap.add_argument("-v", "--verbose", action="store_true", help="show the test that killed")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the check that the tests pass on unmutated code")
    ap.add_argument("--killers", action="store_true",
                    help="run every mutant's tests to the end and list the mutants killed by "
                         "exactly one test function")
    ap.add_argument("--report", help="write every outcome (and killers) as JSON to this file")
    ap.add_argument("--maxfail", type=int, default=2,
                    help="with --killers: stop a mutant's tests once this many distinct test "
                         "functions have failed (tools/stop_after.py; 0: run to the end).  The "
                         "default 2 keeps 'killed by exactly one test function' exact")
    ap.add_argument("--broaden", action="store_true",
                    help="also run the tests of the mutated module's package (tests/<pkg>/): "
                         "with --killers, finds killers outside the mutant's own test files")
    args = ap.parse_args(argv)
    ids = [m.id for m in MUTANTS]
    if len(set(ids)) != len(ids):
        print("duplicate mutant ids", file=sys.stderr)
        return 2
    chosen = _select(args)
    if args.broaden:
        chosen = [_broadened(m) for m in chosen]
    if args.list:
        for m in chosen:
            print(f"{m.id:28} {m.kind:22} src/{m.path}: {m.note}")
        return 0
    if args.check:
        bad = [m for m in chosen if _apply((ROOT / "src" / m.path).read_text(), m) is None]
        for m in bad:
            print(f"STALE    {m.id} src/{m.path}")
        print(f"{len(chosen) - len(bad)}/{len(chosen)} mutants apply")
        return 1 if bad else 0
    active = [m for m in chosen if not m.equivalent]
    spaces: list[Workspace] = []
    local = threading.local()
    lock = threading.Lock()

    def work(m: Mutant) -> Outcome:
        if not hasattr(local, "ws"):
            local.ws = Workspace()
            with lock:
                spaces.append(local.ws)
        out: Outcome = local.ws.run(m, args.timeout, args.python, args.killers, args.maxfail)
        with lock:
            extra = f"  <- {out.detail}" if args.verbose and out.detail else ""
            if args.killers and out.status == "killed":
                extra += f"  [{len(out.killers)} test(s)]"
                if len(out.killers) == 1:
                    extra += f" SINGLE {out.killers[0]}"
            print(f"  {out.status:8} {out.seconds:6.1f}s  {m.id}{extra}", flush=True)
        return out

    if not args.no_baseline:
        tests = sorted({t for m in active for t in m.tests})
        ws0 = Workspace()
        try:
            ok, log = ws0.baseline(tests, args.timeout, args.python)
        finally:
            ws0.close()
        if not ok:
            print("baseline FAILED: the mutants' tests do not pass on unmutated code\n" + log)
            return 2
        print(f"baseline: {len(tests)} test files pass on unmutated code")
    print(f"running {len(active)} mutants ({len(chosen) - len(active)} marked equivalent), "
          f"{args.jobs} jobs")
    try:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            outcomes = list(pool.map(work, active))
    finally:
        for ws in spaces:
            ws.close()
    killed = [o for o in outcomes if o.status in ("killed", "timeout")]
    survived = [o for o in outcomes if o.status == "survived"]
    stale = [o for o in outcomes if o.status == "stale"]
    scored = len(killed) + len(survived)
    score = 100.0 * len(killed) / scored if scored else 100.0
    print(f"\nmutation score: {len(killed)}/{scored} killed = {score:.1f}%"
          f" ({sum(o.status == 'timeout' for o in outcomes)} by timeout)")
    for o in survived:
        print(f"SURVIVED {o.mutant.id} [{o.mutant.kind}] src/{o.mutant.path}: {o.mutant.note}")
    for o in stale:
        print(f"STALE    {o.mutant.id} src/{o.mutant.path}: {o.detail}")
    if args.killers:
        single = [o for o in killed if o.status == "killed" and len(o.killers) == 1]
        print(f"\nkilled by exactly one test function: {len(single)} of {len(killed)}")
        for o in single:
            print(f"SINGLE   {o.mutant.id} src/{o.mutant.path}: {o.killers[0]}")
    if args.report:
        import json

        Path(args.report).write_text(json.dumps(
            {"score": score, "killed": len(killed), "scored": scored,
             "outcomes": [{"id": o.mutant.id, "path": o.mutant.path, "status": o.status,
                           "seconds": round(o.seconds, 1), "killers": list(o.killers)}
                          for o in outcomes]}, indent=1), encoding="utf-8")
    return 1 if stale or score < args.min_score else 0


if __name__ == "__main__":
    raise SystemExit(main())
