"""Release tables as rows of formatted cells: keys, then ``estimate [low, high]`` per aggregate
(or ``estimate ± r rows in rank`` for a quantile released without an interval), shared by
every report.

Examples
--------
>>> import polars as pl
>>> df = pl.DataFrame({"g": ["a"], "count": [1204], "count_ci_low": [1100],
...                    "count_ci_high": [1300]})
>>> keys, values = columns(df)
>>> keys, values, rows(df, keys, values)
(['g'], ['count'], [['a', '1,204 [1,100, 1,300]']])
"""

from __future__ import annotations

import polars as pl

from dpcert.report.format import format_interval, format_number

__all__ = ["columns", "rows"]


def columns(df: pl.DataFrame) -> tuple[list[str], list[str]]:
    """``(key columns, value columns)`` of a release table."""
    values = [c for c in df.columns
              if f"{c}_ci_low" in df.columns or f"{c}_rank_error" in df.columns]
    derived = {f"{v}_{s}" for v in values for s in ("ci_low", "ci_high", "rank_error")}
    keys = [c for c in df.columns if c not in values and c not in derived]
    return keys, values


def rows(df: pl.DataFrame, keys: list[str], values: list[str]) -> list[list[str]]:
    """One list of formatted cells per group."""
    out = []
    for r in df.iter_rows(named=True):
        cells = [str(r[k]) for k in keys]
        for v in values:
            if f"{v}_rank_error" in r and r.get(f"{v}_ci_low") is None:
                extra = f"± {format_number(r[f'{v}_rank_error'])} rows in rank"
            else:
                extra = format_interval(r.get(f"{v}_ci_low"), r.get(f"{v}_ci_high"))
            cells.append(f"{format_number(r[v])} {extra}".strip())
        out.append(cells)
    return out
