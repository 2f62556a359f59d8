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


def sum(column: str, bounds: tuple[Any, Any] | None = None) -> Sum:  # mirrors Polars naming
    """Sum of ``column``, each value clamped to ``bounds`` (nulls/NaN become the lower bound).
    Without ``bounds`` they are chosen privately at release time (:mod:`dpcert.frame.autobounds`,
    from the query's ``auto_share`` of the budget)."""
    return Sum(column, bounds)


def mean(column: str, bounds: tuple[Any, Any] | None = None) -> Mean:
    """Mean of ``column`` clamped to ``bounds`` (chosen privately when omitted)."""
    return Mean(column, bounds)


def variance(column: str, bounds: tuple[Any, Any] | None = None) -> Variance:
    """Variance of ``column`` clamped to ``bounds`` (chosen privately when omitted)."""
    return Variance(column, bounds)


def quantile(column: str, qs: float | Sequence[float], bounds: tuple[Any, Any] | None = None,
             candidates: int = 1025) -> Quantile:
    """Quantiles ``qs`` of ``column`` within ``bounds`` (exponential-mechanism family); the
    bounds are chosen privately when omitted."""
    levels = (qs,) if isinstance(qs, (int, float)) else tuple(qs)
    return Quantile(column, levels, bounds, candidates)


def median(column: str, bounds: tuple[Any, Any] | None = None,
           candidates: int = 1025) -> Quantile:
    """Median of ``column`` within ``bounds``: ``quantile(column, 0.5, bounds)`` named
    ``median_<column>`` (rename it with ``.alias``)."""
    q = Quantile(column, (0.5,), bounds, candidates)
    return q.alias(f"median_{column}")  # type: ignore[return-value]
