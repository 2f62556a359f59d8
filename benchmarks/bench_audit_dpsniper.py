"""dpcert.audit against DP-Sniper (Bichsel et al., S&P 2021) on every mechanism of its evaluation.

One command prints, per mechanism, dpcert's lower bound on ε and wall time next to DP-Sniper's
published bound and run time (its logistic-regression run, eval_sp2021/reference-results of
github.com/eth-sri/dp-sniper; the naive NumPy float Laplace from its floating-point run), with
the time budget the issue sets: a tenth of DP-Sniper's search time.  Mechanisms and parameters
are DP-Sniper's (tests/audit/subjects.py).  Confidence defaults to DP-Sniper's 0.9.

    .venv/bin/python benchmarks/bench_audit_dpsniper.py [--seeds 1 2 3] [--only SVT3 ...]
        [--confidence 0.9] [--budget-fraction 0.1] [--workers W] [--json out.json]

Each seed seeds the mechanisms' own NumPy generators (SFC64, faster than the default PCG64);
the auditor's search is deterministic.  The estimation is drawn by ``--workers`` processes,
by default one per core, as DP-Sniper's published runs used (its experiments' ``--processes``
defaults to ``multiprocessing.cpu_count()``); worker ``w`` reseeds the subject's generator
with ``SFC64([seed, w])``.
``draws/input`` is the estimation phase's draws per input of each chosen pair (the ``n`` of the
final bounds), per seed.  The last line sums up a run for comparisons (see :func:`summary`);
the time-budgeted searches vary from run to run, so compare runs on several seeds (any seeds:
``--seeds 1 2 3 101 102 103``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import dpcert as dp
from dpcert.audit import audit

ROOT = Path(__file__).resolve().parents[1]


def subjects() -> Any:
    """tests/audit/subjects.py, loaded as a module."""
    spec = importlib.util.spec_from_file_location("audit_subjects", ROOT / "tests" / "audit" /
                                                  "subjects.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["audit_subjects"] = mod
    spec.loader.exec_module(mod)
    return mod


def run_one(s: Any, seed: int, confidence: float, fraction: float, cap: float,
            workers: int = 1) -> dict[str, Any]:
    """Audit subject ``s`` within ``fraction`` of DP-Sniper's search time (at most ``cap``)."""
    ref = s.dpsniper
    budget = min(fraction * ref[1] if ref else 10.0, cap)
    # SFC64: the subjects' exponential draws cost 16 ns against PCG64's 29 ns on the 2-core
    # CI machine (a test subject's noise source, never dpcert's; same distributions)
    rng = np.random.Generator(np.random.SFC64(seed))
    f = s.make(rng)

    def reseed(w: int) -> None:   # worker w's own stream
        rng.bit_generator.state = np.random.SFC64([seed, w]).state

    t = time.perf_counter()
    r = audit(f, s.pairs, claimed=dp.PureDP(s.claimed), seconds=budget, confidence=confidence,
              input_size=s.input_size, adjacency=s.adjacency, name=s.name, seed=seed,
              workers=workers, worker_init=reseed)
    secs = time.perf_counter() - t
    return {"mechanism": s.name, "seed": seed, "claimed": s.claimed, "private": s.private,
            "epsilon_lower": r.epsilon_lower, "seconds": secs, "budget": budget,
            "samples": r.samples, "verdict": r.verdict,
            "estimate_draws": getattr(r, "estimate_draws", r.witness.n if r.witness else 0),
            "dpsniper_epsilon": ref[0] if ref else None,
            "dpsniper_seconds": ref[1] if ref else None,
            "witness": r.witness.describe() if r.witness else r.explanation}


def summary(rows: list[dict[str, Any]], subs: Any) -> str:
    """One line for comparing runs: how many mechanisms are at or above DP-Sniper on every
    seed, and the sum over the private ones (finite ε: no bound can run off) of their mean
    bound over the seeds, the same figure DP-Sniper's published bounds give."""
    private = {s.name for s in subs if s.private}
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["mechanism"], []).append(r)
    ref = [n for n, rs in by.items() if rs[0]["dpsniper_epsilon"] is not None]
    ge = sum(all(r["epsilon_lower"] >= r["dpsniper_epsilon"] for r in by[n]) for n in ref)
    mine = [n for n in ref if n in private]
    ours = sum(sum(r["epsilon_lower"] for r in by[n]) / len(by[n]) for n in mine)
    theirs = sum(by[n][0]["dpsniper_epsilon"] for n in mine)
    return (f"at or above DP-Sniper on every seed: {ge} of {len(ref)}; private mechanisms "
            f"({len(mine)}): sum of mean bounds {ours:.4f} (DP-Sniper {theirs:.4f})")


def cpu_model() -> str:
    """The processor's model name (Linux ``/proc/cpuinfo``; else ``platform.processor()``):
    the draws an audit gets in its budget, and so the bounds, depend on it (a 2-core AMD EPYC
    drew about 7× as many as the 2-core machine of rounds 1-13 in
    benchmarks/results/auditor_history.md)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown processor"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="*", default=[1])
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--confidence", type=float, default=0.9)
    ap.add_argument("--budget-fraction", type=float, default=0.1,
                    help="time budget per mechanism as a fraction of DP-Sniper's search time")
    ap.add_argument("--max-seconds", type=float, default=30.0,
                    help="cap on any one audit's budget")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="processes drawing each audit's estimation (default: one per core)")
    ap.add_argument("--json", type=Path, default=None, help="also write all rows as JSON")
    args = ap.parse_args()
    rows = []
    print(f"confidence {args.confidence:g}; budget {args.budget_fraction:g} × DP-Sniper's "
          f"search time; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          f"({cpu_model()}); "
          f"{args.workers} worker process(es)")
    print(f"{'mechanism':19s} {'claim':>6s} {'DP-Sniper ε≥':>12s} {'dpcert ε≥ (seeds)':>26s} "
          f"{'≥?':>3s} {'DP-Sniper s':>11s} {'dpcert s':>9s} {'draws/input':>18s} verdict")
    for s in subjects().SUBJECTS:
        if args.only and s.name not in args.only:
            continue
        res = [run_one(s, seed, args.confidence, args.budget_fraction, args.max_seconds,
                       args.workers) for seed in args.seeds]
        rows += res
        lows = [r["epsilon_lower"] for r in res]
        ref = s.dpsniper
        ok = "-" if ref is None else ("yes" if min(lows) >= ref[0] else "NO")
        eps = " ".join(f"{v:.4f}" for v in lows)
        verdicts = ",".join(sorted({r["verdict"] for r in res}))
        draws = " ".join(f"{r['estimate_draws'] / 1e6:.1f}M" for r in res)
        print(f"{s.name:19s} {s.claimed:6.3g} {ref[0] if ref else float('nan'):12.4f} "
              f"{eps:>26s} {ok:>3s} {ref[1] if ref else float('nan'):11.1f} "
              f"{max(r['seconds'] for r in res):9.1f} "
              f"{draws:>18s} "
              f"{verdicts}", flush=True)
    print(summary(rows, subjects().SUBJECTS))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
