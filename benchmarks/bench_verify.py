"""Verifier benchmark: every example program, verdict, sizes covered and wall time (issue 17).

    .venv/bin/python benchmarks/bench_verify.py [--timeout 120] [--only svt noisy_max ...]

No peer runs here (CheckDP / ShadowDP are C/Java toolchains outside this machine); the figures
are dpcert's own, from one run. Target: every target program PROVED for all n in ≤ 10 s.
Figures of 2026-11-23 (shared 2-core machine, ``nice -n 10``): every target PROVED for all n
(noisy max with gap included, 1.5 s), the slowest smart_sum in 4.0 s; all 36 examples in
46.6 s (table in docs/verifier.md).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parents[1] / "examples" / "programs"


def main() -> None:
    """Run the verifier on every example and print one row each."""
    from dpcert.verify import verify

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    names = sorted(p.stem for p in PROGRAMS.glob("*.dp"))
    if args.only:
        names = [n for n in names if n in set(args.only)]
    print(f"{'program':<22} {'verdict':<8} {'sizes':>5} {'seconds':>8}  note")
    total = 0.0
    for name in names:
        t0 = time.perf_counter()
        r = verify(PROGRAMS / f"{name}.dp", timeout=args.timeout)
        dt = time.perf_counter() - t0
        total += dt
        note = ""
        if r.witness is not None:
            note = f"n = {r.witness.n}, loss {r.witness.loss:.4g} > claim {r.witness.claim:.4g}"
        print(f"{name:<22} {r.verdict:<8} {r.sizes!s:>5} {dt:8.2f}  {note}")
    print(f"{'total':<22} {'':<8} {'':>5} {total:8.2f}")


if __name__ == "__main__":
    main()
