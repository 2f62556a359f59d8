"""Spark backend benchmark: grouped DP count + sum with contribution bounding, side by side.

Workload (issue 14): Parquet with N rows, ``uid`` in [0, N/10), ``g`` in [0, 1000), ``v`` uniform in
[0, 100]; per group a count and a sum, each unit keeps at most 5 groups and 2 rows per group,
ε = 1 (half each, discrete Laplace from :mod:`dpcert.samplers` on the driver).  In one run, each
in its own process (peak memory is that process tree's, JVM included):

* ``spark_unit_group``: plain Spark ``groupBy(uid, g).count()`` (executed, written to ``noop``);
* ``spark_group``: plain Spark ``groupBy(g)`` count + sum, collected (no DP, no bounding);
* ``dpcert_spark``: :class:`dpcert.backends.spark.SparkBackend` keyed bounding (the default,
  ``bounding="arrow"``: one shuffle by the unit, the NumPy rule on each partition's Arrow
  batches) + exact grouped statistics, noise on the driver;
* ``dpcert_spark_sql``: the same with ``bounding="sql"`` (Spark window functions only);
* ``dpcert_polars``: the same with :class:`dpcert.backends.polars.PolarsBackend`;
* ``tumult``: Tumult Analytics 0.21 on the same Spark (``--tumult-python``, its own venv, via
  ``../shared/bench-peers/bench_tumult_spark.py``).

Spark times exclude the session start and a warm-up query (best of ``--reps`` in one session).

Usage::

    python benchmarks/bench_spark.py [--full] [--rows 1e6,1e7] [--reps 2] [--master local[2]]
        [--tumult-python /path/to/tmlt-venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

G, R, NGROUPS, EPS = 5, 2, 1000, Fraction(1)
EXPONENT = -20
HERE = Path(__file__).resolve().parent
_PEERS = [d / "shared" / "bench-peers" / "bench_tumult_spark.py"
          for d in (HERE.parent.parent, HERE.parent.parent.parent)]
TUMULT_SCRIPT = next((p for p in _PEERS if p.exists()), _PEERS[0])


def generate(n: int, path: Path) -> None:
    """Write ``path`` (a directory of Parquet parts of at most 10^7 rows, seeded)."""
    import numpy as np
    import polars as pl

    path.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2026)
    part = 10**7
    for i, a in enumerate(range(0, n, part)):
        m = min(part, n - a)
        pl.DataFrame({"uid": rng.integers(0, max(n // 10, 1), m, dtype=np.int64),
                      "g": rng.integers(0, NGROUPS, m, dtype=np.int64),
                      "v": rng.uniform(0.0, 100.0, m)}).write_parquet(
                          path / f"part-{i:03d}.parquet")


def _tree_rss() -> int:
    """Resident memory of this process and all its descendants (bytes), from /proc."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            parents[int(d)] = int(fields[1])
            rss[int(d)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    me, total, frontier = os.getpid(), 0, [os.getpid()]
    seen = {me}
    while frontier:
        p = frontier.pop()
        total += rss.get(p, 0)
        for c, pp in parents.items():
            if pp == p and c not in seen:
                seen.add(c)
                frontier.append(c)
    return total


class PeakSampler:
    """Samples the process tree's resident memory every 50 ms."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = False
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self._stop:
            self.peak = max(self.peak, _tree_rss())
            time.sleep(0.05)

    def stop(self) -> int:
        self._stop = True
        return max(self.peak, _tree_rss())


def _noise(values: Any, sensitivity: int) -> Any:
    from dpcert.samplers import discrete_laplace

    scale = Fraction(sensitivity) / (EPS / 2)
    return values + discrete_laplace(scale, len(values))


def _stats_specs() -> list[Any]:
    from dpcert.backends.base import StatSpec

    return [StatSpec("n", "count"),
            StatSpec("s", "fixed_sum", "v", Fraction(0), Fraction(100), exponent=EXPONENT)]


def _release(backend: Any, data: Any) -> int:
    from dpcert.backends.base import BoundSpec

    spec = BoundSpec("uid", ("g",), G, R, key=os.urandom(16), value_columns=("v",))
    st = backend.group_stats(backend.keyed_bound(data, spec), ["g"],
                             [(g,) for g in range(NGROUPS)], _stats_specs())
    _noise(st.values["n"], G * R)
    _noise(st.values["s"], G * R * 100 * 2**-EXPONENT)
    return st.n_groups


def worker(lib: str, path: str, reps: int, master: str) -> dict[str, Any]:
    sampler = PeakSampler()
    times = []
    if lib == "dpcert_polars":
        import polars as pl

        from dpcert.backends.polars import PolarsBackend

        be = PolarsBackend()
        for _ in range(reps):
            t = time.perf_counter()
            _release(be, pl.scan_parquet(os.path.join(path, "*.parquet")))
            times.append(time.perf_counter() - t)
    else:
        from pyspark.sql import functions as F

        from dpcert.backends.spark import SparkBackend, local_session

        spark = local_session(master, **{"spark.driver.memory": "6g",
                                         "spark.sql.shuffle.partitions": "8"})
        spark.range(100).groupBy((F.col("id") % 3).alias("k")).count().collect()  # warm-up
        for _ in range(reps):
            t = time.perf_counter()
            df = spark.read.parquet(path)
            if lib == "spark_unit_group":
                df.groupBy("uid", "g").count().write.format("noop").mode("overwrite").save()
            elif lib == "spark_group":
                df.groupBy("g").agg(F.count(F.lit(1)), F.sum("v")).collect()
            elif lib == "dpcert_spark":
                _release(SparkBackend("arrow"), df)
            elif lib == "dpcert_spark_sql":
                _release(SparkBackend("sql"), df)
            else:
                raise SystemExit(f"unknown lib {lib}")
            times.append(time.perf_counter() - t)
        spark.stop()
    return {"lib": lib, "best_s": min(times), "times": times,
            "peak_rss_mib": sampler.stop() / 2**20}


def run_tumult(python: str, paths: dict[int, Path], master: str) -> dict[int, dict[str, float]]:
    """Tumult's script in its own venv; it reads ``./data/rows_N.parquet`` from its cwd."""
    out: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as cwd:
        (Path(cwd) / "data").mkdir()
        for n, p in paths.items():
            os.symlink(p, Path(cwd) / "data" / f"rows_{n}.parquet")
        env = dict(os.environ, MASTER=master, NS=",".join(str(n) for n in paths),
                   PYSPARK_PYTHON=python)
        proc = subprocess.run([python, str(TUMULT_SCRIPT)], cwd=cwd, env=env,
                              capture_output=True, text=True, check=False)
        for line in proc.stdout.splitlines():
            if line.startswith("rows="):
                f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
                out[int(f["rows"])] = {"best_s": float(f["min"]),
                                       "peak_rss_mib": float(f["peak_tree_rss_MiB"])}
        if not out:
            print(f"tumult failed: {proc.stderr[-2000:]}", file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1e6,1e7")
    ap.add_argument("--full", action="store_true", help="also 1e8 rows")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--tumult-python", default=None)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--worker", nargs=2, metavar=("LIB", "DATA"))
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args.reps, args.master)))
        return
    sizes = [int(float(x)) for x in args.rows.split(",")] + ([10**8] if args.full else [])
    root = Path(args.data_dir or tempfile.mkdtemp(prefix="dpcert-bench-spark-"))
    paths = {}
    for n in sizes:
        paths[n] = root / f"rows_{n}"
        if not paths[n].exists():
            generate(n, paths[n])
    libs = ["spark_group", "spark_unit_group", "dpcert_spark", "dpcert_spark_sql",
            "dpcert_polars"]
    results: dict[int, dict[str, dict[str, Any]]] = {n: {} for n in sizes}
    for n in sizes:
        for lib in libs:
            cmd = [sys.executable, __file__, "--worker", lib, str(paths[n]), "--reps",
                   str(args.reps), "--master", args.master]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
            if proc.returncode or not lines:
                print(f"{lib} at {n} rows failed: {proc.stderr[-1500:]}", file=sys.stderr)
                continue
            results[n][lib] = json.loads(lines[-1])
            r = results[n][lib]  # progress line now: a long run keeps what it measured
            print(f"# {n:,} rows {lib}: best {r['best_s']:.2f} s, peak {r['peak_rss_mib']:.0f} MiB",
                  flush=True)
    if args.tumult_python:
        for n, r in run_tumult(args.tumult_python, paths, args.master).items():
            results[n]["tumult"] = r
    print(f"master={args.master}, reps={args.reps}, load average {os.getloadavg()[0]:.1f}")
    print(f"{'rows':>11} {'engine':<17} {'best s':>8} {'peak MiB':>9} {'vs dpcert_spark':>16}")
    for n in sizes:
        base = results[n].get("dpcert_spark", {}).get("best_s")
        for lib, r in results[n].items():
            ratio = f"{r['best_s'] / base:.2f}x" if base else "-"
            print(f"{n:>11,} {lib:<17} {r['best_s']:>8.2f} {r['peak_rss_mib']:>9.0f} {ratio:>16}")


if __name__ == "__main__":
    main()
