"""Accuracy of additive noise: tail half-widths, their inverses, and variances ("risk").

For noise ``X`` and a level ``alpha``, the *accuracy* is the half-width ``a`` with
``P(|X| > a) ≤ alpha``.  Every function here is on the safe side: accuracies are rounded **up**,
scales for a target accuracy are rounded **down**, and transcendental quantities are decided with
rigorous rational enclosures (`dpcert._directed`), never with a bare float.

==============================  =================================================================
noise                           tail used
==============================  =================================================================
Laplace(b)                      ``P(|X| > a) = exp(−a/b)``, so ``a = b·ln(1/α)``
discrete Laplace(t) on ℤ        ``P(|X| > a) = 2q^{a+1}/(1+q)``, ``q = e^{−1/t}`` (exact)
Gaussian(σ)                     ``P(|X| > a) = 2Φ(−a/σ)``
discrete Gaussian(σ) on ℤ       ``P(|X| > a) ≤ 2Φ(−a/σ)`` (rigorous upper bound, see below)
==============================  =================================================================

The discrete Gaussian bound: the tail sum ``Σ_{x>a} e^{−x²/2σ²}`` is at most the integral from
``a`` (the summand decreases), and the normaliser ``Σ_{x∈ℤ} e^{−x²/2σ²} = √(2π)σ·Σ_k e^{−2π²σ²k²}``
(Poisson summation) is at least ``√(2π)σ``; see ``docs/proofs/accuracy.md`` and Canonne, Kamath &
Steinke, *The Discrete Gaussian for Differential Privacy* (NeurIPS 2020).

The Lecture 18 notes call ``E[noise²]`` the *risk*; the ``*_variance`` functions return it.

Examples
--------
>>> from fractions import Fraction
>>> laplace_accuracy(1, 0.05)        # ln 20 = 2.9957..., rounded up
2.9957322735539913
>>> discrete_laplace_accuracy(Fraction(1), Fraction(1, 20))
Fraction(3, 1)
>>> discrete_gaussian_accuracy(Fraction(5, 2), Fraction(1, 20))
Fraction(5, 1)
>>> laplace_variance(Fraction(1, 2))
Fraction(1, 2)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from statistics import NormalDist

from dpcert._directed import exp_bounds, log_bounds, normal_cdf_bounds
from dpcert._numbers import Number, round_down, round_up
from dpcert._validate import check_nonnegative, check_positive, check_probability
from dpcert.core.search import bisect, halfway, int_halfway

__all__ = [
    "discrete_gaussian_accuracy",
    "discrete_gaussian_variance",
    "discrete_laplace_accuracy",
    "discrete_laplace_scale_for_accuracy",
    "discrete_laplace_variance",
    "gaussian_accuracy",
    "gaussian_scale_for_accuracy",
    "gaussian_variance",
    "laplace_accuracy",
    "laplace_scale_for_accuracy",
    "laplace_variance",
]


def _alpha(alpha: Number) -> Fraction:
    return check_probability(alpha, "alpha", open_low=True, open_high=True)


# ---------------------------------------------------------------- Laplace (continuous)

def laplace_accuracy(scale: Number, alpha: Number) -> float:
    """Half-width ``b·ln(1/α)`` of Laplace(b) noise at level ``alpha``, rounded up."""
    b, a = check_positive(scale, "scale"), _alpha(alpha)
    return round_up(b * log_bounds(1 / a)[1])


def laplace_scale_for_accuracy(accuracy: Number, alpha: Number) -> float:
    """Largest Laplace scale whose accuracy at ``alpha`` is at most ``accuracy`` (rounded down)."""
    acc, a = check_positive(accuracy, "accuracy"), _alpha(alpha)
    return round_down(acc / log_bounds(1 / a)[1])


def laplace_variance(scale: Number) -> Fraction:
    """``E[X²] = 2b²`` for Laplace(b) (exact)."""
    b = check_positive(scale, "scale")
    return 2 * b * b


# ---------------------------------------------------------------- discrete Laplace

def _dlap_log_ratio_bounds(t: Fraction, alpha: Fraction) -> tuple[Fraction, Fraction]:
    """Enclosure of ``t·(ln 2 − ln α − ln(1+q))``, the threshold ``a + 1`` must reach."""
    q_lo, q_hi = exp_bounds(-1 / t)
    l_lo = log_bounds(2 / alpha)[0] - log_bounds(1 + q_hi)[1]
    l_hi = log_bounds(2 / alpha)[1] - log_bounds(1 + q_lo)[0]
    return t * l_lo, t * l_hi


def discrete_laplace_accuracy(scale: Number, alpha: Number) -> Fraction:
    """Smallest integer ``a ≥ 0`` with ``P(|X| > a) ≤ alpha`` for ``X ~ DLap(scale)`` on ℤ.

    ``P(X = x) ∝ exp(−|x|/scale)``; the tail is exactly ``2q^{a+1}/(1+q)`` with
    ``q = exp(−1/scale)``.  The comparison with ``alpha`` is decided on an enclosure of width
    about ``2^-190``; in the (never observed) case that it cannot be decided, the larger, safe
    answer is returned.
    """
    t, a = check_positive(scale, "scale"), _alpha(alpha)
    _, hi = _dlap_log_ratio_bounds(t, a)
    return Fraction(max(0, math.ceil(hi) - 1))


def discrete_laplace_scale_for_accuracy(accuracy: Number, alpha: Number) -> float:
    """Largest scale (rounded down) with discrete Laplace accuracy ≤ ``accuracy`` at ``alpha``."""
    acc, a = check_nonnegative(accuracy, "accuracy"), _alpha(alpha)
    target = Fraction(math.floor(acc) + 1)

    def ok(t: float) -> bool:
        return _dlap_log_ratio_bounds(Fraction(t), a)[1] <= target

    lo = hi = float(target) / max(math.log(2 / float(a)), 1e-300)
    while not ok(lo):
        lo /= 2
    while ok(hi):
        hi *= 2
    return bisect(ok, lo, hi, midpoint=halfway)


def discrete_laplace_variance(scale: Number) -> float:
    """``E[X²] = 2q/(1−q)²``, ``q = e^{−1/t}``, for ``X ~ DLap(t)``, rounded up."""
    t = check_positive(scale, "scale")
    _, q_hi = exp_bounds(-1 / t)
    return round_up(2 * q_hi / (1 - q_hi) ** 2)


# ---------------------------------------------------------------- Gaussian

def _two_sided_tail_hi(a: Fraction, sigma: Fraction) -> Fraction:
    """Upper bound on ``2Φ(−a/σ)``."""
    return 2 * normal_cdf_bounds(-a / sigma)[1]


def _z_guess(alpha: Fraction) -> float:
    """Float estimate of Φ⁻¹(1 − α/2) (only a starting point for the rigorous search)."""
    half = float(alpha) / 2
    if half <= 0.0:
        return math.sqrt(2 * (float(log_bounds(2 / alpha)[1])))
    return max(0.0, -NormalDist().inv_cdf(min(half, 0.5)))


def _z_up(alpha: Fraction) -> Fraction:
    """A rational ``z`` (slightly above Φ⁻¹(1−α/2)) with ``2Φ(−z) ≤ alpha``, rigorously."""
    z0 = _z_guess(alpha)
    lo, hi = max(0.0, z0 * (1 - 1e-9) - 1e-12), z0 * (1 + 1e-9) + 1e-12
    while _two_sided_tail_hi(Fraction(hi), Fraction(1)) > alpha:
        hi = hi * 2 + 1e-3
    if _two_sided_tail_hi(Fraction(lo), Fraction(1)) <= alpha:
        return Fraction(lo)
    return Fraction(hi)  # within a relative 1e-9 of the exact quantile, on the safe side


def gaussian_accuracy(sigma: Number, alpha: Number) -> float:
    """Half-width ``a`` with ``P(|X| > a) ≤ alpha`` for ``X ~ N(0, σ²)``, rounded up."""
    s, a = check_positive(sigma, "sigma"), _alpha(alpha)
    return round_up(s * _z_up(a))


def gaussian_scale_for_accuracy(accuracy: Number, alpha: Number) -> float:
    """Largest σ (rounded down) whose Gaussian accuracy at ``alpha`` is at most ``accuracy``."""
    acc, a = check_positive(accuracy, "accuracy"), _alpha(alpha)
    z = _z_up(a)
    if z == 0:
        return math.inf
    return round_down(acc / z)


def gaussian_variance(sigma: Number) -> Fraction:
    """``E[X²] = σ²`` for ``N(0, σ²)`` (exact)."""
    s = check_positive(sigma, "sigma")
    return s * s


def discrete_gaussian_accuracy(sigma: Number, alpha: Number) -> Fraction:
    """Smallest integer ``a`` with ``2Φ(−a/σ) ≤ alpha``, an upper bound on ``P(|X| > a)``.

    For ``X ~ N_ℤ(0, σ²)`` the returned ``a`` satisfies ``P(|X| > a) ≤ alpha`` (module docstring).
    """
    s, a = check_positive(sigma, "sigma"), _alpha(alpha)
    guess = max(0, math.ceil(float(s) * _z_guess(a)))

    def ok(n: int) -> bool:
        return _two_sided_tail_hi(Fraction(n), s) <= a

    return Fraction(_first_true(ok, guess))


def _first_true(ok: Callable[[int], bool], guess: int) -> int:
    """The smallest ``n ≥ 0`` with ``ok(n)``, for ``ok`` false then true (``ok(-1)`` counts as
    false): gallop from ``guess`` by doubling steps, then bisect, so about ``2·log2`` of the
    guess's error calls, however large ``n`` is.  The answer is always one where ``ok`` held."""
    lo, hi = guess - 1, guess  # invariant once set: not ok(lo) (or lo = -1), ok(hi)
    if ok(guess):
        step = 1
        while lo >= 0 and ok(lo):
            hi, step = lo, 2 * step
            lo = max(hi - step, -1)
    else:
        lo, step = guess, 1
        hi = lo + step
        while not ok(hi):
            lo, step = hi, 2 * step
            hi = lo + step
    return bisect(ok, hi, lo, midpoint=int_halfway)


def discrete_gaussian_variance(sigma: Number) -> Fraction:
    """An upper bound on ``E[X²]`` for ``X ~ N_ℤ(0, σ²)``: ``σ²`` (CKS20, Prop. 19)."""
    s = check_positive(sigma, "sigma")
    return s * s
