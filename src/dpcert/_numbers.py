"""Exact numbers for privacy arithmetic.

Privacy parameters (ε, δ, ρ, scales, bounds) are held as `fractions.Fraction`.  A float
that a user passes means the decimal it prints as: ``0.2`` is read as ``1/5`` (through
``Fraction(repr(x))``), not as the binary double nearest to 0.2.  Five spends of ε = 0.2 therefore
fit a budget of exactly 1.  Results shown to users are converted back to float rounded *up*
(`round_up`), so a reported privacy loss is never smaller than the true one.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from numbers import Rational

import numpy as np

__all__ = [
    "Number",
    "as_fraction",
    "float_exact",
    "is_real_number",
    "round_down",
    "round_up",
    "show_up",
]

#: Anything dpcert accepts where a real privacy parameter is expected.
Number = int | float | Fraction | Decimal | np.integer | np.floating


def is_real_number(value: object) -> bool:
    """Whether ``value`` is a real number type dpcert accepts (bools are not numbers here)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, (int, float, Fraction, Decimal, Rational, np.integer, np.floating))


def as_fraction(value: object, name: str = "value") -> Fraction:
    """Read a user's number as the exact rational it denotes.

    Floats mean the shortest decimal that prints as them (``0.1`` is ``1/10``).  NaN, infinities,
    bools and non-numbers raise `InvalidParameter` naming ``name``.

    Examples
    --------
    >>> as_fraction(0.2)
    Fraction(1, 5)
    >>> as_fraction(3)
    Fraction(3, 1)
    """
    from dpcert.errors import InvalidParameter

    if not is_real_number(value):
        raise InvalidParameter(
            f"{name}={value!r} must be a real number, not {type(value).__name__}"
        )
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if not math.isfinite(f):
            raise InvalidParameter(f"{name}={value!r} must be finite")
        return Fraction(repr(f))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InvalidParameter(f"{name}={value!r} must be finite")
        return Fraction(value)
    if isinstance(value, np.integer):
        return Fraction(int(value))
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    assert isinstance(value, Rational)
    return Fraction(int(value.numerator), int(value.denominator))


def float_exact(value: float) -> Fraction:
    """The exact binary value of a float (``0.1`` is ``3602879701896397/36028797018963968``).

    This is the value a float *datum* has; user *parameters* go through `as_fraction`.
    """
    return Fraction(value)


def round_up(value: Fraction | int | float) -> float:
    """The smallest float that is ``>= value`` (directed rounding, never under-reports).

    Examples
    --------
    >>> round_up(Fraction(1, 3)) >= 1 / 3
    True
    >>> round_up(Fraction(12, 25))  # the float 0.48 is just below 12/25
    0.48000000000000004
    """
    if isinstance(value, float):
        return value
    f = float(value)  # correctly rounded to nearest
    if Fraction(f) < value:
        f = math.nextafter(f, math.inf)
    return f


def show_up(value: Fraction | int) -> str:
    """Text for a privacy quantity: its decimal when that decimal is exact, else rounded up.

    Examples
    --------
    >>> show_up(Fraction(1, 10**6)), show_up(Fraction(1, 3))
    ('1e-06', '0.33333333333333337')
    """
    x = Fraction(value)
    f = float(x)
    if Fraction(repr(f)) == x:
        return repr(f)
    return repr(round_up(x))


def round_down(value: Fraction | int | float) -> float:
    """The largest float that is ``<= value``."""
    if isinstance(value, float):
        return value
    f = float(value)
    if Fraction(f) > value:
        f = math.nextafter(f, -math.inf)
    return f
