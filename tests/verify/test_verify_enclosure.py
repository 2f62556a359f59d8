"""Proven enclosures of exp, sqrt and the normal CDF, against 30-digit reference values."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from dpcert.verify.enclosure import exp_enclosure, phi_enclosure, sqrt_enclosure

mpmath = pytest.importorskip("mpmath")

POINTS = [Fraction(-8), Fraction(-5), Fraction(-3), Fraction(-1), Fraction(1, 3), Fraction(2)]


def _ref(x: Fraction) -> Fraction:
    """Φ(x) from mpmath at 60 digits, as a rational (error < 1e-50 relative)."""
    with mpmath.workdps(60):
        v = mpmath.ncdf(mpmath.mpf(x.numerator) / x.denominator)
        m, e = mpmath.frexp(v)
        return Fraction(int(mpmath.floor(m * 2**190))) * Fraction(2) ** (int(e) - 190)


@pytest.mark.parametrize("x", POINTS)
def test_phi_contains_the_reference(x: Fraction) -> None:
    ref = _ref(x)
    lo, hi = phi_enclosure(x, x)
    tol = ref * Fraction(1, 10**45)
    assert lo - tol <= ref <= hi + tol
    assert hi - lo < ref * Fraction(1, 10**12)


def test_float_erfc_is_not_an_enclosure() -> None:
    # the deliberately wrong variant: [v, v] with v = 0.5·erfc(-x/√2) in floats misses the true
    # value at some of these points, so reporting it as exact would be false
    misses = 0
    for x in POINTS:
        v = Fraction(0.5 * math.erfc(-float(x) / math.sqrt(2)))
        ref = _ref(x)
        if abs(v - ref) > ref * Fraction(1, 10**45):
            misses += 1
    assert misses > 0


def test_interval_argument_and_tails() -> None:
    lo, hi = phi_enclosure(Fraction(-1), Fraction(2))
    assert lo < _ref(Fraction(-1)) and hi > _ref(Fraction(2))
    lo, hi = phi_enclosure(Fraction(-40), Fraction(-40))
    assert lo == 0 and 0 < hi < Fraction(1, 10**30)
    with pytest.raises(ValueError, match="x_lo"):
        phi_enclosure(Fraction(1), Fraction(0))


def test_exp_and_sqrt() -> None:
    e = Fraction("2.718281828459045235360287471352662497757")  # e truncated: e − 1e-39 < this
    lo, hi = exp_enclosure(Fraction(1))
    assert lo - Fraction(1, 10**39) <= e <= hi and hi - lo < Fraction(1, 10**30)
    lo, hi = exp_enclosure(Fraction(-3))
    assert lo <= 1 / (e**3) + Fraction(1, 10**35) and 1 / (e**3) - Fraction(1, 10**35) <= hi
    lo, hi = exp_enclosure(Fraction(100))
    assert lo < hi and abs(float(lo) / math.exp(100) - 1) < 1e-12
    lo, hi = sqrt_enclosure(Fraction(2))
    assert lo * lo <= 2 <= hi * hi and hi - lo < Fraction(1, 10**25)
    with pytest.raises(ValueError, match="a=-1"):
        sqrt_enclosure(Fraction(-1))
