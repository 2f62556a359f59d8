"""Directed rounding and rigorous enclosures of exp, log, sqrt and the normal CDF.

The one home of the transcendental arithmetic that privacy statements rest on: samplers,
mechanisms, accounting and the verifier all call this module, so a bound is proven once.

Three tiers, each stating what it guarantees:

* **integer fixed point** (`exp_neg_bounds`, `mul_bounds`): integers
  ``lo ≤ c·2^P ≤ hi`` for ``c = e^{−x}``, at any precision ``P`` the caller asks for (the exact
  samplers refine ``P`` until a coin is decided);
* **rational enclosures** (`exp_bounds`, `log_bounds`, `sqrt_bounds`,
  `normal_cdf_bounds`, `normal_cdf_interval`): two
  `Fraction` ``lo ≤ f(x) ≤ hi``, rounded *outward* to ``PREC`` significant
  bits, so enclosures stay small (about ``2^-PREC`` relative), cheap and never wrong; the
  one-sided forms `exp_up`, `exp_down`, `log_up`, `sqrt_up` and
  `ceil_sqrt` are their safe ends;
* **widened floats** (`up_float`, `up`): a binary64 result of a float algorithm
  (an accountant's optimisation over orders) widened by the relative `MARGIN`, which
  dominates the few-ulp error of ``math.exp``/``math.log`` by four orders of magnitude.

Methods: ``e^{−x}`` by an alternating integer Taylor series with counted rounding errors and
binary powers of ``e^{−1}``; ``ln y = e·ln 2 + 2·atanh((m−1)/(m+1))`` with ``m ∈ [1, 2)``; Φ by
the everywhere-convergent series ``Φ(x) = 1/2 + φ(x)·Σ x^{2n+1}/(2n+1)!!`` for ``|x| ≤ 12``
and the Mills-ratio bounds ``φ(x)·x/(1+x²) ≤ 1 − Φ(x) ≤ φ(x)/x`` beyond (Abramowitz & Stegun
7.1.13).

Bounded work: every argument is first rounded outward to PREC bits (each function here is
monotone), the series run in integer fixed point, and exp saturates below ``−EXP_ARG_MAX``, so
the cost of a call does not grow with the size or magnitude of its argument (a quote at ε = 1e9
costs what one at ε = 1 does; ``docs/proofs/accuracy.md``, "Bounded work").

Examples
--------
>>> lo, hi = normal_cdf_interval(Fraction(-3), Fraction(-3))
>>> round(float(lo), 12), hi - lo < Fraction(1, 10**50)
(0.001349898032, True)
>>> Fraction(2718281828459045, 10**15) < exp_down(Fraction(1)) < exp_up(Fraction(1)) < 2.7182818285
True
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from dpcert.errors import InvalidParameter

__all__ = [
    "EXP_ARG_MAX",
    "MARGIN",
    "PREC",
    "Bounds",
    "Interval",
    "ceil_sqrt",
    "exp_bounds",
    "exp_down",
    "exp_floor",
    "exp_lower",
    "exp_neg_bounds",
    "exp_up",
    "log_bounds",
    "log_up",
    "mul_bounds",
    "normal_cdf_bounds",
    "normal_cdf_interval",
    "rd",
    "ru",
    "sqrt_bounds",
    "sqrt_up",
    "up",
    "up_float",
]

# ------------------------------------------------------------------ integer fixed point
#: (lo, hi) with lo <= c * 2**P <= hi for the precision P the pair was computed at.
Bounds = tuple[int, int]


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def mul_bounds(a: Bounds, b: Bounds, prec: int) -> Bounds:
    """Bounds of the product of two non-negative reals, both at precision ``prec``."""
    return (a[0] * b[0]) >> prec, _ceil_div(a[1] * b[1], 1 << prec)


def _exp_neg_small(num: int, den: int, prec: int) -> Bounds:
    """Bounds on exp(-num/den) * 2**prec for 0 <= num/den <= 1.

    Terms t_i = x**i / i! are non-increasing; each is computed by floor division from the last, so
    the computed T_i underestimates t_i * 2**W by at most i units.  The alternating series is
    bracketed by consecutive partial sums; the final bounds widen by the accumulated error.
    """
    guard = 2 * prec.bit_length() + 8
    w = prec + guard
    one = 1 << w
    total = one
    term = one
    err = 0
    i = 0
    while True:
        i += 1
        term = term * num // (den * i)
        err += i
        if term == 0:
            break
        total = total - term if i % 2 else total + term
    # |total - exp(-x) 2^W| <= err + 1 (truncation of a non-increasing alternating series
    # by a term that is < 1 unit, plus the per-term floor errors).
    slack = err + 2
    lo = max(total - slack, 0) >> guard
    hi = _ceil_div(total + slack, 1 << guard)
    return lo, min(hi, 1 << prec)


@lru_cache(maxsize=64)
def _exp_neg_one(prec: int) -> Bounds:
    return _exp_neg_small(1, 1, prec)


def exp_neg_bounds(x: Fraction, prec: int) -> Bounds:
    """Integers ``lo <= exp(-x) * 2**prec <= hi`` for a rational ``x >= 0``, with hi - lo small.

    Examples
    --------
    >>> lo, hi = exp_neg_bounds(Fraction(1, 3), 60)
    >>> hi - lo < 100 and abs(lo / 2**60 - 0.7165313105737893) < 1e-15
    True
    """
    if x < 0:
        raise ValueError(f"x={x} must be >= 0")
    n = x.numerator // x.denominator
    frac = x - n
    # exp(-n) < 2^-(1.44 n): beyond the precision it only contributes [0, 1].
    if n > 2 * prec + 64:
        return 0, 1
    p2 = prec + 2 * n.bit_length() + 8
    res = _exp_neg_small(frac.numerator, frac.denominator, p2)
    if n:
        base = _exp_neg_one(p2)
        k = n
        acc: Bounds = (1 << p2, 1 << p2)
        while k:
            if k & 1:
                acc = mul_bounds(acc, base, p2)
            k >>= 1
            if k:
                base = mul_bounds(base, base, p2)
        res = mul_bounds(res, acc, p2)
    shift = p2 - prec
    return res[0] >> shift, _ceil_div(res[1], 1 << shift)




# ------------------------------------------------------------------ rational enclosures

#: Significant bits of every rational enclosure.
PREC = 200
#: Largest |x| at which :func:`exp_bounds` computes; beyond, it saturates (see there).
EXP_ARG_MAX = 2048
Interval = tuple[Fraction, Fraction]

# π to 60 decimals, as a rational enclosure.
_PI_DIGITS = "3141592653589793238462643383279502884197169399375105820974944"
_PI = (Fraction(int(_PI_DIGITS), 10 ** (len(_PI_DIGITS) - 1)),
       Fraction(int(_PI_DIGITS) + 1, 10 ** (len(_PI_DIGITS) - 1)))


def _shift(x: Fraction) -> int:
    """Binary exponent so that ``x·2^s`` has about PREC bits before the point."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return PREC - e


