r"""Proven enclosures of ``exp``, ``sqrt`` and the normal CDF Φ, in exact rational arithmetic.

A refutation of an (ε, δ) claim for a Gaussian program rests on normal probabilities; a float
from ``math.erfc`` is accurate but not *proven*. Here every quantity is an interval
``[lo, hi]`` of `Fraction` that provably contains the real value:

* ``exp(x)``: the Taylor polynomial plus a geometric bound on its remainder
  (``x^K/K! · 1/(1 − x/(K+1))`` for ``0 ≤ x < K+1``), and ``exp(−x) = 1/exp(x)``;
* ``sqrt(a)``: integer square roots of ``a·4^P`` rounded down and up;
* ``erf(z) = 2/√π · Σ_k (−1)^k z^{2k+1} / (k!(2k+1))``: an alternating series whose terms
  decrease once ``k + 1 > z²``, so two consecutive partial sums enclose it; π is enclosed by its
  first 36 decimals; ``Φ(x) = (1 + erf(x/√2))/2``, monotone, so an interval of arguments maps to
  the interval of its end points. For ``|x| > 12`` the Gaussian tail bound
  ``0 < Φ(−x) < φ(x)/x < 1e-32`` is used.

Examples
--------
>>> lo, hi = phi_enclosure(Fraction(0), Fraction(0))
>>> lo <= Fraction(1, 2) <= hi
True
>>> lo, hi = phi_enclosure(Fraction(-3), Fraction(-3))
>>> round(float(lo), 12), hi - lo < Fraction(1, 10**28)
(0.001349898032, True)
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["Interval", "exp_enclosure", "phi_enclosure", "sqrt_enclosure"]

Interval = tuple[Fraction, Fraction]

#: Bits of the dyadic rounding of square roots and of Φ's arguments.
BITS = 96
#: Absolute width below which series are truncated.
TOL = Fraction(1, 2**140)
_PI_LO = Fraction("3.141592653589793238462643383279502884")
_PI_HI = Fraction("3.141592653589793238462643383279502885")
#: Beyond this |x|, Φ(x) is enclosed by the tail bound.
TAIL_X = 12


def sqrt_enclosure(a: Fraction) -> Interval:
    """``[lo, hi]`` with ``lo ≤ √a ≤ hi`` (``a ≥ 0``), of width ``≤ 2^-BITS·2``."""
    if a < 0:
        raise ValueError(f"a={a} must be >= 0")
    scale = 4**BITS
    num = a * scale
    lo_i = math.isqrt(math.floor(num))
    hi_i = math.isqrt(math.ceil(num))
    if hi_i * hi_i < num:
        hi_i += 1
    return Fraction(lo_i, 2**BITS), Fraction(hi_i, 2**BITS)


def exp_enclosure(x: Fraction) -> Interval:
    """``[lo, hi]`` with ``lo ≤ e^x ≤ hi``."""
    if x < 0:
        lo, hi = exp_enclosure(-x)
        return 1 / hi, 1 / lo
    if x > 64:  # e^x = (e^{x/2})²
        lo, hi = exp_enclosure(x / 2)
        return lo * lo, hi * hi
    total, term, k = Fraction(0), Fraction(1), 0
    while True:
        total += term
        k += 1
        term = term * x / k
        if k + 1 > 2 * x and term < TOL:
            break
    # remainder Σ_{j>=k} x^j/j! ≤ term · 1/(1 − x/(k+1))
    return total, total + term / (1 - x / (k + 1))


def _dyadic(x: Fraction, up: bool) -> Fraction:
    s = x * 2**BITS
    return Fraction(math.ceil(s) if up else math.floor(s), 2**BITS)


def _series(z: Fraction) -> Interval:
    """Enclosure of ``Σ_k (−1)^k z^{2k+1}/(k!(2k+1))`` for a dyadic ``z ≥ 0``.

    Terms are rounded down and up to ``2^-W`` in integer arithmetic; the sums of the rounded
    terms, widened by the first omitted term, enclose the series.
    """
    w = 2 * BITS + 64
    num, den = z.numerator, z.denominator
    num2, den2 = num * num, den * den
    p_num, p_den = num, den  # z^{2k+1}/k! as p_num/p_den
    lo = hi = 0
    k = 0
    tol = TOL * 2**w
    while True:
        d = p_den * (2 * k + 1)
        t_lo = (p_num << w) // d
        t_hi = -((-p_num << w) // d)
        if k % 2 == 0:
            lo, hi = lo + t_lo, hi + t_hi
        else:
            lo, hi = lo - t_hi, hi - t_lo
        p_num, p_den = p_num * num2, p_den * den2 * (k + 1)
        nxt = -((-p_num << w) // (p_den * (2 * k + 3)))  # rounded up
        if k + 1 > z * z and nxt < tol:
            if k % 2 == 0:
                lo -= nxt
            else:
                hi += nxt
            return Fraction(lo, 2**w), Fraction(hi, 2**w)
        k += 1


def _erf_point(z: Fraction) -> Interval:
    """Enclosure of ``erf(z)``."""
    if z < 0:
        lo, hi = _erf_point(-z)
        return -hi, -lo
    s_lo, s_hi = _series(z)
    r_lo, r_hi = sqrt_enclosure(_PI_LO)[0], sqrt_enclosure(_PI_HI)[1]
    lo = 2 * s_lo / r_hi if s_lo >= 0 else 2 * s_lo / r_lo
    hi = 2 * s_hi / r_lo if s_hi >= 0 else 2 * s_hi / r_hi
    return max(lo, Fraction(-1)), min(hi, Fraction(1))


def _phi_point(x: Fraction, up: bool) -> Fraction:
    """A lower (``up=False``) or upper bound on Φ(x)."""
    if x < -TAIL_X:
        return Fraction(1, 10**32) if up else Fraction(0)
    if x > TAIL_X:
        return Fraction(1) if up else 1 - Fraction(1, 10**32)
    s_lo, s_hi = sqrt_enclosure(Fraction(2))
    # z = x/√2, rounded to a dyadic in the direction that keeps the bound
    if x >= 0:
        z = _dyadic(x / s_lo, True) if up else _dyadic(x / s_hi, False)
    else:
        z = _dyadic(x / s_hi, True) if up else _dyadic(x / s_lo, False)
    e_lo, e_hi = _erf_point(z)
    return (1 + (e_hi if up else e_lo)) / 2


def phi_enclosure(x_lo: Fraction, x_hi: Fraction) -> Interval:
    """``[lo, hi]`` containing Φ(x) for every ``x`` in ``[x_lo, x_hi]`` (Φ: standard normal CDF)."""
    if x_lo > x_hi:
        raise ValueError(f"x_lo={x_lo} must be <= x_hi={x_hi}")
    return _phi_point(x_lo, False), _phi_point(x_hi, True)
