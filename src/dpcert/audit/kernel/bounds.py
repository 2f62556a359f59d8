"""Exact Clopper–Pearson bounds and the privacy-loss bounds built from them.

The auditor turns counts of an event into an interval for its probability that holds with a
stated confidence, then into a lower bound on ε.  SciPy is not a dependency of dpcert, so the
Clopper–Pearson bounds (Clopper & Pearson, *Biometrika* 1934) are computed here: the regularized
incomplete beta function ``I_x(a, b)`` by its continued fraction (DLMF 8.17.22, evaluated with
the modified Lentz method) with ``math.lgamma`` for the prefactor, and the beta quantile by
bisection on ``log p``.  Bisection keeps the endpoint on the *conservative* side (the lower
bound never above, the upper bound never below the exact root, up to the ~1e-12 relative
accuracy of the series, which a final relative nudge of 1e-9 covers).

Why exact bounds: for ``k`` successes in ``n`` independent trials the one-sided bound
``cp_lower(k, n, alpha)`` satisfies ``P[cp_lower(K, n, alpha) > p] <= alpha`` for every ``p``
(the test inverts the binomial tail exactly, no normal approximation).

Examples
--------
>>> round(cp_lower(50, 100, 0.025), 4), round(cp_upper(50, 100, 0.025), 4)
(0.3983, 0.6017)
>>> cp_lower(0, 10, 0.05), cp_upper(10, 10, 0.05)
(0.0, 1.0)
>>> round(epsilon_lower(0.30, 0.10), 4)   # ln(0.3 / 0.1)
1.0986
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpcert._numbers import as_fraction, round_down
from dpcert._types import Array
from dpcert._validate import check_int
from dpcert.errors import InvalidParameter

__all__ = [
    "betainc",
    "cp_lower",
    "cp_upper",
    "delta_lower",
    "epsilon_lower",
    "per_bound_alpha",
    "wilson_lower",
    "wilson_upper",
]

_TINY = 1e-300
_EPS = 1e-15
_NUDGE = 1e-9


def _check_alpha(alpha: float) -> float:
    if not (isinstance(alpha, (int, float)) and 0.0 < float(alpha) < 1.0):
        raise InvalidParameter(f"alpha={alpha!r} must be in (0, 1)")
    return float(alpha)


def _beta_cf(a: float, b: float, x: float) -> float:
    """Continued fraction of I_x(a, b) (DLMF 8.17.22) by modified Lentz; for x < (a+1)/(a+b+2)."""
    max_iter = 1000 + int(20 * math.sqrt(max(a, b)))
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    f = d
    for m in range(1, max_iter + 1):
        m2 = 2 * m
        # even term d_{2m}
        num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + num / c
        c = c if abs(c) > _TINY else _TINY
        f *= c * d
        # odd term d_{2m+1}
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + num / c
        c = c if abs(c) > _TINY else _TINY
        step = c * d
        f *= step
        if abs(step - 1.0) < _EPS:
            return f
    raise ArithmeticError(f"betainc continued fraction did not converge (a={a}, b={b}, x={x})")


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)`` for ``a, b > 0``, ``0 <= x <= 1``.

    Examples
    --------
    >>> round(betainc(2.0, 3.0, 0.4), 6)   # 1 - 0.6**4 - 4 * 0.4 * 0.6**3
    0.5248
    """
    if not (a > 0 and b > 0):
        raise InvalidParameter(f"betainc needs a > 0 and b > 0 (a={a!r}, b={b!r})")
    if not 0.0 <= x <= 1.0:
        raise InvalidParameter(f"x={x!r} must be in [0, 1]")
    if x == 0.0 or x == 1.0:
        return x
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return min(1.0, math.exp(log_front) * _beta_cf(a, b, x) / a)
    return max(0.0, 1.0 - math.exp(log_front) * _beta_cf(b, a, 1.0 - x) / b)


def _check_counts(k: int, n: int) -> tuple[int, int]:
    n = check_int(n, "n", minimum=1)
    k = check_int(k, "k", minimum=0)
    if k > n:
        raise InvalidParameter(f"k={k!r} must be <= n={n!r}")
    return k, n


def _bisect_log(pred: Callable[[float], bool], lo: float, hi: float, steps: int = 80
                ) -> tuple[float, float]:
    """Shrink [lo, hi] (0 < lo < hi <= 1) keeping pred(lo) False and pred(hi) True."""
    a, b = math.log(lo), math.log(hi)
    for _ in range(steps):
        mid = 0.5 * (a + b)
        if pred(math.exp(mid)):
            b = mid
        else:
            a = mid
        if b - a < 1e-13:
            break
    return math.exp(a), min(1.0, math.exp(b))


