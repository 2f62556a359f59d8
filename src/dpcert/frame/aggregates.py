"""User-facing aggregate constructors: ``dp.count()``, ``dp.sum(col, bounds)``, ...

Examples
--------
>>> import dpcert as dp
>>> dp.sum("income", bounds=(0, 250_000)).name
'sum_income'
>>> dp.quantile("age", [0.25, 0.5], bounds=(0, 120)).names()
['quantile_0.25_age', 'quantile_0.5_age']
>>> dp.count().alias("n").name
'n'
>>> dp.median("age", bounds=(0, 120)).name
'median_age'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpcert.frame.plan import Count, CountDistinct, Mean, Quantile, Sum, Variance

__all__ = ["count", "count_distinct", "mean", "median", "quantile", "sum", "variance"]


def count() -> Count:
    """Number of rows per group (after contribution bounding)."""
    return Count()


def count_distinct() -> CountDistinct:
    """Number of distinct privacy units per group."""
    return CountDistinct()


def sum(column: str, bounds: tuple[Any, Any]) -> Sum:  # mirrors Polars naming
    """Sum of ``column``, each value clamped to ``bounds`` (nulls/NaN become the lower bound)."""
    return Sum(column, bounds)


def mean(column: str, bounds: tuple[Any, Any]) -> Mean:
    """Mean of ``column`` clamped to ``bounds``."""
    return Mean(column, bounds)


def variance(column: str, bounds: tuple[Any, Any]) -> Variance:
    """Variance of ``column`` clamped to ``bounds``."""
    return Variance(column, bounds)


def quantile(column: str, qs: float | Sequence[float], bounds: tuple[Any, Any],
             candidates: int = 1025, interval: bool = True) -> Quantile:
    """Quantiles ``qs`` of ``column`` within ``bounds`` (exponential-mechanism family).

    The grid has ``candidates`` equally spaced points, step ``(upper − lower)/(candidates − 1)``;
    each released value is drawn uniformly inside its selected grid cell (so values are not on
    the grid; an integer column with integer bounds gets integers).  With ``interval=True``
    each quantile also gets a confidence interval ``<name>_ci_low``/``<name>_ci_high`` for the
    group's quantile, from two more selections (the quantile's budget is split in thirds:
    ``docs/proofs/quantile_interval.md``); ``interval=False`` spends it all on the value.
    """
    levels = (qs,) if isinstance(qs, (int, float)) else tuple(qs)
    return Quantile(column, levels, bounds, candidates, interval)


def median(column: str, bounds: tuple[Any, Any], candidates: int = 1025,
           interval: bool = True) -> Quantile:
    """Median of ``column`` within ``bounds``: ``quantile(column, 0.5, bounds)`` named
    ``median_<column>`` (rename it with ``.alias``)."""
    q = Quantile(column, (0.5,), bounds, candidates, interval)
    return q.alias(f"median_{column}")  # type: ignore[return-value]
