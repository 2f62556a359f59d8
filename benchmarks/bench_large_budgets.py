"""Quote, check and release time of every aggregate at huge and tiny budgets (issue 37, item 4).

For each aggregate (count, count distinct, sum, mean, variance, quantile) × budget measure
(``PureDP(ε)``, ``ApproxDP(ε, 1e-6)`` with public keys, ``ApproxDP(ε, 1e-6)`` with private keys,
``ZCDP(ρ = ε)``) × ε in ``--eps`` (default 1e-9, 1e-3, 1, 1e3, 1e5, 1e9), the seconds of
``q.accuracy`` (quote), ``q.check`` and ``q.release`` on a five-row table, best of ``--reps``
after one warm-up.  Operations run in a worker process; one that outlives ``--timeout`` seconds
is killed (a stall inside one big-integer operation cannot be interrupted by a signal) and
prints ``>T``, and the later operations of that cell are skipped.
The memoised enclosures of ``_directed.py`` and the filters' PLD caches are
cleared before every run, so the figures are those of a first quote.  A refusal before the
charge (e.g. the samplers' scale limit at tiny ε) prints ``refused``: that is the expected
answer, and its time is the time to refuse.

``--batch`` times ``Session.release_all`` of two copies of each aggregate under
``ApproxDP(ε, 1e-6)`` instead (the session filter's PLD path).  ``--wide`` uses bounds
``(-2**64, 2**64)`` (the largest admitted, ``frame/checks.py`` ``MAX_BOUND``) instead of
``(0, 100)``.

Usage::

    PYTHONPATH=src python benchmarks/bench_large_budgets.py [--timeout 20] [--reps 3]
        [--aggs count,variance] [--measures pure,zcdp] [--eps 1e5,1e9] [--wide] [--batch]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import polars as pl

import dpcert as dp
from dpcert.errors import InvalidParameter

EPS = (1e-9, 1e-3, 1.0, 1e3, 1e5, 1e9)
AGGS = ("count", "count_distinct", "sum", "mean", "variance", "quantile")
MEASURES = ("pure", "approx", "approx_private", "zcdp")


def _aggregate(name: str, bounds: tuple[float, float]) -> Any:
    return {"count": dp.count, "count_distinct": dp.count_distinct,
            "sum": lambda: dp.sum("income", bounds=bounds),
            "mean": lambda: dp.mean("income", bounds=bounds),
            "variance": lambda: dp.variance("income", bounds=bounds),
            "quantile": lambda: dp.quantile("income", 0.5, bounds=bounds)}[name]()


def _budget(measure: str, eps: float) -> Any:
    if measure == "pure":
        return dp.PureDP(eps)
    if measure == "zcdp":
        return dp.ZCDP(eps)
    return dp.ApproxDP(eps, 1e-6)


def _query(agg: str, measure: str, bounds: tuple[float, float]) -> Any:
    df = pl.DataFrame({"pid": [1, 1, 2, 3, 4], "region": ["n", "s", "n", "s", "n"],
                       "income": [10.0, 20.0, 30.0, 40.0, 50.0]})
    total = {"pure": dp.PureDP(1e12), "zcdp": dp.ZCDP(1e12)}.get(measure, dp.ApproxDP(1e12, 0.5))
    sess = dp.Session(df, privacy_unit="pid", budget=total)
    keys: Any = "private" if measure == "approx_private" else ["n", "s"]
    return (sess.query().group_by("region", keys=keys).agg(_aggregate(agg, bounds))
            .bound_contributions(max_groups=1, max_rows_per_group=1))


def _clear_caches() -> None:
    """Forget memoised enclosures, so that every repetition computes them (a cold quote)."""
    from dpcert import _directed as _exactmath
    from dpcert.accounting import filters, pld

    for mod, name in ((_exactmath, "exp_bounds"), (_exactmath, "log_bounds"),
                      (_exactmath, "normal_cdf_bounds"), (filters, "_pld_epsilon"),
                      (filters, "_pld_lower"), (pld, "_grid")):
        clear = getattr(getattr(mod, name, None), "cache_clear", None)
        if clear is not None:
            clear()


def _batch(agg: str, eps: float, wide: bool) -> None:
    """``release_all`` of two copies of the query under ``ApproxDP(ε, 1e-6)`` each (the
    session filter composes them with the PLD accountant where that is affordable)."""
    q = _query(agg, "approx", (-(2.0**64), 2.0**64) if wide else (0.0, 100.0))
    b = dp.ApproxDP(eps, 1e-6)
    q.session.release_all([(q, b), (q, b)])


def _worker(conn: Any) -> None:
    """Child process: run one operation at a time, reply ``("ok", s)`` or ``("refused", s)``."""
    queries: dict[tuple[str, str, bool], Any] = {}
    _query("count", "pure", (0.0, 100.0)).accuracy(budget=dp.PureDP(1))  # imports
    conn.send("ready")
    while True:
        agg, measure, eps, wide, op = conn.recv()
        key = (agg, measure, wide)
        if key not in queries:
            bounds = (-(2.0**64), 2.0**64) if wide else (0.0, 100.0)
            queries[key] = _query(agg, measure, bounds)
        q, b = queries[key], _budget(measure, eps)
        fn: Callable[[], Any] = {"quote": partial(q.accuracy, budget=b),
                                 "check": partial(q.check, b),
                                 "release": partial(q.release, b),
                                 "batch": partial(_batch, agg, eps, wide)}[op]
        _clear_caches()
        t0 = time.perf_counter()
        try:
            fn()
            conn.send(("ok", time.perf_counter() - t0))
        except InvalidParameter:
            conn.send(("refused", time.perf_counter() - t0))


class _Runner:
    """A worker process, replaced when an operation outlives the timeout (a stall inside one
    big-integer operation cannot be interrupted by a signal, so the process is killed)."""

    def __init__(self) -> None:
        self._ctx = mp.get_context("spawn")
        self._start()

    def _start(self) -> None:
        self.conn, child = self._ctx.Pipe()
        self.proc = self._ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()
        if not self.conn.poll(300) or self.conn.recv() != "ready":
            raise RuntimeError("the benchmark worker did not start")

    def run(self, task: tuple[Any, ...], timeout: float) -> tuple[str, float]:
        self.conn.send(task)
        if self.conn.poll(timeout):
            status, secs = self.conn.recv()
            return str(status), float(secs)
        self.proc.kill()
        self.proc.join()
        self._start()
        return "stalled", timeout

    def cell(self, task: tuple[Any, ...], reps: int, timeout: float) -> str:
        """Best of ``reps`` after a warm-up; ``>T`` or ``refused``."""
        best = float("inf")
        for i in range(reps + 1):
            status, secs = self.run(task, timeout)
            if status == "stalled":
                return f">{timeout:g}"
            if status == "refused":
                return "refused"
            if i:
                best = min(best, secs)
        return f"{best:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--aggs", default=",".join(AGGS))
    ap.add_argument("--measures", default=",".join(MEASURES))
    ap.add_argument("--eps", default=",".join(f"{e:g}" for e in EPS))
    ap.add_argument("--wide", action="store_true")
    ap.add_argument("--batch", action="store_true",
                    help="instead: release_all of two ApproxDP queries per aggregate and ε")
    args = ap.parse_args()
    if args.batch:
        _main_batch(args)
        return
    bounds = (-(2.0**64), 2.0**64) if args.wide else (0.0, 100.0)
    print(f"bounds={bounds}  timeout={args.timeout:g}s  best of {args.reps} after a warm-up")
    print(f"{'aggregate':15s} {'measure':15s} {'eps':>7s} {'quote':>9s} {'check':>9s} "
          f"{'release':>9s}", flush=True)
    runner = _Runner()
    for agg in args.aggs.split(","):
        for measure in args.measures.split(","):
            for e in (float(x) for x in args.eps.split(",")):
                cells: list[str] = []
                for op in ("quote", "check", "release"):
                    stalled = any(c[0] == ">" or c == "skipped" for c in cells)
                    cells.append("skipped" if stalled else runner.cell(
                        (agg, measure, e, args.wide, op), args.reps, args.timeout))
                print(f"{agg:15s} {measure:15s} {e:7.0e} {cells[0]:>9s} {cells[1]:>9s} "
                      f"{cells[2]:>9s}", flush=True)


def _main_batch(args: Any) -> None:
    print(f"release_all of two queries, ApproxDP(ε, 1e-6) each; timeout={args.timeout:g}s; "
          f"best of {args.reps} after a warm-up")
    print(f"{'aggregate':15s} {'eps':>7s} {'batch':>9s}", flush=True)
    runner = _Runner()
    for agg in args.aggs.split(","):
        for e in (float(x) for x in args.eps.split(",")):
            cell = runner.cell((agg, "approx", e, args.wide, "batch"), args.reps, args.timeout)
            print(f"{agg:15s} {e:7.0e} {cell:>9s}", flush=True)


if __name__ == "__main__":
    main()
