"""Gaussian differential privacy (μ-GDP; Dong, Roth & Su 2022), in floats with directed widening.

* A Gaussian mechanism with L2 sensitivity Δ and noise σ is μ-GDP with μ = Δ/σ, and a
  composition of μᵢ-GDP mechanisms is √(Σ μᵢ²)-GDP — also when each μᵢ is chosen adaptively,
  as long as Σ μᵢ² stays below a fixed bound (Smith & Thakurta 2022, fully adaptive composition
  for GDP).
* μ-GDP ⇒ (ε, δ(ε))-DP for every ε ≥ 0 with δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)
  (Dong, Roth & Su 2022, Cor. 2.13), and this curve is exactly that of the Gaussian pair.
* ε-DP ⇒ μ-GDP with μ = 2Φ⁻¹(e^ε / (1 + e^ε)): the trade-off function of ε-DP is the maximum of
  two lines meeting at α* = 1/(1 + e^ε); G_μ is convex, equals 1 at 0 and 0 at 1 and passes
  through (α*, α*) for this μ, so it lies below both chords (``docs/proofs/filters.md``).

Every value is widened in the safe direction: δ up (relative 1e-10 of the two terms), ε up.

Examples
--------
>>> round(gdp_epsilon(1.0, 1e-6), 4)
4.8866
>>> gdp_delta(1.0, 4.8866) <= 1e-6
True
"""

from __future__ import annotations

import math

from dpcert.core.search import bisect, halfway
from dpcert.errors import InvalidParameter

__all__ = ["gdp_delta", "gdp_epsilon", "mu_of_pure"]

_SQRT2 = math.sqrt(2.0)
#: Relative widening of each term of δ(ε) (covers erfc/exp roundoff with a wide margin).
_REL = 1e-10


def _log_phi(x: float) -> float:
    """log Φ(x), accurate also far in the lower tail."""
    if x > -30.0:
        return math.log(0.5 * math.erfc(-x / _SQRT2))
    # Asymptotic series (Abramowitz & Stegun 26.2.12), relative error < 1e-9 for x < −30.
    x2 = x * x
    return (-x2 / 2.0 - math.log(-x) - 0.5 * math.log(2.0 * math.pi)
            + math.log1p(-1.0 / x2 + 3.0 / (x2 * x2)))


def gdp_delta(mu: float, epsilon: float) -> float:
    """An upper bound on δ(ε) of μ-GDP (rounded up, in [0, 1])."""
    if not (mu >= 0 and math.isfinite(mu)):
        raise InvalidParameter(f"mu={mu!r} must be finite and >= 0")
    if not (epsilon >= 0 and not math.isnan(epsilon)):
        raise InvalidParameter(f"epsilon={epsilon!r} must be >= 0")
    if mu == 0:
        return 0.0
    a = math.exp(_log_phi(-epsilon / mu + mu / 2.0))
    b = math.exp(epsilon + _log_phi(-epsilon / mu - mu / 2.0)) if math.isfinite(epsilon) else 0.0
    d = (a - b) + _REL * (a + b) + 1e-300
    return min(1.0, max(0.0, d))


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest ε (rounded up) with `gdp_delta` ``(mu, ε) <= delta``."""
    if not 0 < delta < 1:
        raise InvalidParameter(f"delta={delta!r} must be in (0, 1)")
    if gdp_delta(mu, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, max(1.0, mu * mu / 2.0 + 2.0 * mu * math.sqrt(2.0 * math.log(1.0 / delta)))
    while gdp_delta(mu, hi) > delta:
        lo, hi = hi, hi * 2.0
    return bisect(lambda e: gdp_delta(mu, e) <= delta, hi, lo, midpoint=halfway, steps=200,
                  close=lambda g, b: g - b <= 1e-12 * g)


def _phi_inv(p: float) -> float:
    """Φ⁻¹(p) for p in (1/2, 1), by bisection on erfc (about 1e-15 absolute)."""
    return bisect(lambda x: not 0.5 * math.erfc(-x / _SQRT2) < p, 40.0, 0.0, midpoint=halfway,
                  steps=200)


def mu_of_pure(epsilon: float) -> float:
    """A μ (rounded up) such that every ε-DP mechanism is μ-GDP: 2Φ⁻¹(e^ε/(1 + e^ε)).

    Examples
    --------
    >>> round(mu_of_pure(0.1), 5)
    0.12531
    """
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise InvalidParameter(f"epsilon={epsilon!r} must be finite and > 0")
    p = 1.0 / (1.0 + math.exp(-epsilon))
    return 2.0 * _phi_inv(p) * (1.0 + 1e-9) + 1e-15
