"""Metrics: how far apart two datasets (or two outputs) are.

Dataset metrics count how many records must change; output metrics measure how far apart two
numeric results are.  Every metric has ``distance(a, b)``, so the adjacency a privacy proof assumes
can be checked on concrete data (the property tests and the auditor use it).

=========================  ==================================================================
metric                     ``distance(a, b)``
=========================  ==================================================================
``SymmetricDistance``      size of the multiset symmetric difference (add/remove a record)
``InsertDeleteDistance``   fewest insertions + deletions turning sequence a into b (ordered)
``ChangeOneDistance``      fewest records to *change* turning multiset a into b (same size)
``HammingDistance``        positions at which equal-length sequences differ (ordered)
``DiscreteDistance``       0 if a == b else 1 (local DP: the one value may change)
``AbsoluteDistance``       |a − b| for scalars
``L1Distance``             Σ|aᵢ − bᵢ|
``L2Distance``             √Σ(aᵢ − bᵢ)² (rounded up to a float when irrational)
=========================  ==================================================================

Distances are exact (``int`` or ``Fraction``, computed on the exact binary values of floats);
``math.inf`` when no finite number of moves relates the two (e.g. different sizes under
change-one).

Examples
--------
>>> import dpcert as dp
>>> dp.SymmetricDistance().distance([12, 10, 8, 7], [10, 8, 7])
1
>>> dp.SymmetricDistance().distance([12, 10, 8, 7], [10, 10, 8, 7])
2
>>> dp.ChangeOneDistance().distance([12, 10, 8, 7], [10, 10, 8, 7])
1
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeAlias

import numpy as np

from dpcert._numbers import round_up
from dpcert._types import DistanceLike
from dpcert.errors import InvalidParameter

__all__ = [
    "AbsoluteDistance",
    "ChangeOneDistance",
    "DiscreteDistance",
    "ExactDistance",
    "HammingDistance",
    "InsertDeleteDistance",
    "L1Distance",
    "L2Distance",
    "Metric",
    "SymmetricDistance",
    "scalar_distance",
    "tuple_distance",
]

Distance = int | Fraction | float
#: A distance bound in exact form, as `Metric.validate_d_in` returns it: a count of records
#: (``int``), a sensitivity (``Fraction``), or a structured distance's tuple of counts.
ExactDistance: TypeAlias = int | Fraction | tuple[int, ...]


class Metric:
    """Base class of metrics."""

    #: True for metrics between datasets (distances are integer counts of records).
    dataset_metric: bool = False

    def distance(self, a: object, b: object) -> Distance:
        """The distance between ``a`` and ``b``."""
        raise NotImplementedError

    def compare(self, a: DistanceLike, b: DistanceLike) -> bool:
        """Whether distance ``a`` is at most ``b`` (componentwise for structured distances)."""
        if isinstance(a, tuple) or isinstance(b, tuple):
            raise InvalidParameter(
                f"{type(self).__name__} distances are single numbers, got a={a!r}, b={b!r}")
        return bool(a <= b)

    def validate_d_in(self, d: DistanceLike, name: str = "d_in") -> ExactDistance:
        """Check an input distance bound for this metric and return it in exact form."""
        from dpcert._validate import check_int, check_nonnegative

        if self.dataset_metric:
            return check_int(d, name, minimum=0)
        return check_nonnegative(d, name)


def scalar_distance(d: ExactDistance, name: str = "d") -> int | Fraction:
    """``d`` as one number, raising if it is a structured distance's tuple.

    Examples
    --------
    >>> scalar_distance(3)
    3
    """
    if isinstance(d, tuple):
        raise InvalidParameter(f"{name}={d!r} must be a single number")
    return d


def tuple_distance(d: ExactDistance, name: str = "d") -> tuple[int, ...]:
    """``d`` as a structured distance's tuple of counts, raising if it is one number.

    Examples
    --------
    >>> tuple_distance((1, 2, 3))
    (1, 2, 3)
    """
    if not isinstance(d, tuple):
        raise InvalidParameter(f"{name}={d!r} must be a tuple of counts")
    return d


def _elements(x: object) -> list[object]:
    if isinstance(x, np.ndarray):
        return list(x.tolist())
    if not isinstance(x, Iterable):
        raise TypeError(f"{type(x).__name__!r} object is not iterable")
    return list(x)


@dataclass(frozen=True)
class SymmetricDistance(Metric):
    """Unbounded DP: |a Δ b| over multisets (order ignored)."""

    dataset_metric = True

    def distance(self, a: object, b: object) -> int:
        ca, cb = Counter(_elements(a)), Counter(_elements(b))
        return sum(((ca - cb) + (cb - ca)).values())


@dataclass(frozen=True)
class InsertDeleteDistance(Metric):
    """Ordered unbounded DP: fewest insertions and deletions (len a + len b − 2·LCS)."""

    dataset_metric = True

    def distance(self, a: object, b: object) -> int:
        xa, xb = _elements(a), _elements(b)
        # LCS by dynamic programming, one row at a time: O(len a · len b) time, O(len b) memory.
        prev = [0] * (len(xb) + 1)
        for u in xa:
            cur = [0]
            for j, v in enumerate(xb):
                cur.append(prev[j] + 1 if u == v else max(prev[j + 1], cur[j]))
            prev = cur
        return len(xa) + len(xb) - 2 * prev[-1]


@dataclass(frozen=True)
class ChangeOneDistance(Metric):
    """Bounded DP: how many records of multiset a must change to obtain b (sizes must agree)."""

    dataset_metric = True

    def distance(self, a: object, b: object) -> int | float:
        xa, xb = _elements(a), _elements(b)
        if len(xa) != len(xb):
            return math.inf
        return SymmetricDistance().distance(xa, xb) // 2


@dataclass(frozen=True)
class HammingDistance(Metric):
    """Ordered bounded DP: positions at which two equal-length sequences differ."""

    dataset_metric = True

    def distance(self, a: object, b: object) -> int | float:
        xa, xb = _elements(a), _elements(b)
        if len(xa) != len(xb):
            return math.inf
        return sum(1 for u, v in zip(xa, xb, strict=True) if u != v)


@dataclass(frozen=True)
class DiscreteDistance(Metric):
    """Local DP: 0 when the two values are equal, else 1."""

    dataset_metric = True

    def distance(self, a: object, b: object) -> int:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return 0 if np.array_equal(np.asarray(a), np.asarray(b)) else 1
        return 0 if a == b else 1


def _exact(v: object, name: str) -> Fraction:
    if isinstance(v, (bool, np.bool_)):
        raise InvalidParameter(f"{name}={v!r} must be a number")
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if not math.isfinite(f):
            raise InvalidParameter(f"{name}={v!r} must be finite")
        return Fraction(f)
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    if isinstance(v, Fraction):
        return v
    raise InvalidParameter(f"{name}={v!r} must be a number")


def _pairs(a: object, b: object) -> list[tuple[Fraction, Fraction]]:
    xa, xb = _elements(a), _elements(b)
    if len(xa) != len(xb):
        raise InvalidParameter(f"vectors have different lengths: {len(xa)} != {len(xb)}")
    return [(_exact(u, "a"), _exact(v, "b")) for u, v in zip(xa, xb, strict=True)]


@dataclass(frozen=True)
class AbsoluteDistance(Metric):
    """|a − b| between two scalars (exact)."""

    def distance(self, a: object, b: object) -> Fraction:
        return abs(_exact(a, "a") - _exact(b, "b"))


@dataclass(frozen=True)
class L1Distance(Metric):
    """Σ|aᵢ − bᵢ| between two equal-length vectors (exact)."""

    def distance(self, a: object, b: object) -> Fraction:
        return sum((abs(u - v) for u, v in _pairs(a, b)), Fraction(0))


@dataclass(frozen=True)
class L2Distance(Metric):
    """√Σ(aᵢ − bᵢ)²: exact when the root is rational, else the float just above it."""

    def distance(self, a: object, b: object) -> Fraction | float:
        sq = sum(((u - v) ** 2 for u, v in _pairs(a, b)), Fraction(0))
        n, d = sq.numerator, sq.denominator
        rn, rd = math.isqrt(n), math.isqrt(d)
        if rn * rn == n and rd * rd == d:
            return Fraction(rn, rd)
        f = round_up(Fraction(math.sqrt(sq)))
        while Fraction(f) ** 2 < sq:
            f = math.nextafter(f, math.inf)
        return f
