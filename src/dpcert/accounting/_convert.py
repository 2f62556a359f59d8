"""Conversions of Rényi / zCDP guarantees to (ε, δ), evaluated in floats and widened upwards.

* RDP → (ε, δ): for every order α > 1, ``ε = ε_α + log((α−1)/α) − (log δ + log α)/(α − 1)``
  (Balle, Barthe, Gaboardi, Hsu & Sato 2020, Thm. 21; Asoodeh et al. 2021 give the same
  improvement), and the classical ``ε_α + log(1/δ)/(α−1)`` (Mironov 2017, Prop. 3); the minimum
  over orders is reported.
* ρ-zCDP → (ε, δ): the same bound with ε_α = αρ, minimised over real α > 1
  (Canonne, Kamath & Steinke 2020, Cor. 13), which is tighter than ρ + 2√(ρ log 1/δ).

Any α gives a valid bound, so the optimiser's accuracy only affects tightness; the value at the
chosen α is evaluated in binary64 and widened by a relative 1e-10 plus an absolute 1e-12, which
covers the roundoff of these few operations (each < 1e-15 relative) with a wide safety factor.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpcert._types import Array

__all__ = [
    "rdp_to_delta",
    "rdp_to_epsilon",
    "widen",
    "zcdp_to_delta",
]

Array = Array


def widen(x: float) -> float:
    """``x`` plus the documented safety margin (relative 1e-10, absolute 1e-12)."""
    if math.isinf(x) or math.isnan(x):
        return x
    return x + abs(x) * 1e-10 + 1e-12


def _rdp_eps_candidates(orders: Array, rdp: Array, delta: float) -> Array:
    a = orders
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        improved = rdp + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)
        classic = rdp + math.log(1.0 / delta) / (a - 1.0)
    out = np.minimum(improved, classic)
    return np.where(np.isfinite(rdp), out, np.inf)


def rdp_to_epsilon(orders: Array, rdp: Array, delta: float) -> float:
    """Smallest ε over the orders (widened upwards, at least 0)."""
    c = _rdp_eps_candidates(np.asarray(orders, float), np.asarray(rdp, float), delta)
    best = float(np.min(c)) if c.size else math.inf
    return max(0.0, widen(best))


def rdp_to_delta(orders: Array, rdp: Array, epsilon: float) -> float:
    """Smallest δ over the orders at ``epsilon`` (widened upwards, at most 1)."""
    a = np.asarray(orders, float)
    r = np.asarray(rdp, float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_improved = (a - 1.0) * (r - epsilon) + (a - 1.0) * np.log1p(-1.0 / a) - np.log(a)
        log_classic = (a - 1.0) * (r - epsilon)
    logs = np.where(np.isfinite(r), np.minimum(log_improved, log_classic), np.inf)
    best = float(np.min(logs)) if logs.size else math.inf
    if best >= 0:
        return 1.0
    return min(1.0, math.exp(widen(best) if best > 0 else best * (1 - 1e-10) + 1e-12))


def _golden_min(fn: Callable[[float], float], lo: float, hi: float, iters: int = 100) -> float:
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = fn(c), fn(d)
    for _ in range(iters):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = fn(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = fn(d)
    return (a + b) / 2.0


def zcdp_to_delta(rho: float, epsilon: float) -> float:
    """δ for ρ-zCDP at ``epsilon`` (Canonne, Kamath & Steinke 2020, Cor. 13), widened upwards."""
    if rho == 0:
        return 0.0

    def g(t: float) -> float:  # log δ at α = 1 + e^t
        a = 1.0 + math.exp(t)
        return (a - 1.0) * (a * rho - epsilon) + (a - 1.0) * math.log1p(-1.0 / a) - math.log(a)

    grid = np.linspace(-20.0, 20.0, 401)
    vals = [g(float(t)) for t in grid]
    i = int(np.argmin(vals))
    t_best = _golden_min(g, float(grid[max(i - 1, 0)]), float(grid[min(i + 1, 400)]))
    best = min(g(t_best), vals[i])
    if best >= 0:
        return 1.0
    return min(1.0, math.exp(best * (1 - 1e-10) + 1e-12))
