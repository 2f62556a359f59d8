"""Exact reals for the rare paths: rigorous bounds on exp(-x) and a lazily refined uniform.

A real ``c`` is handled through *bounds at precision P*: integers ``lo <= c * 2**P <= hi``.
`exp_neg_bounds` gives them for ``exp(-x)`` with ``x`` a non-negative Fraction, using only
integer arithmetic (alternating Taylor series with directed rounding).  `LazyUniform` is a
uniform real ``U`` in [0, 1) of which only a binary prefix has been drawn; `lazy_less`
decides ``U < c`` exactly, drawing more bits while the bounds on ``c`` do not separate it from
the prefix.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

from dpcert.samplers.entropy import EntropySource

__all__ = ["Bounds", "LazyUniform", "exp_neg_bounds", "lazy_less", "mul_bounds"]

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


class LazyUniform:
    """A uniform real U in [0, 1) known through its first ``nbits`` bits (``prefix``).

    Conditional on the prefix, the undrawn bits are fresh and uniform, so U is uniform on
    [prefix / 2**nbits, (prefix + 1) / 2**nbits).
    """

    __slots__ = ("nbits", "prefix", "source")

    def __init__(self, prefix: int, nbits: int, source: EntropySource) -> None:
        self.prefix = prefix
        self.nbits = nbits
        self.source = source

    def extend(self) -> None:
        """Draw 64 more bits of U."""
        self.prefix = (self.prefix << 64) | int(self.source.random_uint64(1)[0])
        self.nbits += 64


def lazy_less(u: LazyUniform, bounds: Callable[[int], Bounds]) -> bool:
    """Decide ``U < c`` exactly, where ``bounds(P)`` brackets ``c * 2**P``.

    Terminates with probability 1 whenever the bounds tighten to ``c`` as ``P`` grows (each
    round is undecided with probability about ``2**-16``).
    """
    while True:
        prec = u.nbits + 16
        lo, hi = bounds(prec)
        a = u.prefix << 16
        if a + (1 << 16) <= lo:
            return True
        if a >= hi:
            return False
        u.extend()
