"""Argument checks whose errors name the argument and its value.

Each helper returns the validated value in the form dpcert computes with (usually a
`Fraction`), so constructors read ``scale = check_positive(scale, "scale")``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Protocol, Self, TypeVar

import numpy as np

from dpcert._numbers import as_fraction, is_real_number
from dpcert.errors import InvalidParameter

__all__ = [
    "check_bounds",
    "check_delta",
    "check_int",
    "check_nonnegative",
    "check_positive",
    "check_probability",
    "check_size",
]


def check_positive(value: object, name: str) -> Fraction:
    """``value`` as a Fraction, which must be finite and ``> 0``.

    Examples
    --------
    >>> check_positive(0.5, "scale")
    Fraction(1, 2)
    >>> check_positive(-1.0, "scale")
    Traceback (most recent call last):
    ...
    dpcert.errors.InvalidParameter: scale=-1.0 must be > 0
    """
    f = as_fraction(value, name)
    if f <= 0:
        raise InvalidParameter(f"{name}={value!r} must be > 0")
    return f


def check_nonnegative(value: object, name: str) -> Fraction:
    """``value`` as a Fraction, which must be finite and ``>= 0``."""
    f = as_fraction(value, name)
    if f < 0:
        raise InvalidParameter(f"{name}={value!r} must be >= 0")
    return f


def check_delta(value: object, name: str = "delta") -> Fraction:
    """A δ, which must lie in ``[0, 1)``."""
    f = as_fraction(value, name)
    if not 0 <= f < 1:
        raise InvalidParameter(f"{name}={value!r} must be in [0, 1)")
    return f


def check_probability(value: object, name: str, *, open_low: bool = False,
                      open_high: bool = False) -> Fraction:
    """A probability in ``[0, 1]`` (ends excluded on request)."""
    f = as_fraction(value, name)
    low_ok = f > 0 if open_low else f >= 0
    high_ok = f < 1 if open_high else f <= 1
    if not (low_ok and high_ok):
        lo = "(" if open_low else "["
        hi = ")" if open_high else "]"
        raise InvalidParameter(f"{name}={value!r} must be in {lo}0, 1{hi}")
    return f


def check_int(value: object, name: str, *, minimum: int | None = None) -> int:
    """An integer (Python or NumPy; bools refused), at least ``minimum`` if given."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InvalidParameter(f"{name}={value!r} must be an integer")
    v = int(value)
    if minimum is not None and v < minimum:
        raise InvalidParameter(f"{name}={value!r} must be >= {minimum}")
    return v


def check_size(value: object, name: str = "size") -> int:
    """A sample size: an integer ``>= 0``."""
    return check_int(value, name, minimum=0)


class _Ordered(Protocol):
    """A value comparable with ``>`` to values of its own type (numbers, NumPy scalars)."""

    def __gt__(self, other: Self, /) -> object: ...


_B = TypeVar("_B", bound=_Ordered)


def check_bounds(lower: _B, upper: _B, *, lower_name: str = "lower",
                 upper_name: str = "upper") -> tuple[_B, _B]:
    """Finite numeric bounds with ``lower <= upper``; returns them unchanged."""
    for v, n in ((lower, lower_name), (upper, upper_name)):
        if not is_real_number(v):
            raise InvalidParameter(f"{n}={v!r} must be a real number")
        if isinstance(v, (float, np.floating)) and not math.isfinite(float(v)):
            raise InvalidParameter(f"{n}={v!r} must be finite")
    if lower > upper:
        raise InvalidParameter(
            f"bounds reversed: {lower_name}={lower!r} > {upper_name}={upper!r}"
        )
    return lower, upper
