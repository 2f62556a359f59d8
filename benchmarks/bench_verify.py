"""Verifier benchmark: every example program, verdict, sizes covered and wall time (issue 17).

    .venv/bin/python benchmarks/bench_verify.py [--timeout 120] [--only svt noisy_max ...]
    .venv/bin/python benchmarks/bench_verify.py --suite [--timeout 10] [--n 3]

No peer runs here (CheckDP / ShadowDP are C/Java toolchains outside this machine); the figures
are dpcert's own, from one run. Target: every target program PROVED for all n in ≤ 10 s.
Figures of 2026-11-23 (shared 2-core machine, ``nice -n 10``): every target PROVED for all n
(noisy max with gap included, 1.5 s), the slowest smart_sum in 4.0 s; all 36 examples in
46.6 s (table in docs/verifier.md).

``--suite`` (issue 46) scores verdicts against the expected ones: every example (expected
verdict from ``examples/programs/README.md``) and every program of
``benchmarks/verify_suite/`` (its ``# expect:`` line) is run once without a size (an
*all-sizes run*: PROVED counts as right only with ``sizes == "all"``) and once with ``--n``
(a *sized run*), and the counts of right / UNKNOWN / wrong verdicts are printed.  A wrong
verdict is PROVED for a program expected REFUTED or the reverse.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "examples" / "programs"
SUITE = Path(__file__).resolve().parent / "verify_suite"
#: examples private up to n = 4 and refuted at n = 5: their sized runs below 5 are PROVED
SIZED_PROVED_BELOW = {"svt_never_halts": 5, "bad_gap_svt": 5}


def expected_verdicts() -> dict[Path, str]:
    """Program file -> expected verdict (examples README table, suite ``# expect:`` lines)."""
    out: dict[Path, str] = {}
    readme = (PROGRAMS / "README.md").read_text(encoding="utf-8")
    for m in re.finditer(r"^\| `(\w+)\.dp` \|.*\| (PROVED|REFUTED|UNKNOWN)[^|]*\|$", readme,
                         re.MULTILINE):
        out[PROGRAMS / f"{m.group(1)}.dp"] = m.group(2)
    for p in sorted(SUITE.glob("*.dp")):
        m2 = re.search(r"^# expect: (PROVED|REFUTED)", p.read_text(encoding="utf-8"), re.MULTILINE)
        if m2:
            out[p] = m2.group(1)
    return out


def score(verdict: str, sizes: object, want: str, sized: bool) -> str:
    """``right``, ``UNKNOWN`` or ``wrong``."""
    if verdict == "UNKNOWN" or want == "UNKNOWN":
        return "right" if verdict == want else "UNKNOWN"
    if verdict != want:
        return "wrong"
    if verdict == "PROVED" and not sized and sizes != "all":
        return "UNKNOWN"  # proved for some sizes only: not the all-sizes verdict asked for
    return "right"


def suite(timeout: float, n: int, only: list[str] | None) -> None:
    """Run every program twice (all sizes, then ``n``) and print the scored counts."""
    from dpcert.verify import parse_program, verify

    counts = {k: {"right": 0, "UNKNOWN": 0, "wrong": 0} for k in ("all-sizes", "sized")}
    slow = {"all-sizes": 0, "sized": 0}
    print(f"{'program':<26} {'expect':<8} {'all sizes':<18} {'n = ' + str(n):<18}")
    for path, want in expected_verdicts().items():
        if only and path.stem not in only:
            continue
        prog = parse_program(path.read_text(encoding="utf-8"), name=path.stem)
        cells = []
        for kind in ("all-sizes", "sized"):
            if kind == "sized" and not prog.size_names:
                cells.append("(no size)")
                continue
            t0 = time.perf_counter()
            try:
                r = verify(path, n=n if kind == "sized" else None, timeout=timeout)
            except Exception as e:  # a crash is scored as a wrong verdict, not fatal
                counts[kind]["wrong"] += 1
                cells.append(f"error {type(e).__name__}")
                continue
            dt = time.perf_counter() - t0
            w = want
            if kind == "sized" and n < SIZED_PROVED_BELOW.get(path.stem, 0):
                w = "PROVED"
            s = score(r.verdict, r.sizes, w, kind == "sized")
            counts[kind][s] += 1
            slow[kind] += dt > 10.0
            cells.append(f"{r.verdict[:7]} {s[:5]:<5} {dt:5.1f}s")
        print(f"{path.stem:<26} {want:<8} {cells[0]:<18} {cells[1]:<18}", flush=True)
    for kind, label in (("sized", "sized runs"), ("all-sizes", "all-sizes runs")):
        c = counts[kind]
        tot = sum(c.values())
        print(f"{label}: {c['right']} of {tot} right, {c['UNKNOWN']} UNKNOWN, {c['wrong']} "
              f"wrong; {slow[kind]} over 10 s")


def main() -> None:
    """Run the verifier on every example and print one row each."""
    from dpcert.verify import verify

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--timeout", type=float, default=None)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--suite", action="store_true", help="score verdicts (issue 46)")
    ap.add_argument("--n", type=int, default=3, help="size of the suite's sized runs")
    args = ap.parse_args()
    if args.suite:
        suite(args.timeout or 10.0, args.n, args.only)
        return
    timeout = args.timeout or 120.0
    names = sorted(p.stem for p in PROGRAMS.glob("*.dp"))
    if args.only:
        names = [n for n in names if n in set(args.only)]
    print(f"{'program':<22} {'verdict':<8} {'sizes':>5} {'seconds':>8}  note")
    total = 0.0
    for name in names:
        t0 = time.perf_counter()
        r = verify(PROGRAMS / f"{name}.dp", timeout=timeout)
        dt = time.perf_counter() - t0
        total += dt
        note = ""
        if r.witness is not None:
            note = f"n = {r.witness.n}, loss {r.witness.loss:.4g} > claim {r.witness.claim:.4g}"
        print(f"{name:<22} {r.verdict:<8} {r.sizes!s:>5} {dt:8.2f}  {note}")
    print(f"{'total':<22} {'':<8} {'':>5} {total:8.2f}")


if __name__ == "__main__":
    main()
