"""Auditor benchmark: dpcert.audit vs DP-Sniper's published table (Bichsel et al. S&P 2021).

Runs the auditor on the DP-Sniper evaluation mechanisms (tests/audit/subjects.py, ε = 0.1) with a
fixed number of samples and prints, per mechanism, our lower bound and time next to DP-Sniper's
published logistic-regression bound and time (eval_sp2021/reference-results/
dd_search_reg_data.log).  One run, one process.  The time-budgeted comparison the issue asks
for (a tenth of DP-Sniper's time, several seeds) is benchmarks/bench_audit_dpsniper.py.

    .venv/bin/python benchmarks/bench_audit.py [--samples N] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

import dpcert as dp
from dpcert.audit import audit

ROOT = Path(__file__).resolve().parents[1]


def _subjects():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("audit_subjects", ROOT / "tests" / "audit" /
                                                  "subjects.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["audit_subjects"] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--samples", type=int, default=4_000_000)
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    subjects = _subjects()
    print(f"{'mechanism':18s} {'claim':>6s} {'dpcert ε≥':>10s} {'DP-Sniper ε≥':>13s} "
          f"{'dpcert s':>9s} {'DP-Sniper s':>12s} {'speed-up':>9s} verdict")
    for s in subjects.SUBJECTS:
        if args.only and s.name not in args.only:
            continue
        f = s.make(np.random.default_rng(args.seed))
        t = time.perf_counter()
        r = audit(f, s.pairs, claimed=dp.PureDP(s.claimed), samples=args.samples,
                  input_size=s.input_size, adjacency=s.adjacency, name=s.name, seed=args.seed)
        secs = time.perf_counter() - t
        ref = s.dpsniper
        ds_eps, ds_sec = (ref[0], ref[2]) if ref else (float("nan"), float("nan"))
        print(f"{s.name:18s} {s.claimed:6.2g} {r.epsilon_lower:10.4f} {ds_eps:13.4f} "
              f"{secs:9.1f} {ds_sec:12.1f} {ds_sec / secs:8.1f}x {r.verdict}", flush=True)


if __name__ == "__main__":
    main()
