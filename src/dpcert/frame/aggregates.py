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

from dpcert.frame.plan import Count, CountDistinct, Mean, Quantile, Sum, Variance

__all__ = ["count", "count_distinct", "mean", "median", "quantile", "sum", "variance"]


def count() -> Count:
    """Number of rows per group, after contribution bounding.

    Each person contributes at most ``max_rows_per_group`` rows to at most ``max_groups``
    groups (`Query.bound_contributions`); the noise is calibrated to that, not to the raw data.
    `Release.tidy` shows the count as a non-negative integer with its confidence interval.

    Returns
    -------
    Count
        The aggregate, named ``count`` (rename it with ``.alias``).

    See Also
    --------
    count_distinct : distinct privacy units rather than rows.

    Examples
    --------
    >>> import polars as pl
    >>> import dpcert as dp
    >>> people = pl.DataFrame({"id": [1, 1, 2, 3], "region": ["n", "n", "s", "n"]})
    >>> sess = dp.Session(people, privacy_unit="id", budget=dp.PureDP(1.0))
    >>> res = (sess.query().group_by("region", keys=["n", "s"]).agg(dp.count())
    ...        .bound_contributions(max_groups=1, max_rows_per_group=2)
    ...        .release(dp.PureDP(0.5)))
    >>> res.tidy().columns
    ['region', 'count', 'count_ci_low', 'count_ci_high']
    >>> dp.count().alias("n").name
    'n'
    """
    return Count()


def count_distinct() -> CountDistinct:
    """Number of distinct privacy units (people) per group.

    Unlike `count`, a person counts once per group however many rows they have there.

    Returns
    -------
    CountDistinct
        The aggregate, named ``count_distinct_units`` (rename it with ``.alias``).

    Examples
    --------
    >>> import dpcert as dp
    >>> dp.count_distinct().name
    'count_distinct_units'
    >>> dp.count_distinct().alias("people").name
    'people'
    """
    return CountDistinct()


def sum(column: str, bounds: tuple[float, float] | None = None) -> Sum:  # mirrors Polars naming
    """Sum of ``column`` per group, each value clamped to ``bounds``.

    Parameters
    ----------
    column : str
        The numeric column to add up.
    bounds : tuple of (lower, upper), optional
        Finite bounds with ``lower <= upper`` and ``|bound| <= 2**64``, chosen from domain
        knowledge, never from the data.  Values outside are clamped to them and missing values
        (null, NaN) count as ``lower``; the sum, and its interval, are those of the clamped
        data.  The noise grows with ``max(|lower|, |upper|)``.  Omitted, they are chosen
        privately at release time from the query's ``auto_share`` of the budget
        (`dpcert.frame.autobounds`); the same holds for every aggregate's ``bounds``.

    Returns
    -------
    Sum
        The aggregate, named ``sum_<column>`` (rename it with ``.alias``).

    Raises
    ------
    InvalidParameter
        If ``column`` is not a non-empty string or ``bounds`` is not a valid pair (the error
        names the value); raised here, before any budget is charged.

    Examples
    --------
    >>> import polars as pl
    >>> import dpcert as dp
    >>> dp.sum("income", bounds=(0, 250_000)).name
    'sum_income'
    >>> people = pl.DataFrame({"region": ["n", "s", "n"], "hours": [40.0, 35.5, None]})
    >>> sess = dp.Session(people, privacy_unit=None, budget=dp.PureDP(1.0))
    >>> res = (sess.query().group_by("region", keys=["n", "s"])
    ...        .agg(dp.sum("hours", bounds=(0, 80))).release(dp.PureDP(0.5)))
    >>> res.tidy().columns
    ['region', 'sum_hours', 'sum_hours_ci_low', 'sum_hours_ci_high']
    >>> dp.sum("hours", bounds=(80, 0))
    Traceback (most recent call last):
    ...
    dpcert.errors.InvalidParameter: bounds reversed: sum(hours).lower=80 > sum(hours).upper=0
    """
    return Sum(column, bounds)


def mean(column: str, bounds: tuple[float, float] | None = None) -> Mean:
    """Mean of ``column`` per group, each value clamped to ``bounds``.

    Released as a noisy sum over a noisy count, each measured with part of the query's budget;
    the interval accounts for the noise of both.

    Parameters
    ----------
    column : str
        The numeric column to average.
    bounds : tuple of (lower, upper), optional
        Finite bounds with ``lower <= upper``, as for `sum`: values outside are clamped and
        missing values count as ``lower``, so the mean is that of the clamped data.  A mean
        centred in a narrow range is more accurate than one in a wide range.

    Returns
    -------
    Mean
        The aggregate, named ``mean_<column>`` (rename it with ``.alias``).

    Raises
    ------
    InvalidParameter
        If ``column`` is not a non-empty string or ``bounds`` is not a valid pair.

    Examples
    --------
    >>> import polars as pl
    >>> import dpcert as dp
    >>> m = dp.mean("age", bounds=(0, 120))
    >>> m.name, m.bounds
    ('mean_age', (0.0, 120.0))
    >>> people = pl.DataFrame({"region": ["n", "s", "n"], "age": [34, 51, 27]})
    >>> sess = dp.Session(people, privacy_unit=None, budget=dp.PureDP(1.0))
    >>> res = (sess.query().group_by("region", keys=["n", "s"])
    ...        .agg(dp.mean("age", bounds=(0, 120))).release(dp.PureDP(0.5)))
    >>> res.tidy().columns
    ['region', 'mean_age', 'mean_age_ci_low', 'mean_age_ci_high']
    """
    return Mean(column, bounds)


