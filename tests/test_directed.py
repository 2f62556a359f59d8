"""The one home of directed rounding: enclosures of exp, sqrt and Φ against reference values,
and the one-sided bounds built on them."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from dpcert._directed import (
    ceil_sqrt,
    exp_bounds,
    exp_down,
    exp_up,
    log_up,
    normal_cdf_interval,
    sqrt_bounds,
    sqrt_up,
)

mpmath = pytest.importorskip("mpmath")

POINTS = [Fraction(-8), Fraction(-5), Fraction(-3), Fraction(-1), Fraction(1, 3), Fraction(2)]


def _ref(x: Fraction) -> Fraction:
    """Φ(x) from mpmath at 130 digits, as a rational (error < 1e-110 relative)."""
    with mpmath.workdps(130):
        v = mpmath.ncdf(mpmath.mpf(x.numerator) / x.denominator)
        m, e = mpmath.frexp(v)
        return Fraction(int(mpmath.floor(m * 2**400))) * Fraction(2) ** (int(e) - 400)


@pytest.mark.parametrize("x", POINTS)
def test_phi_contains_the_reference(x: Fraction) -> None:
    ref = _ref(x)
    lo, hi = normal_cdf_interval(x, x)
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
    lo, hi = normal_cdf_interval(Fraction(-1), Fraction(2))
    assert lo < _ref(Fraction(-1)) and hi > _ref(Fraction(2))
    lo, hi = normal_cdf_interval(Fraction(-40), Fraction(-40))
    assert 0 < lo < _ref(Fraction(-40)) < hi < Fraction(1, 10**30)
    assert hi - lo < hi / 1000  # the Mills-ratio bounds, not a bare [0, 1e-32]
    with pytest.raises(ValueError, match="x_lo"):
        normal_cdf_interval(Fraction(1), Fraction(0))


def test_exp_and_sqrt() -> None:
    e = Fraction("2.718281828459045235360287471352662497757")  # e truncated: e − 1e-39 < this
    lo, hi = exp_bounds(Fraction(1))
    assert lo - Fraction(1, 10**39) <= e <= hi and hi - lo < Fraction(1, 10**30)
    lo, hi = exp_bounds(Fraction(-3))
    assert lo <= 1 / (e**3) + Fraction(1, 10**35) and 1 / (e**3) - Fraction(1, 10**35) <= hi
    lo, hi = exp_bounds(Fraction(100))
    assert lo < hi and abs(float(lo) / math.exp(100) - 1) < 1e-12
    lo, hi = sqrt_bounds(Fraction(2))
    assert lo * lo <= 2 <= hi * hi and hi - lo < Fraction(1, 10**25)
    with pytest.raises(ValueError, match="sqrt of -1"):
        sqrt_bounds(Fraction(-1))


@pytest.mark.parametrize("x", [Fraction(-700), Fraction(-1, 3), Fraction(0), Fraction(5, 2),
                               Fraction(700)])
def test_one_sided_bounds_bracket_the_float(x: Fraction) -> None:
    with mpmath.workdps(80):
        e = mpmath.exp(mpmath.mpf(x.numerator) / x.denominator)
        assert exp_down(x) <= e <= exp_up(x)
        if x > 0:
            assert mpmath.log(mpmath.mpf(x.numerator) / x.denominator) <= log_up(x)
    assert exp_up(x) - exp_down(x) <= exp_up(x) * Fraction(1, 2**190)
    with pytest.raises(OverflowError, match="exceeds"):
        exp_up(Fraction(10**6))


@pytest.mark.parametrize("x", [2, 3, Fraction(7, 3), Fraction(10**30 + 1, 7)])
def test_sqrt_up_is_a_close_upper_bound(x: Fraction | int) -> None:
    s = sqrt_up(x)
    assert s * s >= x and float(s * s / x) - 1 < 2**-38
    assert ceil_sqrt(int(x)) ** 2 >= int(x) > (ceil_sqrt(int(x)) - 1) ** 2
