"""A bounded grouped release against the engine's own ``GROUP BY (unit, group)``, side by side.

Issue 41 item 4: a grouped DP count + DP sum with contribution bounding must run within 1.5× of
the engine's plain group-by over (unit, group) -- the group-by that bounding itself needs --
measured the way a user meets it: in one warm process (a notebook), each side after a warm-up
run, best of several alternating runs; and its peak memory must be at most the plain
group-by's.

Workload (as :mod:`bench_engine`): N rows, about N/10 users with 1-19 rows each, 1000 groups, a
float value in [0, 100]; at most 5 groups and 2 rows per group per user.

Sides (each a function of the loaded data, timed from the query to the released table):

* ``polars_unit_group`` -- ``df.group_by([user_id, group]).agg(pl.len())``, the baseline;
* ``dpcert_public``   -- ``Session(df).query()...bound_contributions(5, 2).release(PureDP(1))``
  with the 1000 public group keys;
* ``dpcert_private``  -- the same with private keys (DP partition selection, ApproxDP);
* ``duckdb_unit_group``, ``dpcert_duckdb_public``, ``dpcert_duckdb_private`` -- the DuckDB
  backend against DuckDB's own ``GROUP BY user_id, "group"``: run only when
  :mod:`dpcert.backends.duckdb` exists (``DUCKDB SIDE`` below).

Time: one child process loads the data once, runs every side once (warm-up), then ``--reps``
rounds of all sides in turn; each side's figure is its best round (wall clock; its CPU time is
shown too, as the machine may be shared).  Memory: one child process per side runs it once and
reports its peak RSS (``getrusage``'s high-water mark, which covers Polars' and DuckDB's native
allocations) next to its RSS after loading the data.

Usage::

    python benchmarks/bench_groupby.py [--rows 1e7 1e8] [--reps 5] [--out PATH]

Prints a table per size and the ratios to the baseline; writes ``benchmarks/results/groupby.md``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_engine import generate  # noqa: E402 - the shared workload

NGROUPS, L0, LINF = 1000, 5, 2
GOAL = 1.5


def has_duckdb_backend() -> bool:
    """Does this dpcert have the DuckDB backend (and DuckDB)?"""
    try:
        return (importlib.util.find_spec("duckdb") is not None
                and importlib.util.find_spec("dpcert.backends.duckdb") is not None)
    except ModuleNotFoundError:
        return False


def sides() -> list[str]:
    out = ["polars_unit_group", "dpcert_public", "dpcert_private"]
    if has_duckdb_backend():
        out += ["duckdb_unit_group", "dpcert_duckdb_public", "dpcert_duckdb_private"]
    return out


#: Each dpcert side against the baseline of its engine.
BASELINE = {"dpcert_public": "polars_unit_group", "dpcert_private": "polars_unit_group",
            "dpcert_duckdb_public": "duckdb_unit_group",
            "dpcert_duckdb_private": "duckdb_unit_group"}


def _release(data: Any, private: bool) -> int:
    """The bounded grouped count + sum through the public API; returns the released rows."""
    import dpcert as dp

    if private:
        sess = dp.Session(data, "user_id", budget=dp.ApproxDP(1e6, 0.5))
        keys: Any = "private"
        budget: Any = dp.ApproxDP(1.0, 1e-6)
    else:
        sess = dp.Session(data, "user_id", budget=dp.PureDP(1e6))
        keys, budget = list(range(NGROUPS)), dp.PureDP(1.0)
    res = (sess.query().group_by("group", keys=keys)
           .agg(dp.count(), dp.sum("value", bounds=(0.0, 100.0)))
           .bound_contributions(max_groups=L0, max_rows_per_group=LINF)
           .release(budget))
    return int(res.to_polars().height)


def make_sides(path: str, names: list[str]) -> dict[str, Callable[[], int]]:
    """Load the data once (outside every timing); one callable per side."""
    import polars as pl

    import dpcert  # noqa: F401 - imported before timing, as a notebook would have it

    df = pl.read_parquet(path)
    fns: dict[str, Callable[[], int]] = {
        "polars_unit_group": lambda: df.group_by(["user_id", "group"]).agg(pl.len()).height,
        "dpcert_public": lambda: _release(df, private=False),
        "dpcert_private": lambda: _release(df, private=True),
    }
    if any(n.startswith(("duckdb", "dpcert_duckdb")) for n in names):
        # ---- DUCKDB SIDE: DuckDB's own group-by and the DuckDB backend (dpcert.backends.duckdb)
        import duckdb

        con = duckdb.connect()
        con.execute("CREATE TABLE t AS SELECT * FROM read_parquet(?)", [path])
        plain = 'SELECT user_id, "group", count(*) AS n FROM t GROUP BY user_id, "group"'
        fns["duckdb_unit_group"] = lambda: con.sql(plain).fetch_arrow_table().num_rows
        fns["dpcert_duckdb_public"] = lambda: _release((con, "t"), private=False)
        fns["dpcert_duckdb_private"] = lambda: _release((con, "t"), private=True)
    return {n: fns[n] for n in names}


def time_worker(path: str, names: list[str], reps: int) -> dict[str, Any]:
    """One warm process: a warm-up run of each side, then ``reps`` alternating rounds."""
    fns = make_sides(path, names)
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    rows: dict[str, int] = {}
    for n, f in fns.items():
        rows[n] = f()
    for _ in range(reps):
        for n, f in fns.items():
            t, c = time.perf_counter(), time.process_time()
            f()
            wall[n].append(time.perf_counter() - t)
            cpu[n].append(time.process_time() - c)
    return {"wall": wall, "cpu": cpu, "out_rows": rows}


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def mem_worker(path: str, name: str) -> dict[str, float]:
    """Peak RSS of one run of one side, in a fresh process (and the RSS after loading)."""
    fn = make_sides(path, [name])[name]
    loaded = _rss_mb()
    fn()
    return {"loaded_mb": loaded, "peak_mb": _rss_mb()}


def _child(args: list[str]) -> Any:
    """A worker's JSON answer, or None when it failed (a kill with no message is most likely
    the kernel's out-of-memory killer)."""
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                         check=False)
    if out.returncode:
        print(f"worker {args[:1] + args[2:]} failed (exit {out.returncode}): "
              f"{out.stderr[-500:] or 'no message: killed, likely out of memory'}", flush=True)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_size(n: int, reps: int, names: list[str]) -> dict[str, Any]:
    """Timing in one warm process (or, if that process dies, one per side, marked so) and
    peak memory per side."""
    failed = {"peak_mb": float("nan"), "loaded_mb": float("nan")}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / f"rows_{n}.parquet"
        generate(n, data)
        timing = _child(["--time-worker", str(data), ",".join(names), str(reps)])
        split = timing is None
        if split:
            timing = {"wall": {}, "cpu": {}, "out_rows": {}}
            for s in names:
                one = _child(["--time-worker", str(data), s, str(reps)])
                for k in timing:
                    timing[k][s] = one[k][s] if one else ([float("nan")] if k != "out_rows"
                                                          else 0)
        memory = {s: _child(["--mem-worker", str(data), s]) or failed for s in names}
    return {"rows": n, "reps": reps, "timing": timing, "memory": memory, "split": split}


