"""Rigorous enclosures of exp, log, sqrt and the normal CDF, in exact rational arithmetic.

Each function returns ``(lo, hi)``, two :class:`~fractions.Fraction` with ``lo ≤ f(x) ≤ hi``.
Intermediate results are rounded *outward* to ``PREC`` significant bits, so enclosures stay
small (about ``2^-PREC`` relative) and cheap, and are never wrong.  Used wherever a privacy or
accuracy statement involves a transcendental function: the decision is made on the enclosure's
safe side (see ``docs/proofs/accuracy.md``).

Methods: exp by argument halving and a Taylor series with a bounded remainder; log by
``ln y = e·ln 2 + 2·atanh((m−1)/(m+1))`` with ``m ∈ [1, 2)``; Φ by the everywhere-convergent
series ``Φ(x) = 1/2 + φ(x)·Σ x^{2n+1}/(2n+1)!!`` for ``x ≥ −12`` and the Mills-ratio bounds
``φ(x)·x/(1+x²) ≤ 1 − Φ(x) ≤ φ(x)/x`` beyond (Abramowitz & Stegun 7.1.13).
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["PREC", "exp_bounds", "log_bounds", "normal_cdf_bounds", "sqrt_bounds"]

PREC = 200
Interval = tuple[Fraction, Fraction]

# π to 60 decimals, as a rational enclosure.
_PI_DIGITS = "3141592653589793238462643383279502884197169399375105820974944"
_PI = (Fraction(int(_PI_DIGITS), 10 ** (len(_PI_DIGITS) - 1)),
       Fraction(int(_PI_DIGITS) + 1, 10 ** (len(_PI_DIGITS) - 1)))


def _shift(x: Fraction) -> int:
    """Binary exponent so that ``x·2^s`` has about PREC bits before the point."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return PREC - e


def rd(x: Fraction) -> Fraction:
    """``x`` rounded down to PREC significant bits."""
    if x == 0:
        return x
    s = _shift(abs(x))
    return Fraction(math.floor(x * Fraction(2) ** s)) / Fraction(2) ** s


def ru(x: Fraction) -> Fraction:
    """``x`` rounded up to PREC significant bits."""
    if x == 0:
        return x
    s = _shift(abs(x))
    return Fraction(math.ceil(x * Fraction(2) ** s)) / Fraction(2) ** s


def _exp_nonneg(x: Fraction) -> Interval:
    k = 0
    y = x
    while y > Fraction(1, 2):
        y /= 2
        k += 1
    lo = hi = Fraction(1)
    term = Fraction(1)
    n = 0
    while True:
        n += 1
        term = rd(term * y / n)
        lo += term
        if term < Fraction(1, 2) ** (PREC + 8):
            break
    lo = rd(lo)
    # e^y ≤ Σ_{j≤n} y^j/j! + 2·y^{n+1}/(n+1)!  for 0 ≤ y ≤ 1/2.
    t = Fraction(1)
    hi = Fraction(1)
    for j in range(1, n + 1):
        t = ru(t * y / j)
        hi += t
    hi = ru(hi + 2 * ru(t * y / (n + 1)))
    for _ in range(k):
        lo, hi = rd(lo * lo), ru(hi * hi)
    return lo, hi


def exp_bounds(x: Fraction) -> Interval:
    """Enclosure of ``exp(x)`` for rational ``x``."""
    x = Fraction(x)
    if x >= 0:
        return _exp_nonneg(x)
    lo, hi = _exp_nonneg(-x)
    return rd(1 / hi), ru(1 / lo)


def _atanh_bounds(z: Fraction) -> Interval:
    """Enclosure of atanh(z) for 0 ≤ z ≤ 1/3 (series with a geometric remainder bound)."""
    if z == 0:
        return Fraction(0), Fraction(0)
    z2 = z * z
    lo = Fraction(0)
    p = z
    n = 0
    while True:
        lo += rd(p / (2 * n + 1))
        n += 1
        p = rd(p * z2)
        if p < Fraction(1, 2) ** (PREC + 8):
            break
    lo = rd(lo)
    # remainder Σ_{j≥n} z^{2j+1}/(2j+1) ≤ z^{2n+1} / ((2n+1)(1 − z²)); recompute p from above
    pu = z
    hi = Fraction(0)
    for j in range(n):
        hi += ru(pu / (2 * j + 1))
        pu = ru(pu * z2)
    hi = ru(hi + ru(pu / ((2 * n + 1) * (1 - z2))))
    return lo, hi


