"""Directed rounding for the few places where privacy arithmetic needs exp / log.

Privacy parameters are exact `Fraction`; transcendental functions are evaluated
in binary64 and then widened in the safe direction.  ``math.exp`` and ``math.log`` are accurate to
a few ulps (< 2**-50 relative) on every platform CPython supports; converting a Fraction to float
adds at most half an ulp.  We widen by a relative margin of 2**-40 (about 1e-12), which dominates
both errors by four orders of magnitude, and then return exact Fractions.
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["MARGIN", "exp_down", "exp_up", "log_up", "up", "up_float"]

#: Relative widening applied to every float evaluation of exp / log in privacy arithmetic.
MARGIN = 2.0**-40


def up_float(x: float) -> float:
    """A float at least ``x`` plus the documented margin (absolute 1e-300 near zero)."""
    if math.isinf(x) or math.isnan(x):
        return x
    return x + abs(x) * MARGIN + 1e-300


def up(x: float) -> Fraction:
    """``x`` widened upwards, as an exact Fraction."""
    return Fraction(up_float(x))


def exp_up(x: Fraction) -> Fraction:
    """A Fraction ``>= e**x``."""
    return Fraction(math.exp(float(x)) * (1.0 + 4 * MARGIN)) + Fraction(1, 10**300)


def exp_down(x: Fraction) -> Fraction:
    """A Fraction ``<= e**x`` (and ``>= 0``)."""
    return Fraction(math.exp(float(x)) * (1.0 - 4 * MARGIN))


def log_up(x: Fraction) -> Fraction:
    """A Fraction ``>= log(x)`` for ``x > 0``."""
    v = math.log(float(x)) if x < Fraction(10) ** 300 else math.log(x.numerator) - math.log(
        x.denominator)
    # float(x) carries a relative error <= 2**-53, i.e. an absolute error <= 2**-53 in log.
    return up(v) + Fraction(1, 2**50)
