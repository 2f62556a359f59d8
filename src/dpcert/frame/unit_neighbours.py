"""Neighbouring frames for auditing a compiled query: one privacy unit removed or added.

The added unit has rows in ``G + 1`` groups (public keys, or fresh keys when keys are private)
with ``R + 1`` rows each and extreme values, so a release that failed to bound contributions or
to hide a fresh key would be caught by `dpcert.audit.audit`.  When the engine's adversarial
neighbour harness (`dpcert.frame.neighbours`) is available its neighbours are used as well.

Examples
--------
>>> import polars as pl
>>> from dpcert.frame.plan import Count, QueryPlan
>>> df = pl.DataFrame({"u": [1, 1, 2], "g": ["a", "b", "a"]})
>>> plan = QueryPlan((Count(),), group_keys=("g",), public_keys=(("a",), ("b",)),
...                  privacy_unit="u", max_groups=1, max_rows_per_group=1)
>>> [(a.height, b.height) for a, b in unit_neighbours(df, plan)][:2]
[(3, 1), (3, 7)]
"""

from __future__ import annotations

from typing import Any

import polars as pl

from dpcert.frame.plan import QueryPlan

__all__ = ["unit_neighbours"]


def _fresh(s: pl.Series, i: int) -> Any:
    if s.dtype == pl.Utf8:
        return f"__audit_{i}__"
    if s.dtype.is_numeric():
        top = s.drop_nulls().max()
        return (0 if top is None else top) + 1 + i  # type: ignore[operator]
    return None


def _added_unit(df: pl.DataFrame, plan: QueryPlan) -> pl.DataFrame:
    G, R = (plan.max_groups or 3) + 1, (plan.max_rows_per_group or 3) + 1  # None: chosen
    if plan.public_keys is not None and plan.group_keys:
        keys = [k for k in plan.public_keys][:G]
    else:
        keys = [tuple(_fresh(df[c], i) for c in plan.group_keys) for i in range(G)]
    highs: dict[str, float] = {}
    for a in plan.aggregates:
        for c in a.columns:
            highs[c] = max(highs.get(c, -1e300), float(getattr(a, "bounds", (0, 1e6))[1]) * 4)
    rows: dict[str, list[object]] = {c: [] for c in df.columns}
    for k in keys:
        for _ in range(R):
            for c in df.columns:
                if plan.privacy_unit == c:
                    rows[c].append(_fresh(df[c], 0))
                elif c in plan.group_keys:
                    rows[c].append(k[plan.group_keys.index(c)])
                elif c in highs:
                    rows[c].append(highs[c])
                else:
                    rows[c].append(df[c][0] if df.height else None)
    return pl.DataFrame(rows, schema=df.schema)


def unit_neighbours(data: pl.LazyFrame | pl.DataFrame, plan: QueryPlan
                    ) -> list[tuple[pl.DataFrame, pl.DataFrame]]:
    """``(frame, neighbour)`` pairs one unit apart: the heaviest unit removed, an adversarial
    unit added, and (when available) the engine harness's neighbours."""
    df = data.collect() if isinstance(data, pl.LazyFrame) else data
    pairs: list[tuple[pl.DataFrame, pl.DataFrame]] = []
    unit = plan.privacy_unit
    if df.height:
        if unit is None:
            pairs.append((df, df.slice(1)))
        else:
            top = df.group_by(unit).len().sort("len", descending=True)[unit][0]
            pairs.append((df, df.filter(pl.col(unit).ne_missing(top))))
    if unit is None:
        pairs.append((df, pl.concat([df, df.head(1)]) if df.height else df))
    else:
        pairs.append((df, pl.concat([df, _added_unit(df, plan)])))
    try:
        from dpcert.frame.neighbours import neighbours
    except ImportError:  # pragma: no cover - the harness is part of the engine
        return pairs
    pairs += [(df, n) for _, n in neighbours(df, plan)]
    return pairs
