"""Planning figures of a release whose bounds are chosen privately
(`dpcert.frame.autobounds`): what ``Query.accuracy()`` states before anything is spent.

The chosen values are not known before the release, so each figure is stated per unit of them
and the clipping bias is named apart from the noise:

* one row ``(choose <quantity>)`` per choice, with its ε and ``k``: the chosen bound aims at
  leaving ``k`` privacy units beyond it (``rank_error``; the choice is random and its prior
  trades more units beyond for a smaller bound), and their excess is the **clipping bias** --
  rows beyond ``max_rows_per_group``/``max_groups`` are dropped, values beyond the value
  bounds clamped to them.  It is a bias (towards the bounds), not part of the interval.
* per output, the interval the release would state with the *remaining* budget at reference
  values -- value bounds ``[0, 1]``, ``G = R = 1`` -- in ``half_width``; the interval text says
  how it scales: a count's noise by ``G·R``, a sum's by ``G·R·max(|lower|, |upper|)``, a mean's
  by ``G·R·(upper − lower)``; a quantile's rank error by ``G·R`` as well.

Examples
--------
>>> import polars as pl
>>> import dpcert as dp
>>> df = pl.DataFrame({"u": [1, 1, 2], "g": ["a", "b", "a"], "x": [1.0, 2.0, 3.0]})
>>> sess = dp.Session(df, "u", budget=dp.PureDP(1.0))
>>> q = (sess.query().group_by("g", keys=["a", "b"]).agg(dp.count(), dp.sum("x"))
...      .bound_contributions())
>>> acc = q.accuracy(0.05)
>>> acc["output"].to_list()
['(choose max_groups)', '(choose max_rows_per_group)', '(choose bounds:x)', 'count', 'sum_x']
>>> acc["rank_error"].to_list()[:3]
[4.0, 4.0, 4.0]
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import polars as pl

from dpcert.core.measures import ZCDP, Measure
from dpcert.frame.autobounds import (
    COLUMN_PARTS,
    PRIOR,
    TARGET_K,
    fixed_choices,
    quantities,
    selection_epsilon,
    split_auto,
)
from dpcert.frame.plan import Count, CountDistinct, Mean, Quantile, Sum, Variance

if TYPE_CHECKING:
    from collections.abc import Callable

    from dpcert.frame.session import Query

__all__ = ["auto_accuracy_table"]

_SCALES = {Count: "G·R", CountDistinct: "G (at most one unit per row)", Sum:
           "G·R·max(|lower|, |upper|)", Mean: "G·R·(upper − lower)",
           Variance: "G·R·(upper − lower)²", Quantile: "G·R (rank error)"}


def _choice_row(q: str, share: Fraction, zcdp: bool, fixed: dict[str, int]
                ) -> dict[str, object]:
    if q in fixed:
        return {"output": f"(choose {q})", "kind": "select_bounds", "mechanism": "none",
                "half_width": math.nan, "rank_error": 0.0, "n": None,
                "interval": f"{q} = {fixed[q]}: the only candidate (one public key), no budget"}
    value = q.startswith("bounds:")
    eps = selection_epsilon(share * COLUMN_PARTS["upper"] if value else share, zcdp)
    what = ("a median, then bounds with the values of about k units beyond each; those "
            "values are clamped to it" if value else
            "about k units have more and lose their excess rows")
    return {"output": f"(choose {q})", "kind": "select_bounds", "mechanism": "edge_rank",
            "half_width": math.nan, "rank_error": float(TARGET_K), "n": None,
            "interval": f"ε = {float(eps):.4g}{' per bound' if value else ''}, aims at k = "
                        f"{TARGET_K}: {what} (clipping bias, not in any interval); candidates "
                        f"weigh (distance beyond {'the median' if value else '0'})^-{PRIOR}, "
                        "so the bound is random and may leave more"}


def auto_accuracy_table(query: Any, budget: Measure, alpha: Fraction, n: int,
                        accuracy_table: Callable[[Query, Measure, Fraction, int], pl.DataFrame]
                        ) -> pl.DataFrame:
    """The accuracy table of a query with omitted bounds (module docstring);
    ``accuracy_table`` is `dpcert.frame.planning.accuracy_table` (which calls this)."""
    plan = query.plan()
    query.measurement(budget, key=bytes(16))  # every check of the real release
    shares, main = split_auto(plan, budget)
    zcdp = isinstance(budget, ZCDP)
    fixed = fixed_choices(plan)
    rows = [_choice_row(q, shares[q], zcdp, fixed) for q in quantities(plan)]
    ref = replace(query, aggregates=tuple(
        replace(a, bounds=(0.0, 1.0)) if getattr(a, "bounds", 0) is None else a
        for a in plan.aggregates),
        max_groups=plan.max_groups or 1, max_rows_per_group=plan.max_rows_per_group or 1)
    table = accuracy_table(ref, main, alpha, n)
    auto_cols = set(plan.auto_columns)
    for row in table.to_dicts():
        agg = next((a for a in plan.aggregates
                    if row["output"] in (a.names() if isinstance(a, Quantile) else [a.name])),
                   None)
        if agg is not None and (plan.auto_contributions or getattr(agg, "column", None)
                                in auto_cols):
            row["interval"] = (f"noise: {row['interval']} at reference values (bounds [0, 1], "
                               f"G = R = 1): multiply by {_SCALES[type(agg)]} of the chosen "
                               "values; plus the clipping bias of the choices above")
        rows.append(row)
    return pl.DataFrame(rows, schema=table.schema)