def table(res: dict[str, Any]) -> list[str]:
    """Markdown lines for one size."""
    t, m = res["timing"], res["memory"]
    best = {s: min(v) for s, v in t["wall"].items()}
    how = ("one warm process per side: the shared process was killed" if res["split"]
           else "alternating warm runs in one process")
    lines = [f"### {res['rows']:,} rows (best of {res['reps']}; {how})", "",
             "| side | best s | median s | CPU s (best) | vs its engine's group-by | "
             "peak RSS MB | RSS after load MB | peak / group-by's peak |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for s, runs in t["wall"].items():
        base = BASELINE.get(s, s)
        med = sorted(runs)[len(runs) // 2]
        ratio = best[s] / best[base]
        mem = m[s]["peak_mb"] / m[base]["peak_mb"]
        lines.append(f"| {s} | {best[s]:.3f} | {med:.3f} | {min(t['cpu'][s]):.3f} | "
                     f"{ratio:.2f}x | {m[s]['peak_mb']:.0f} | {m[s]['loaded_mb']:.0f} | "
                     f"{mem:.2f} |")
    lines.append("")
    for s, base in BASELINE.items():
        if s in best:
            r = best[s] / best[base]
            mem = m[s]["peak_mb"] / m[base]["peak_mb"]
            lines.append(f"- {s} / {base}: time {r:.2f}x ({'meets' if r <= GOAL else 'misses'}"
                         f" <= {GOAL}), peak memory {mem:.2f}x "
                         f"({'meets' if mem <= 1 else 'misses'} <= 1)")
    return [*lines, ""]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--rows", type=float, nargs="+", default=[1e6])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sides", default=None, help="comma-separated subset of the sides")
    ap.add_argument("--out", default=str(HERE / "results" / "groupby.md"))
    ap.add_argument("--time-worker", nargs=3, metavar=("DATA", "SIDES", "REPS"))
    ap.add_argument("--mem-worker", nargs=2, metavar=("DATA", "SIDE"))
    args = ap.parse_args()
    if args.time_worker:
        d, s, r = args.time_worker
        print(json.dumps(time_worker(d, s.split(","), int(r))))
        return
    if args.mem_worker:
        print(json.dumps(mem_worker(*args.mem_worker)))
        return
    names = args.sides.split(",") if args.sides else sides()
    load = os.getloadavg()[0]
    skipped = "" if has_duckdb_backend() else "; no DuckDB backend here: DuckDB sides skipped"
    head = ["# Bounded grouped release vs the engine's own group-by (issue 41 item 4)", "",
            f"Command: `python benchmarks/bench_groupby.py --rows "
            f"{' '.join(f'{r:g}' for r in args.rows)} --reps {args.reps}`; "
            f"{platform.machine()}, {os.cpu_count()} CPUs, load average {load:.1f} at the start"
            f"{skipped}.",
            ""]
    body: list[str] = []
    for rows in args.rows:
        lines = table(run_size(int(rows), args.reps, names))
        print("\n".join(lines), flush=True)
        body += lines
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(head + body), encoding="utf-8")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