_LN2: Interval | None = None


def _ln2() -> Interval:
    global _LN2
    if _LN2 is None:
        lo, hi = _atanh_bounds(Fraction(1, 3))
        _LN2 = (2 * lo, 2 * hi)
    return _LN2


def log_bounds(y: Fraction) -> Interval:
    """Enclosure of ``ln(y)`` for rational ``y > 0``."""
    y = Fraction(y)
    if y <= 0:
        raise ValueError(f"log of {y} <= 0")
    e = y.numerator.bit_length() - y.denominator.bit_length()
    m = y / Fraction(2) ** e
    while m >= 2:
        m /= 2
        e += 1
    while m < 1:
        m *= 2
        e -= 1
    a_lo, a_hi = _atanh_bounds((m - 1) / (m + 1))
    l2lo, l2hi = _ln2()
    if e >= 0:
        return rd(e * l2lo + 2 * a_lo), ru(e * l2hi + 2 * a_hi)
    return rd(e * l2hi + 2 * a_lo), ru(e * l2lo + 2 * a_hi)


def sqrt_bounds(r: Fraction) -> Interval:
    """Enclosure of ``√r`` for rational ``r ≥ 0``."""
    r = Fraction(r)
    if r < 0:
        raise ValueError(f"sqrt of {r} < 0")
    if r == 0:
        return r, r
    s = _shift(r) // 2 + PREC // 2 + 2
    scaled = r * Fraction(4) ** s
    lo_int = math.isqrt(math.floor(scaled))
    hi_int = math.isqrt(math.ceil(scaled))
    if hi_int * hi_int < scaled:
        hi_int += 1
    den = Fraction(2) ** s
    return Fraction(lo_int) / den, Fraction(hi_int) / den


def _phi_density_bounds(x: Fraction) -> Interval:
    """Enclosure of φ(x) = exp(−x²/2)/√(2π)."""
    elo, ehi = exp_bounds(-x * x / 2)
    slo, _ = sqrt_bounds(2 * _PI[0])
    _, shi = sqrt_bounds(2 * _PI[1])
    return rd(elo / shi), ru(ehi / slo)


def normal_cdf_bounds(x: Fraction) -> Interval:
    """Enclosure of the standard normal CDF Φ(x) for rational ``x``."""
    x = Fraction(x)
    if x < -12:
        t = -x
        plo, phi = _phi_density_bounds(t)
        return rd(plo * t / (1 + t * t)), ru(phi / t)
    if x > 12:
        lo, hi = normal_cdf_bounds(-x)
        return rd(1 - hi), ru(1 - lo)
    plo, phi = _phi_density_bounds(x)
    # S(x) = Σ x^{2n+1}/(2n+1)!!; terms a_n with a_{n+1}/a_n = x²/(2n+3).
    ax = abs(x)
    x2 = ax * ax
    s_lo = s_hi = Fraction(0)
    tl = th = ax
    n = 0
    while True:
        s_lo += tl
        s_hi += th
        n += 1
        tl = rd(tl * x2 / (2 * n + 1))
        th = ru(th * x2 / (2 * n + 1))
        if x2 / (2 * n + 3) <= Fraction(1, 2) and th < Fraction(1, 2) ** (PREC + 8):
            break
    s_hi += 2 * th  # geometric remainder: ratios ≤ 1/2 from here on
    s_lo, s_hi = rd(s_lo), ru(s_hi)
    if x >= 0:
        return rd(Fraction(1, 2) + plo * s_lo), ru(Fraction(1, 2) + phi * s_hi)
    return rd(Fraction(1, 2) - phi * s_hi), ru(Fraction(1, 2) - plo * s_lo)