def _round(x: Fraction, up: bool) -> Fraction:
    """``x`` rounded down (or up) to PREC significant bits, in integer arithmetic: the cost
    depends on the sizes of ``x``'s numerator and denominator, never on its magnitude."""
    if x == 0:
        return x
    n, d = x.numerator, x.denominator
    s = _shift(abs(x))
    num, den = (n << s, d) if s >= 0 else (n, d << -s)
    q = -((-num) // den) if up else num // den
    return Fraction(q, 1 << s) if s >= 0 else Fraction(q << -s)


def rd(x: Fraction) -> Fraction:
    """``x`` rounded down to PREC significant bits."""
    return _round(Fraction(x), False)


def ru(x: Fraction) -> Fraction:
    """``x`` rounded up to PREC significant bits."""
    return _round(Fraction(x), True)


def _exp_neg(x: Fraction) -> Interval:
    """Enclosure of ``e^{−x}`` for a PREC-bit dyadic ``0 ≤ x ≤ EXP_ARG_MAX``, relative width
    about ``2^-PREC``: integer bounds at absolute precision ``2^-P`` with ``P`` large enough
    that ``e^{−x}·2^P ≥ 2^{PREC+16}`` (`exp_neg_bounds`)."""
    p = PREC + 16 + math.ceil(x * Fraction(3, 2))  # 3/2 > log2(e)
    lo, hi = exp_neg_bounds(x, p)
    return Fraction(lo, 1 << p), Fraction(hi, 1 << p)


@lru_cache(maxsize=1024)
def exp_bounds(x: Fraction) -> Interval:
    """Enclosure of ``exp(x)`` for rational ``x ≤ EXP_ARG_MAX``.

    The argument is first rounded outward to PREC bits (exp is increasing); the series run in
    integer fixed point with directed rounding, so the work is bounded by that at
    ``|x| = EXP_ARG_MAX`` whatever ``x``.  Below ``−EXP_ARG_MAX`` the enclosure saturates at
    ``(0, e^{−EXP_ARG_MAX})`` (still an enclosure: ``0 < e^x ≤ e^{−EXP_ARG_MAX}``), so no
    result has more than about 3000 bits; a caller that compares it with a target below that
    floor must refuse the target (`keyed_threshold` does).
    Above ``EXP_ARG_MAX`` use `exp_lower`: an upper bound would not fit in memory.
    """
    x = Fraction(x)
    if x > EXP_ARG_MAX:
        raise ValueError(f"exp_bounds({x}): the argument exceeds {EXP_ARG_MAX}; use exp_lower")
    if x < -EXP_ARG_MAX:
        return Fraction(0), _exp_floor()
    x_lo, x_hi = rd(x), ru(x)

    def lower(y: Fraction) -> Fraction:
        return _exp_neg(-y)[0] if y <= 0 else rd(1 / _exp_neg(y)[1])

    def upper(y: Fraction) -> Fraction:
        return _exp_neg(-y)[1] if y <= 0 else ru(1 / _exp_neg(y)[0])

    return rd(lower(x_lo)), ru(upper(x_hi))


_EXP_FLOOR: Fraction | None = None


def _exp_floor() -> Fraction:
    """``hi`` of the enclosure of ``e^{−EXP_ARG_MAX}`` (cached)."""
    global _EXP_FLOOR
    if _EXP_FLOOR is None:
        _EXP_FLOOR = ru(_exp_neg(Fraction(EXP_ARG_MAX))[1])
    return _EXP_FLOOR


def exp_floor() -> Fraction:
    """The saturation value of `exp_bounds`: an upper bound on ``e^x`` for every
    ``x ≤ −EXP_ARG_MAX`` (about ``2^-2954``)."""
    return _exp_floor()


def exp_lower(x: Fraction) -> Fraction:
    """A lower bound on ``exp(x)`` for any rational ``x``: ``e^x ≥ e^{min(x, EXP_ARG_MAX)}``.

    Examples
    --------
    >>> exp_lower(Fraction(10**9)) == exp_lower(Fraction(EXP_ARG_MAX)) > 2**2954
    True
    """
    return exp_bounds(min(Fraction(x), Fraction(EXP_ARG_MAX)))[0]


def _atanh_bounds(z: Fraction) -> Interval:
    """Enclosure of atanh(z) for 0 ≤ z ≤ 1/3: ``Σ z^{2j+1}/(2j+1)`` in integer fixed point.

    Lower: every term floored, the series truncated (all terms are positive).  Upper: every
    term ceiled, plus the remainder ``Σ_{i≥j} z^{2i+1}/(2i+1) ≤ p_j/((2j+1)(1 − z²))`` where
    ``p_j ≥ z^{2j+1}·2^W`` is the ceiled power.
    """
    a, b = z.numerator, z.denominator
    if a == 0:
        return Fraction(0), Fraction(0)
    w = PREC + 24
    a2, b2 = a * a, b * b
    p = (a << w) // b
    lo = 0
    j = 0
    while p:
        lo += p // (2 * j + 1)
        p = p * a2 // b2
        j += 1
    p = -((-a << w) // b)
    hi = 0
    j = 0
    while p > 16:
        hi += -((-p) // (2 * j + 1))
        p = -((-p * a2) // b2)
        j += 1
    hi += -((-p * b2) // ((2 * j + 1) * (b2 - a2)))
    return Fraction(lo, 1 << w), Fraction(hi, 1 << w)


_LN2: Interval | None = None


def _ln2() -> Interval:
    global _LN2
    if _LN2 is None:
        lo, hi = _atanh_bounds(Fraction(1, 3))
        _LN2 = (2 * lo, 2 * hi)
    return _LN2


@lru_cache(maxsize=1024)
def log_bounds(y: Fraction) -> Interval:
    """Enclosure of ``ln(y)`` for rational ``y > 0``.

    ``y`` is first rounded outward to PREC bits (ln is increasing), so the cost does not depend
    on the size of ``y``'s numerator or denominator; the enclosure widens by ``2^-PREC``.
    """
    y = Fraction(y)
    if y <= 0:
        raise ValueError(f"log of {y} <= 0")
    return _log_dyadic(rd(y))[0], _log_dyadic(ru(y))[1]


def _log_dyadic(y: Fraction) -> Interval:
    """Enclosure of ``ln(y)`` for a positive PREC-bit dyadic ``y``."""
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
    """Enclosure of ``√r`` for rational ``r ≥ 0`` (``r`` rounded outward to PREC bits first)."""
    r = Fraction(r)
    if r < 0:
        raise ValueError(f"sqrt of {r} < 0")
    if r == 0:
        return r, r
    return _sqrt_dyadic(rd(r))[0], _sqrt_dyadic(ru(r))[1]


def _sqrt_dyadic(r: Fraction) -> Interval:
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


@lru_cache(maxsize=1024)
def normal_cdf_bounds(x: Fraction) -> Interval:
    """Enclosure of the standard normal CDF Φ(x) for rational ``x``.

    ``x`` is rounded outward to PREC bits first (Φ is increasing).  For ``|x| > 12`` the
    Mills-ratio bounds take a fixed number of operations; between, the series has at most
    about ``x² + PREC`` terms (``x² ≤ 144``).
    """
    x = Fraction(x)
    x_lo, x_hi = rd(x), ru(x)
    if x_lo == x_hi:
        return _normal_cdf_dyadic(x_lo)
    return _normal_cdf_dyadic(x_lo)[0], _normal_cdf_dyadic(x_hi)[1]


def _normal_cdf_dyadic(x: Fraction) -> Interval:
    if x < -12:
        t = -x
        plo, phi = _phi_density_bounds(t)
        return rd(plo * t / (1 + t * t)), ru(phi / t)
    if x > 12:
        lo, hi = _normal_cdf_dyadic(-x)
        return rd(1 - hi), ru(1 - lo)
    plo, phi = _phi_density_bounds(x)
    s_lo, s_hi = _phi_series(abs(x))
    if x >= 0:
        return rd(Fraction(1, 2) + plo * s_lo), ru(Fraction(1, 2) + phi * s_hi)
    return rd(Fraction(1, 2) - phi * s_hi), ru(Fraction(1, 2) - plo * s_lo)


def _phi_series(x: Fraction) -> Interval:
    """Enclosure of ``S(x) = Σ_n x^{2n+1}/(2n+1)!!`` for ``0 ≤ x ≤ 12`` in integer fixed point.

    Terms ``a_n`` with ``a_{n+1}/a_n = x²/(2n+3)``.  Lower: floored terms, truncated (all
    positive).  Upper: ceiled terms until the ratio is ``≤ 1/2`` and the term is a few units,
    then ``+ 2·a_n`` bounds the geometric remainder.
    """
    a, b = x.numerator, x.denominator
    w = PREC + 24
    a2, b2 = a * a, b * b
    t = (a << w) // b
    lo = 0
    n = 0
    while t:
        lo += t
        n += 1
        t = t * a2 // (b2 * (2 * n + 1))
    t = -((-a << w) // b)
    hi = 0
    n = 0
    while True:
        hi += t
        n += 1
        t = -((-t * a2) // (b2 * (2 * n + 1)))
        if 2 * a2 <= b2 * (2 * n + 3) and t <= 16:
            break
    hi += 2 * t
    return Fraction(lo, 1 << w), Fraction(hi, 1 << w)


def normal_cdf_interval(x_lo: Fraction, x_hi: Fraction) -> Interval:
    """``(lo, hi)`` containing Φ(x) for every ``x`` in ``[x_lo, x_hi]`` (Φ is increasing)."""
    if x_lo > x_hi:
        raise ValueError(f"x_lo={x_lo} must be <= x_hi={x_hi}")
    return normal_cdf_bounds(x_lo)[0], normal_cdf_bounds(x_hi)[1]


# ------------------------------------------------------------------ one-sided rational bounds


def exp_up(x: Fraction) -> Fraction:
    """A Fraction ``≥ e^x``; ``OverflowError`` above ``EXP_ARG_MAX`` (the bound would not fit)."""
    if x > EXP_ARG_MAX:
        raise OverflowError(f"exp_up({x}): the argument exceeds {EXP_ARG_MAX}")
    return exp_bounds(Fraction(x))[1]


def exp_down(x: Fraction) -> Fraction:
    """A Fraction ``≤ e^x`` (and ``≥ 0``), for any rational ``x``."""
    return exp_lower(Fraction(x))


def log_up(x: Fraction) -> Fraction:
    """A Fraction ``≥ ln x`` for ``x > 0``."""
    return log_bounds(Fraction(x))[1]


def sqrt_up(x: int | Fraction, bits: int = 40) -> Fraction:
    """A rational upper bound on √x within a relative ``2^-bits`` (exact for squares).

    Examples
    --------
    >>> sqrt_up(4), sqrt_up(Fraction(9, 4))
    (Fraction(2, 1), Fraction(3, 2))
    >>> s = sqrt_up(2)
    >>> s * s >= 2 and float(s) - 2 ** 0.5 < 1e-11
    True
    """
    q = Fraction(x)
    if q < 0:
        raise InvalidParameter(f"x={x} must be >= 0")
    n, d = q.numerator, q.denominator
    rn, rd_ = math.isqrt(n), math.isqrt(d)
    if rn * rn == n and rd_ * rd_ == d:
        return Fraction(rn, rd_)
    shift = max(0, bits - (n.bit_length() - d.bit_length()) // 2 + 2)
    # isqrt(floor(x·4^shift)) + 1 > √(x·4^shift), so dividing by 2^shift gives a bound ≥ √x
    return Fraction(math.isqrt((n << (2 * shift)) // d) + 1, 1 << shift)


def ceil_sqrt(m: int) -> int:
    """``⌈√m⌉`` for an integer ``m ≥ 0``: an integer upper bound on √m (exact for squares).

    Examples
    --------
    >>> ceil_sqrt(16), ceil_sqrt(17)
    (4, 5)
    """
    r = math.isqrt(m)
    return r if r * r == m else r + 1


# ------------------------------------------------------------------ widened floats

#: Relative widening applied to every float result of a float algorithm in privacy arithmetic.
MARGIN = 2.0**-40


def up_float(x: float) -> float:
    """A float at least ``x`` plus the documented margin (absolute 1e-300 near zero)."""
    if math.isinf(x) or math.isnan(x):
        return x
    return x + abs(x) * MARGIN + 1e-300


def up(x: float) -> Fraction:
    """``x`` widened upwards, as an exact Fraction."""
    return Fraction(up_float(x))
