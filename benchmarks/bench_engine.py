"""End-to-end engine benchmark: per-group DP count + DP sum with contribution bounding.

Workload (as in the issue and shared/bench-peers): N rows, ~N/10 users contributing 1–19 rows,
1000 public groups, a float value in [0, 100]; at most 5 groups and 2 rows per group per user;
ε = 1 for the whole release (pure DP).  Every library runs in its own process (peak RSS is that
process's), in the same invocation, so ratios are from one run on one machine.

Usage::

    python benchmarks/bench_engine.py [--rows 10000000] [--reps 3]
        [--peers-python .peers/bin/python --peers-script ../shared/bench-peers/bench_e2e.py]

Prints a table: library, median seconds, rows/s, peak RSS (MB), and ratios to dpcert.

Speed target (issue 13 item 7): ``dpcert_backend`` -- the Polars backend's keyed bounding plus
exact count and fixed-point sum, the data work of the release -- against ``polars_unit_group``, a
plain ``group_by([unit, group]).agg(pl.len())``, measured in the same run; the table's last line
prints that ratio (goal ≤ 1.5).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EPS, L0, LINF, NGROUPS = 1.0, 5, 2, 1000


def generate(n: int, path: Path) -> None:
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(2024)
    n_users = max(n // 10, 1)
    counts = rng.integers(1, 20, size=n_users + n_users // 5)
    uid = np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)[:n]
    perm = rng.permutation(n)
    pl.DataFrame({
        "user_id": uid[perm],
        "group": rng.integers(0, NGROUPS, size=n, dtype=np.int64),
        "value": rng.uniform(0.0, 100.0, size=n),
    }).write_parquet(path)


def worker(lib: str, path: str) -> dict[str, float]:
    import polars as pl

    df = pl.read_parquet(path)
    if lib == "dpcert":
        import dpcert as dp  # imported before timing, as the peers' scripts do

        dp.Session  # noqa: B018 - load the engine modules
    t0 = time.perf_counter()
    if lib == "polars_plain":
        out = df.group_by("group").agg(pl.len(), pl.col("value").sum())
        n_out = out.height
    elif lib == "polars_unit_group":
        n_out = df.group_by(["user_id", "group"]).agg(pl.len()).height
    elif lib == "dpcert_backend":
        n_out = _backend_stats(df)
    elif lib == "dpcert":
        sess = dp.Session(df, "user_id", budget=dp.PureDP(EPS))
        res = (sess.query().group_by("group", keys=list(range(NGROUPS)))
               .agg(dp.count(), dp.sum("value", bounds=(0.0, 100.0)))
               .bound_contributions(max_groups=L0, max_rows_per_group=LINF)
               .release(dp.PureDP(EPS)))
        n_out = res.to_polars().height
    else:
        raise SystemExit(f"unknown lib {lib}")
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": dt, "groups": n_out, "peak_rss_mb": rss, "rows": df.height}


def _backend_stats(df: object) -> int:
    """Keyed bounding and exact count + fixed-point sum with the Polars backend."""
    import os
    from fractions import Fraction

    from dpcert.backends.base import BoundSpec, StatSpec
    from dpcert.backends.polars import PolarsBackend

    be = PolarsBackend()
    spec = BoundSpec("user_id", ("group",), L0, LINF, key=os.urandom(16),
                     value_columns=("value",))
    stats = [StatSpec("n", "count"),
             StatSpec("s", "fixed_sum", "value", Fraction(0), Fraction(100), exponent=-20)]
    out = be.group_stats(be.keyed_bound(df, spec), ["group"],
                         [(g,) for g in range(NGROUPS)], stats)
    return out.n_groups


def run_one(cmd: list[str]) -> dict[str, float]:
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e6)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--peers-python", default=None)
    ap.add_argument("--peers-script", default=None)
    ap.add_argument("--peers", default="opendp_polars,pipelinedp_local")
    ap.add_argument("--worker", nargs=2, metavar=("LIB", "DATA"))
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return
    n = int(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / f"rows_{n}.parquet"
        generate(n, data)
        data_mb = data.stat().st_size / 2**20
        libs = ("polars_plain", "polars_unit_group", "dpcert_backend", "dpcert")
        results: dict[str, list[dict[str, float]]] = {lib: [] for lib in libs}
        for _ in range(args.reps):  # interleaved, so load changes hit every library alike
            for lib in libs:
                results[lib].append(run_one([sys.executable, __file__, "--worker", lib,
                                             str(data)]))
        if args.peers_python and args.peers_script:
            for lib in args.peers.split(","):
                runs = []
                for _ in range(args.reps if lib != "pipelinedp_local" or n <= 1e6 else 1):
                    r = run_one([args.peers_python, args.peers_script, lib, str(data)])
                    runs.append({"seconds": r["query_s"], "peak_rss_mb": r.get(
                        "tree_peak_rss_mb", float("nan")), "rows": r["rows"]})
                results[lib] = runs
    base = statistics.median(r["seconds"] for r in results["dpcert"])
    print(f"rows = {n:,}, parquet {data_mb:.0f} MB, in-memory columns {n * 24 / 2**20:.0f} MB")
    print(f"{'library':<18} {'median s':>9} {'rows/s':>12} {'peak RSS MB':>12} {'vs dpcert':>10}")
    for lib, runs in results.items():
        s = statistics.median(r["seconds"] for r in runs)
        rss = max(r["peak_rss_mb"] for r in runs)
        print(f"{lib:<18} {s:>9.3f} {n / s:>12,.0f} {rss:>12.0f} {s / base:>9.2f}x")
    ratios = [b["seconds"] / p["seconds"] for b, p in
              zip(results["dpcert_backend"], results["polars_unit_group"], strict=True)]
    print(f"dpcert_backend / polars_unit_group, per interleaved rep: "
          f"{', '.join(f'{r:.2f}' for r in ratios)} (median {statistics.median(ratios):.2f}; "
          "goal <= 1.5)")


if __name__ == "__main__":
    main()