def cp_lower(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper–Pearson lower bound on p from ``k`` of ``n``: ``P[bound > p] <= alpha``.

    It is the ``alpha`` quantile of Beta(k, n − k + 1): the p at which ``P_p[K >= k] = alpha``.
    """
    k, n = _check_counts(k, n)
    alpha = _check_alpha(alpha)
    if k == 0:
        return 0.0
    if k == n:
        return math.exp(math.log(alpha) / n) * (1.0 - _NUDGE)
    a, b = float(k), float(n - k + 1)
    # I_p(k, n-k+1) = P_p[K >= k] increases with p; find where it crosses alpha.
    lo, _ = _bisect_log(lambda p: betainc(a, b, p) > alpha, _TINY, 1.0)
    return max(0.0, lo * (1.0 - _NUDGE))


def cp_upper(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper–Pearson upper bound on p from ``k`` of ``n``: ``P[bound < p] <= alpha``.

    It is the ``1 - alpha`` quantile of Beta(k + 1, n − k): the p at which ``P_p[K <= k] = alpha``.
    """
    k, n = _check_counts(k, n)
    alpha = _check_alpha(alpha)
    if k == n:
        return 1.0
    if k == 0:
        return min(1.0, -math.expm1(math.log(alpha) / n) * (1.0 + _NUDGE))
    a, b = float(k + 1), float(n - k)
    # P_p[K <= k] = 1 - I_p(k+1, n-k) decreases with p; find where it drops to alpha.
    _, hi = _bisect_log(lambda p: betainc(a, b, p) >= 1.0 - alpha, _TINY, 1.0)
    return min(1.0, hi * (1.0 + _NUDGE))


def per_bound_alpha(confidence: float, bounds: int) -> float:
    """The error level of each of ``bounds`` one-sided bounds so all hold jointly (Bonferroni).

    Examples
    --------
    >>> per_bound_alpha(0.5, 4)
    0.125
    >>> per_bound_alpha(0.95, 10) <= 0.005   # rounded down: never more error than stated
    True
    """
    if not (isinstance(confidence, (int, float)) and 0.0 < float(confidence) < 1.0):
        raise InvalidParameter(f"confidence={confidence!r} must be in (0, 1)")
    bounds = check_int(bounds, "bounds", minimum=1)
    return round_down((1 - as_fraction(confidence, "confidence")) / bounds)


def epsilon_lower(p_lower: float, q_upper: float, delta: float = 0.0) -> float:
    """``ln((p_lower − δ) / q_upper)``: a lower bound on ε when ``P[M(x)∈S] >= p_lower`` and
    ``P[M(x')∈S] <= q_upper`` (an (ε, δ)-DP mechanism has ``P ≤ e^ε Q + δ``).

    Returns ``-inf`` when ``p_lower <= δ`` and ``inf`` when ``q_upper == 0``; the result is
    rounded down by one ulp so float rounding never overstates it.
    """
    num = p_lower - delta
    if num <= 0.0:
        return -math.inf
    if q_upper <= 0.0:
        return math.inf
    return math.nextafter(math.log(num) - math.log(q_upper), -math.inf)


def delta_lower(p_lower: float, q_upper: float, epsilon: float) -> float:
    """``p_lower − e^ε q_upper``: a lower bound on the δ of an (ε, δ)-DP mechanism (≥ 0)."""
    return max(0.0, math.nextafter(p_lower - math.exp(epsilon) * q_upper, -math.inf))


def _wilson(p: Array, n: float, z: float, sign: float) -> Array:
    z2 = z * z
    centre = p + z2 / (2.0 * n)
    half = z * np.sqrt(np.maximum(p * (1.0 - p), 0.0) / n + z2 / (4.0 * n * n))
    out: Array = np.clip((centre + sign * half) / (1.0 + z2 / n), 0.0, 1.0)
    return out


def wilson_lower(p: Array, n: float, z: float) -> Array:
    """Vectorised Wilson score lower bound (an approximation, used only to *rank* events)."""
    return _wilson(np.asarray(p, dtype=np.float64), float(n), float(z), -1.0)


def wilson_upper(p: Array, n: float, z: float) -> Array:
    """Vectorised Wilson score upper bound (an approximation, used only to *rank* events)."""
    return _wilson(np.asarray(p, dtype=np.float64), float(n), float(z), 1.0)
