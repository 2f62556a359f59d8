"""Planning answers: the interval each output of a query would get, before any release.

`accuracy_table` reads no data and spends nothing; it compiles the query (with a fixed
bounding key: the key changes neither the map nor the noise) and reports, per released output,
what its interval will be at level ``alpha``:

* **count, count_distinct, sum**: ``estimate ± half_width``, exact for the noise
  (``Measurement.accuracy``); data-independent.
* **mean, variance**: computed from their noisy parts (a sum, the shared count, a sum of
  squares) by the release's own interval arithmetic
  (`mean_interval`, ``variance_interval``) at ``α/2`` (``α/3``)
  per part.  The half-width depends on the group's size, so it is evaluated for a group of
  ``n`` rows with values at the midpoint of the bounds (``n`` is stated in the table).
* **quantiles**: the rank error ``r`` (rows) of [`rank_error`][dpcert.frame.result.rank_error] (the
  value's cell holds ranks within ``r`` rows of the target ``q·n``) and, with an interval, its
  endpoints' rank margin ``m`` (`dpcert.frame.quantile_interval`: they target the ranks
  ``q·n ∓ m``).  A value half-width depends on the data's distribution; the figure given is
  for a group of ``n`` rows spread evenly over the bounds: ``(upper − lower)·m/n`` plus one
  grid step (``r`` instead of ``m`` without an interval), at most ``upper − lower``.
* **private keys**: a row ``(partition selection)`` with the threshold ``τ`` on the noisy
  count and the smallest count kept with probability ``≥ 1 − α``: ``τ − 1 + t`` where ``t`` is
  the least integer with ``P(Z ≥ t) ≤ α`` for the count's discrete Laplace noise ``Z``
  (`laplace_tail`, an upper bound: so the figure is safe).

Examples
--------
>>> import polars as pl
>>> import dpcert as dp
>>> df = pl.DataFrame({"g": ["a", "b"], "x": [1.0, 2.0]})
>>> sess = dp.Session(df, budget=dp.PureDP(1.0))
>>> q = sess.query().group_by("g", keys=["a", "b"]).agg(dp.count(), dp.mean("x", (0, 10)))
>>> acc = q.accuracy(0.05, n=1000)
>>> acc["output"].to_list(), acc["half_width"].to_list()[0]
(['count', 'mean_x'], 6.0)
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from dpcert.core.measures import Measure
from dpcert.core.params import param_mapping, param_number
from dpcert.frame.measure_policy import measure_policy
from dpcert.frame.plan import Count, CountDistinct, Mean, Quantile, Sum, Variance
from dpcert.frame.postprocess import mean_interval, variance_interval
from dpcert.frame.result import rank_error, upper_float

if TYPE_CHECKING:
    from dpcert.core.measurement import Measurement
    from dpcert.frame.session import Query

__all__ = ["accuracy_table", "smallest_kept"]

#: One row of the accuracy table: texts, and numbers (NaN or None where they do not apply).
Row = dict[str, str | float | None]


def smallest_kept(scale: Fraction | int, tau: int, alpha: Fraction | float) -> int:
    """The smallest count kept (noisy count ``≥ tau``) with probability ``≥ 1 − alpha`` under
    discrete Laplace noise of ``scale``.

    >>> smallest_kept(2, 28, Fraction(1, 20))  # P(Z >= 6) <= 1/20 < P(Z >= 5)
    33
    """
    from dpcert.mechanisms.threshold import laplace_tail

    a = Fraction(alpha)
    t = max(1, math.ceil(-float(scale) * math.log(float(a))) - 2)
    while t > 1 and laplace_tail(scale, t - 1) <= a:
        t -= 1
    while laplace_tail(scale, t) > a:
        t += 1
    return tau - 1 + t


def _mechanism(budget: Measure) -> str:
    return measure_policy(budget).mechanism


def accuracy_table(query: Query, budget: Measure, alpha: Fraction, n: int) -> pl.DataFrame:
    """One row per released output (and one for partition selection with private keys):
    ``output``, ``kind``, ``mechanism``, ``half_width`` (value units, ``n`` rows for a mean
    or variance; NaN for a quantile), ``rank_error`` (quantiles), ``n`` (the group size a
    figure assumes; for partition selection, the smallest count kept with probability
    ``≥ 1 − alpha``) and ``interval`` (what the figure means, in words)."""
    from dpcert.frame.compile import plan_stats
    from dpcert.frame.compiled import release_components

    plan = query.plan()
    if plan.is_auto:  # bounds chosen at release time: figures per unit of them
        from dpcert.frame.autobounds_accuracy import auto_accuracy_table

        return auto_accuracy_table(query, budget, alpha, n, accuracy_table)
    rows_per_group = plan.max_rows_per_group
    assert rows_per_group is not None  # not auto: every bound is given
    m = query.measurement(budget, alpha=alpha, key=bytes(16))
    _, uses = plan_stats(plan)
    half = {1: _floats(m.params["half_widths"], "half_widths")}
    for lvl, cls in ((2, Mean), (3, Variance)):  # a part's half-width at α/2 or α/3
        if any(isinstance(a, cls) for a in plan.aggregates):
            half[lvl] = _floats(query.measurement(budget, alpha=alpha / lvl,
                                                  key=bytes(16)).params["half_widths"],
                                "half_widths")
    eps = {c["name"]: Fraction(c["epsilon"]) for c in release_components(m, plan, budget)
           if c.get("kind") == "quantile" and c.get("role") == "value"}
    margins = {k.split(":", 1)[1]: Fraction(str(v))
               for k, v in param_mapping(m.params["quantile_margins"], "margins").items()}
    mech = _mechanism(budget)
    rows: list[Row] = []
    for agg in plan.aggregates:
        if isinstance(agg, Quantile):
            rows += [_quantile_row(qn, agg, lvl, eps[qn], rows_per_group, alpha, n,
                                   margins.get(qn))
                     for qn, lvl in zip(agg.names(), agg.levels, strict=True)]
            continue
        u = uses[agg.name]
        row: Row = {"output": agg.name, "mechanism": mech, "rank_error": math.nan, "n": None}
        if isinstance(agg, (Count, CountDistinct, Sum)):
            h = float(half[1][u.get("s", u.get("n", ""))])
            kind = "sum" if isinstance(agg, Sum) else "count"
            row.update(kind=kind, half_width=h,
                       interval=f"estimate ± {upper_float(h, 4):g} (any group size)")
        else:
            assert isinstance(agg, (Mean, Variance))  # the aggregates left
            h = _composite_half_width(agg, u, half, n)
            kind = "mean" if isinstance(agg, Mean) else "variance"
            row.update(kind=kind, half_width=h, n=n,
                       interval=f"± {upper_float(h, 4):g} for a group of {n} rows (from its "
                                f"noisy parts: {_parts_text(u, half)}); shrinks like 1/n")
        rows.append(row)
    if plan.public_keys is None:
        rows.append(_selection_row(m, alpha))
    return pl.DataFrame(rows, schema={"output": pl.String, "kind": pl.String,
                                      "mechanism": pl.String, "half_width": pl.Float64,
                                      "rank_error": pl.Float64, "n": pl.Int64,
                                      "interval": pl.String})


def _floats(v: object, what: str) -> dict[str, float]:
    return {k: float(param_number(x, what)) for k, x in param_mapping(v, what).items()}


def _parts_text(u: dict[str, str], half: dict[int, dict[str, float]]) -> str:
    names = {"s": "sum", "n": "count", "q": "sum of squares"}
    lvl = 3 if "q" in u else 2
    return ", ".join(f"{names[p]} ± {upper_float(half[lvl][s], 4):g}" for p, s in u.items())


def _composite_half_width(agg: Mean | Variance, u: dict[str, str],
                          half: dict[int, dict[str, float]], n: int) -> float:
    """Half-width of a mean's or variance's interval for ``n`` rows at the bounds' midpoint,
    by the same interval arithmetic as the release."""
    assert agg.bounds is not None  # auto bounds: frame/autobounds_accuracy.py
    lo, hi = agg.bounds
    mid = (lo + hi) / 2
    cnt = np.array([float(n)])
    if isinstance(agg, Mean):  # the release's sum is centred on the midpoint (its offset)
        _, low, high = mean_interval(cnt * 0.0, cnt, half[2][u["s"]], half[2][u["n"]],
                                     (lo - mid, hi - mid))
    else:
        _, low, high = variance_interval(cnt * 0.0, cnt * 0.0, cnt, half[3][u["s"]],
                                         half[3][u["q"]], half[3][u["n"]],
                                         (lo - mid, hi - mid))
    return float(high[0] - low[0]) / 2


def _quantile_row(name: str, agg: Quantile, level: Fraction, eps: Fraction, rows: int,
                  alpha: Fraction, n: int, margin: Fraction | None) -> Row:
    r = rank_error(level, eps, rows, agg.candidates, float(alpha))
    assert agg.bounds is not None
    width = agg.bounds[1] - agg.bounds[0]
    step = width / (agg.candidates - 1)
    m = r if margin is None else upper_float(margin, 6)
    half = min(width, width * m / n + step)
    lo, hi = max(0.0, float(level) - m / n), min(1.0, float(level) + m / n)
    what = (f"value interval: endpoints at ranks q·n ∓ {m:g} rows" if margin is not None else
            f"no interval (interval=False): value within ± {r:g} rows in rank")
    return {"output": name, "kind": "quantile", "mechanism": "permute_and_flip",
            "half_width": half, "rank_error": r, "n": n,
            "interval": f"{what}; for a group of {n} rows spread evenly over the bounds: "
                        f"± {upper_float(half, 4):g} (the {lo:.4g} to {hi:.4g} quantiles), "
                        f"grid step {step:.4g}; shrinks like 1/n"}


def _selection_row(m: Measurement, alpha: Fraction) -> Row:
    tau = int(param_number(m.params["threshold"], "threshold"))
    scales = param_mapping(m.params["scales"], "scales")
    scale = Fraction(str(scales["count"] if "count" in scales else scales["units"]))
    kept = smallest_kept(scale, tau, alpha)
    return {"output": "(partition selection)", "kind": "select", "mechanism": "threshold",
            "half_width": math.nan, "rank_error": math.nan, "n": kept,
            "interval": f"a group is released when its noisy count is >= τ = {tau}; a group "
                        f"with >= {kept} rows (units) is kept with probability >= "
                        f"{1 - float(alpha):g}"}
