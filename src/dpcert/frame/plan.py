"""The logical plan of a DP query: backend-neutral frozen dataclasses.

Nothing here imports a dataframe library.  A filter is kept as an opaque object that the backend
understands (a Polars expression, or a SQL string which every backend accepts).

Examples
--------
>>> from dpcert.frame.plan import Count, Sum, QueryPlan
>>> plan = QueryPlan(aggregates=(Count(), Sum("income", (0.0, 1e5))), group_keys=("region",),
...                  public_keys=(("north",), ("south",)), privacy_unit="person_id",
...                  max_groups=1, max_rows_per_group=5)
>>> [a.name for a in plan.aggregates]
['count', 'sum_income']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from dpcert._validate import check_bounds, check_int, check_positive, check_probability
from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    from dpcert._numbers import Number
    from dpcert.frame.aliases import Predicate, PublicKey

__all__ = [
    "MAX_BOUND",
    "Aggregate",
    "Count",
    "CountDistinct",
    "Mean",
    "Quantile",
    "QueryPlan",
    "Sum",
    "Variance",
    "check_output_names",
    "generated_names",
    "quantile_level",
]


def _check_column(column: object, what: str) -> str:
    if not isinstance(column, str) or not column:
        raise InvalidParameter(f"{what}: column={column!r} must be a non-empty string")
    return column


#: Largest |bound| of a value column (sum, mean, variance, quantile): 2^64.  Sums of up to 2^63
#: rows then stay below 2^127, far inside float64, and squares below 2^128.
MAX_BOUND = 2.0**64


def _check_value_bounds(bounds: object, what: str) -> tuple[float, float] | None:
    if bounds is None:  # chosen privately at release time (frame/autobounds.py)
        return None
    if not (isinstance(bounds, (tuple, list)) and len(bounds) == 2):
        raise InvalidParameter(f"{what}: bounds={bounds!r} must be a pair (lower, upper)")
    lo, hi = check_bounds(bounds[0], bounds[1], lower_name=f"{what}.lower",
                          upper_name=f"{what}.upper")
    out = float(lo), float(hi)
    for b in out:
        if abs(b) > MAX_BOUND:
            raise InvalidParameter(
                f"{what}: bounds={bounds!r}: |bound| must be <= 2**64 so that sums and squares "
                "stay finite (rescale the column)")
    return out


@dataclass(frozen=True)
class Aggregate:
    """Base class of aggregates; ``alias`` overrides the output column name."""

    alias_name: str | None = field(default=None, kw_only=True)
    #: Relative share of the release budget for each of this aggregate's noisy components.
    weight: Fraction = field(default=Fraction(1), kw_only=True)

    @property
    def default_name(self) -> str:
        raise NotImplementedError

    @property
    def name(self) -> str:
        """The output column name."""
        return self.alias_name or self.default_name

    def alias(self, name: str) -> Aggregate:
        """A copy with output column ``name``."""
        return replace(self, alias_name=_check_column(name, "alias"))

    def weighted(self, weight: Number) -> Aggregate:
        """A copy whose noisy components get ``weight`` times the default budget share.

        Shares are proportional to weights: ``dp.sum(...).weighted(3)`` next to ``dp.count()``
        gives the sum three times the count's ε (or ρ), so its noise is 3× (Laplace) or √3×
        (Gaussian) smaller.
        """
        return replace(self, weight=check_positive(weight, "weight"))

    @property
    def columns(self) -> tuple[str, ...]:
        """Data columns this aggregate reads."""
        return ()

    #: How many noisy measurements this aggregate needs (for the budget split).
    components: int = field(default=1, init=False, repr=False)


@dataclass(frozen=True)
class Count(Aggregate):
    """Number of rows (after contribution bounding)."""

    @property
    def default_name(self) -> str:
        return "count"


@dataclass(frozen=True)
class CountDistinct(Aggregate):
    """Number of distinct privacy units in the group."""

    @property
    def default_name(self) -> str:
        return "count_distinct_units"


@dataclass(frozen=True)
class Sum(Aggregate):
    """Sum of ``column`` with each value clamped to ``bounds``."""

    column: str
    bounds: tuple[float, float] | None

    def __post_init__(self) -> None:
        _check_column(self.column, "sum")
        object.__setattr__(self, "bounds", _check_value_bounds(self.bounds, f"sum({self.column})"))

    @property
    def default_name(self) -> str:
        return f"sum_{self.column}"

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)


@dataclass(frozen=True)
class Mean(Aggregate):
    """Mean of ``column`` clamped to ``bounds``: a noisy sum over a noisy count."""

    column: str
    bounds: tuple[float, float] | None
    components: int = field(default=2, init=False, repr=False)

    def __post_init__(self) -> None:
        _check_column(self.column, "mean")
        object.__setattr__(self, "bounds",
                           _check_value_bounds(self.bounds, f"mean({self.column})"))

    @property
    def default_name(self) -> str:
        return f"mean_{self.column}"

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)


@dataclass(frozen=True)
class Variance(Aggregate):
    """Variance of ``column`` clamped to ``bounds``: noisy count, sum and sum of squares."""

    column: str
    bounds: tuple[float, float] | None
    components: int = field(default=3, init=False, repr=False)

    def __post_init__(self) -> None:
        _check_column(self.column, "variance")
        object.__setattr__(self, "bounds",
                           _check_value_bounds(self.bounds, f"variance({self.column})"))

    @property
    def default_name(self) -> str:
        return f"variance_{self.column}"

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)


#: Default share of a release's budget spent choosing omitted bounds (all of them together).
DEFAULT_AUTO_SHARE = Fraction(3, 10)

#: Quantile levels are rounded to the nearest multiple of 1/QUANTILE_LEVEL_DENOMINATOR.
QUANTILE_LEVEL_DENOMINATOR = 10_000


def quantile_level(q: Fraction | int | float | Decimal | str) -> Fraction:
    """The exact level used for a requested quantile ``q``: ``q`` rounded (half to even) to
    the nearest multiple of 1/10 000, i.e. a decimal with at most four digits.

    A float means its exact binary value before rounding, so ``0.1 + 0.2`` gives 3/10 and
    ``1/3`` gives 3333/10000; the used level is in the output name and the certificate.  The
    bounded denominator keeps the rank utilities ``b·C − a·n`` small integers (no overflow).

    >>> quantile_level(0.1 + 0.2), quantile_level(1 / 3), quantile_level(0.5)
    (Fraction(3, 10), Fraction(3333, 10000), Fraction(1, 2))
    """
    d = QUANTILE_LEVEL_DENOMINATOR
    return Fraction(round(Fraction(q) * d), d)


@dataclass(frozen=True)
class Quantile(Aggregate):
    """Quantiles ``qs`` of ``column`` in ``bounds``, by the exponential mechanism on a grid of
    ``candidates`` equally spaced points (one noisy selection per quantile; with ``interval``,
    two more per quantile for its confidence interval, each of the three spending a third of
    the quantile's share: ``docs/proofs/quantile_interval.md``).  Each level is rounded to four
    decimals (`quantile_level`)."""

    column: str
    qs: tuple[float, ...]
    bounds: tuple[float, float] | None
    candidates: int = 1025
    interval: bool = True

    def __post_init__(self) -> None:
        _check_column(self.column, "quantile")
        raw: float | Sequence[float] = self.qs
        qs = (raw,) if isinstance(raw, (int, float)) else tuple(raw)
        if not qs:
            raise InvalidParameter(f"quantile({self.column}): qs={self.qs!r} is empty")
        for q in qs:
            check_probability(q, "q")
            if isinstance(q, float) and math.isnan(q):
                raise InvalidParameter(f"q={q!r} must be a number")
        object.__setattr__(self, "qs", tuple(float(quantile_level(q)) for q in qs))
        object.__setattr__(self, "bounds",
                           _check_value_bounds(self.bounds, f"quantile({self.column})"))
        check_int(self.candidates, "candidates", minimum=2)
        if not isinstance(self.interval, bool):
            raise InvalidParameter(f"quantile({self.column}): interval={self.interval!r} must "
                                   "be True or False")
        if self.candidates > 1 << 20:
            raise InvalidParameter(f"candidates={self.candidates!r} must be <= 2**20")
        object.__setattr__(self, "components", len(qs))

    @property
    def default_name(self) -> str:
        return f"quantile_{self.column}"

    def names(self) -> list[str]:
        """Output column names, one per quantile."""
        if self.alias_name and len(self.qs) == 1:
            return [self.alias_name]
        base = self.alias_name or f"quantile_{{q}}_{self.column}"
        if "{q}" not in base:
            base = base + "_{q}"
        return [base.replace("{q}", f"{q:g}") for q in self.qs]

    @property
    def levels(self) -> tuple[Fraction, ...]:
        """The exact levels used (`quantile_level`)."""
        return tuple(quantile_level(q) for q in self.qs)

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)


def generated_names(names: Sequence[str]) -> list[str]:
    """Every column a release table gets for value columns ``names``."""
    out: list[str] = []
    for n in names:
        out += [n, f"{n}_ci_low", f"{n}_ci_high"]
    return out


def check_output_names(output_names: Sequence[str], group_keys: Sequence[str]) -> None:
    """No released column may collide with another or with a group key (``count_ci_low`` as an
    alias would silently overwrite the count's interval)."""
    seen: dict[str, str] = {k: f"group key {k!r}" for k in group_keys}
    if len(seen) != len(group_keys):
        raise InvalidParameter(f"group_by{tuple(group_keys)!r} names a column twice")
    for n in output_names:
        for g in generated_names([n]):
            if g in seen:
                raise InvalidParameter(
                    f"output name {n!r}: its column {g!r} collides with {seen[g]}; choose "
                    "another .alias()")
            seen[g] = f"the column {g!r} of output {n!r}"


@dataclass(frozen=True)
class QueryPlan:
    """A whole DP query.

    Parameters
    ----------
    aggregates
        What to release per group.
    group_keys
        Columns to group by (empty: one global group).
    public_keys
        The key tuples to release (missing groups come out as noisy zeros), or ``None`` for
        private keys chosen by DP partition selection.
    privacy_unit
        Column identifying a person, or ``None`` when each row is a different person.
    max_groups, max_rows_per_group
        Contribution bounds per privacy unit (both 1 when ``privacy_unit`` is None); ``None``:
        chosen privately from ``auto_share`` of the budget.
    filters
        Backend filter expressions applied before anything else (data-independent).
    sql
        The SQL text the plan was parsed from (`dpcert.frame.sql`), or ``None``.
    """

    aggregates: tuple[Aggregate, ...]
    group_keys: tuple[str, ...] = ()
    public_keys: tuple[PublicKey, ...] | None = ((),)
    privacy_unit: str | None = None
    max_groups: int | None = 1
    max_rows_per_group: int | None = 1
    filters: tuple[Predicate, ...] = ()
    sql: str | None = None
    #: Share of the release budget spent on choosing omitted bounds (``None`` bounds and
    #: contribution bounds), split equally across the quantities chosen
    #: (:mod:`dpcert.frame.autobounds`).  Unused when every bound is given.
    auto_share: Fraction = DEFAULT_AUTO_SHARE

    def __post_init__(self) -> None:
        if not self.aggregates:
            raise InvalidParameter("aggregates=() is empty: ask for at least one aggregate")
        for a in self.aggregates:
            if not isinstance(a, Aggregate):
                raise InvalidParameter(f"aggregate={a!r} is not a dpcert aggregate")
        names = self.output_names()
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise InvalidParameter(f"duplicate output names {sorted(dup)}: use .alias()")
        check_output_names(names, self.group_keys)
        self._check_contributions()
        if self.public_keys is not None:
            self._check_public_keys()

    def _check_contributions(self) -> None:
        """Contribution bounds: integers ≥ 1, or ``None`` (chosen privately) where there is
        something to choose; ``auto_share`` a probability."""
        fixed = (("max_groups", "max_rows_per_group") if self.privacy_unit is None
                 else () if self.group_keys else ("max_groups",))
        for f in fixed:  # nothing to choose: rows are units, or one group
            if getattr(self, f) is None:
                object.__setattr__(self, f, 1)
        for f in ("max_groups", "max_rows_per_group"):
            if getattr(self, f) is not None:
                check_int(getattr(self, f), f, minimum=1)
        share = check_probability(self.auto_share, "auto_share", open_low=True, open_high=True)
        object.__setattr__(self, "auto_share", share)
        if self.privacy_unit is None and (self.max_groups != 1 or self.max_rows_per_group != 1):
            raise InvalidParameter(
                "max_groups/max_rows_per_group need a privacy_unit column (rows are units)"
            )

    def _check_public_keys(self) -> None:
        assert self.public_keys is not None
        width = len(self.group_keys)
        for k in self.public_keys:
            if len(k) != width:
                raise InvalidParameter(
                    f"public key {k!r} has {len(k)} values for {width} group columns"
                )
        if width and not self.public_keys:
            raise InvalidParameter("keys=[] is empty: give the public keys or 'private'")

    @property
    def auto_contributions(self) -> tuple[str, ...]:
        """The contribution bounds to choose privately (``"max_groups"``,
        ``"max_rows_per_group"``)."""
        return tuple(f for f in ("max_groups", "max_rows_per_group")
                     if getattr(self, f) is None)

    @property
    def auto_columns(self) -> tuple[str, ...]:
        """The value columns whose bounds are chosen privately (one choice per column)."""
        return tuple(dict.fromkeys(a.column for a in self.aggregates  # type: ignore[attr-defined]
                                   if getattr(a, "bounds", 0) is None))

    @property
    def is_auto(self) -> bool:
        """Whether some bound is chosen privately at release time."""
        return bool(self.auto_contributions or self.auto_columns)

    def output_names(self) -> list[str]:
        """Names of the released value columns, in order."""
        out: list[str] = []
        for a in self.aggregates:
            out.extend(a.names() if isinstance(a, Quantile) else [a.name])
        return out

    @property
    def columns(self) -> tuple[str, ...]:
        """Every data column the plan reads."""
        cols: list[str] = list(self.group_keys)
        if self.privacy_unit:
            cols.append(self.privacy_unit)
        for a in self.aggregates:
            cols.extend(a.columns)
        return tuple(dict.fromkeys(cols))

    def describe(self) -> dict[str, Any]:
        """JSON-friendly rendering for certificates."""
        out: dict[str, Any] = {
            "aggregates": [{"kind": type(a).__name__, **{
                k: (str(v) if isinstance(v, Fraction) else v)
                for k, v in vars(a).items() if k not in ("components",)}}
                for a in self.aggregates],
            "group_keys": list(self.group_keys),
            "keys": "private" if self.public_keys is None else [list(k) for k in self.public_keys],
            "privacy_unit": self.privacy_unit or "row",
            "max_groups": self.max_groups,
            "max_rows_per_group": self.max_rows_per_group,
            "filters": [str(f) for f in self.filters],
        }
        if self.sql is not None:
            out["sql"] = self.sql
        if self.is_auto:
            out["auto_share"] = str(self.auto_share)
        return out