def variance(column: str, bounds: tuple[float, float] | None = None) -> Variance:
    """Variance of ``column`` per group, each value clamped to ``bounds``.

    Released from three noisy parts, a count, a sum and a sum of squares, each measured with
    part of the query's budget.

    Parameters
    ----------
    column : str
        The numeric column.
    bounds : tuple of (lower, upper), optional
        Finite bounds with ``lower <= upper``, as for `sum`: values outside are clamped and
        missing values count as ``lower``, so the variance is that of the clamped data.

    Returns
    -------
    Variance
        The aggregate, named ``variance_<column>`` (rename it with ``.alias``).

    Raises
    ------
    InvalidParameter
        If ``column`` is not a non-empty string or ``bounds`` is not a valid pair.

    Examples
    --------
    >>> import dpcert as dp
    >>> v = dp.variance("hours", bounds=(0, 99))
    >>> v.name, v.bounds
    ('variance_hours', (0.0, 99.0))
    >>> dp.variance("hours", bounds=(0, 99)).alias("spread").name
    'spread'
    """
    return Variance(column, bounds)


def quantile(column: str, qs: float | Sequence[float], bounds: tuple[float, float] | None = None,
             candidates: int = 1025, interval: bool = True) -> Quantile:
    """Quantiles ``qs`` of ``column`` per group, within ``bounds``.

    Each quantile is a noisy selection by the exponential-mechanism family among
    ``candidates`` equally spaced points of ``bounds`` (``docs/proofs/quantile.md``), step
    ``(upper − lower)/(candidates − 1)``; the released value is drawn uniformly inside its
    selected grid cell (so values are not on the grid; an integer column with integer bounds
    gets integers).  With ``interval=True`` each quantile also gets a confidence interval
    ``<name>_ci_low``/``<name>_ci_high`` for the group's quantile, from two more selections
    (the quantile's budget is split in thirds: ``docs/proofs/quantile_interval.md``);
    ``interval=False`` spends it all on the value.  `Release.tidy` gives each quantile's rank
    error.

    Parameters
    ----------
    column : str
        The numeric column.
    qs : float or sequence of float
        Levels in [0, 1], each rounded to four decimals (``0.5`` is the median); each level
        is one noisy selection.
    bounds : tuple of (lower, upper), optional
        Finite bounds with ``lower <= upper``: the range the quantiles are searched in; values
        outside are clamped to it and missing values count as ``lower``.
    candidates : int, default 1025
        Number of grid points, from 2 to ``2**20``.
    interval : bool, default True
        Whether to release a confidence interval for each quantile (a third of its budget each
        for the value and the two ends).

    Returns
    -------
    Quantile
        The aggregate, with one output column per level, named ``quantile_<q>_<column>``.

    Raises
    ------
    InvalidParameter
        If a level is outside [0, 1] or NaN, ``qs`` is empty, ``bounds`` is not a valid pair,
        or ``candidates`` is out of range.

    See Also
    --------
    median : the 0.5 quantile, named ``median_<column>``.

    Examples
    --------
    >>> import dpcert as dp
    >>> q = dp.quantile("age", [0.25, 0.5, 0.75], bounds=(0, 120))
    >>> q.names()
    ['quantile_0.25_age', 'quantile_0.5_age', 'quantile_0.75_age']
    >>> dp.quantile("age", 0.9, bounds=(0, 120)).qs
    (0.9,)
    >>> dp.quantile("age", [1.5], bounds=(0, 120))
    Traceback (most recent call last):
    ...
    dpcert.errors.InvalidParameter: q=1.5 must be in [0, 1]
    """
    levels = (qs,) if isinstance(qs, (int, float)) else tuple(qs)
    return Quantile(column, levels, bounds, candidates, interval)


def median(column: str, bounds: tuple[float, float] | None = None, candidates: int = 1025,
           interval: bool = True) -> Quantile:
    """Median of ``column`` per group, within ``bounds``: ``quantile(column, 0.5, bounds)``.

    Parameters
    ----------
    column : str
        The numeric column.
    bounds : tuple of (lower, upper), optional
        Finite bounds with ``lower <= upper``, as for `quantile`.
    candidates : int, default 1025
        Number of grid points, as for `quantile`.
    interval : bool, default True
        Whether to release a confidence interval, as for `quantile`.

    Returns
    -------
    Quantile
        The aggregate, named ``median_<column>`` (rename it with ``.alias``).

    Examples
    --------
    >>> import dpcert as dp
    >>> m = dp.median("age", bounds=(0, 120))
    >>> m.name, m.qs
    ('median_age', (0.5,))
    >>> dp.median("age", bounds=(0, 120)).alias("typical_age").name
    'typical_age'
    """
    q = Quantile(column, (0.5,), bounds, candidates, interval)
    return q.alias(f"median_{column}")  # type: ignore[return-value]
