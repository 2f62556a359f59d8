"""Calibration: the noise (or number of runs) that meets a target (ε, δ).

* `gaussian_sigma`: ``count`` Gaussians with sensitivity Δ compose *exactly* as one
  Gaussian with μ = √count·Δ/σ (their privacy loss distributions are Gaussian and add; Dong, Roth
  & Su 2022, Cor. 3.3), and δ_μ(ε) is the exact privacy profile of that Gaussian (Balle & Wang
  2018).  So the smallest σ is √count·Δ/μ* with μ* the largest μ with δ_μ(ε) ≤ δ, found by
  bisection on the closed form (microseconds, for any count) — no accountant run is needed.
* `calibrate`: a monotone parameter (a noise scale, a sampling rate, …) for any event
  family, by bisection with an accountant (PLD by default); each step costs one accountant run.
* `max_count`: the largest number of runs of an event that stays within (ε, δ).

Results are on the safe side: the returned σ / scale / count is verified with the accountant's
upper bound (or the widened closed form) before it is returned.

Examples
--------
>>> sigma = gaussian_sigma(1.0, 1e-5, count=1000)
>>> round(sigma, 3)
117.973
>>> from dpcert.accounting import PLDAccountant, GaussianEvent
>>> PLDAccountant().compose(GaussianEvent(sigma), 1000).epsilon(1e-5) <= 1.0 + 1e-3
True
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpcert._numbers import Number, as_fraction
from dpcert._validate import check_int
from dpcert.accounting.accountant import Accountant
from dpcert.accounting.gdp import gdp_delta
from dpcert.core.events import Event
from dpcert.core.search import bisect, geometric, halfway, int_halfway
from dpcert.errors import InvalidParameter

__all__ = ["calibrate", "gaussian_sigma", "max_count"]


def _target(epsilon: Number, delta: Number) -> tuple[float, float]:
    e = as_fraction(epsilon, "epsilon")
    d = as_fraction(delta, "delta")
    if e <= 0:
        raise InvalidParameter(f"epsilon={epsilon!r} must be > 0")
    if not 0 < d < 1:
        raise InvalidParameter(f"delta={delta!r} must be in (0, 1)")
    return float(e), float(d)


def gaussian_sigma(epsilon: Number, delta: Number, count: int = 1,
                   sensitivity: Number = 1) -> float:
    """The smallest σ (rounded up) such that ``count`` Gaussians of L2 ``sensitivity`` are
    (ε, δ)-DP together."""
    eps, dlt = _target(epsilon, delta)
    k = check_int(count, "count", minimum=1)
    sens = float(as_fraction(sensitivity, "sensitivity"))
    if sens <= 0:
        raise InvalidParameter(f"sensitivity={sensitivity!r} must be > 0")
    lo, hi = 0.0, 1.0
    while gdp_delta(hi, eps) <= dlt:
        lo, hi = hi, hi * 2.0
    # largest μ with δ_μ(ε) ≤ δ (δ_μ increases with μ)
    lo = bisect(lambda m: gdp_delta(m, eps) <= dlt, lo, hi, midpoint=halfway, steps=100)
    if lo == 0.0:
        raise InvalidParameter(f"no σ meets epsilon={epsilon!r}, delta={delta!r}")
    sigma = math.sqrt(k) * sens / lo
    sigma = math.nextafter(sigma * (1 + 1e-12), math.inf)
    assert gdp_delta(math.sqrt(k) * sens / sigma, eps) <= dlt
    return sigma


def _pld() -> Accountant:
    from dpcert.accounting.pld import PLDAccountant

    return PLDAccountant()


def calibrate(make_event: Callable[[float], Event], epsilon: Number, delta: Number,
              bounds: tuple[float, float], *, count: int = 1,
              accountant: Accountant | None = None, increasing: bool = True,
              rel_tol: float = 1e-4) -> float:
    """The parameter x in ``bounds`` closest to the loss boundary with ``count`` runs of
    ``make_event(x)`` within (ε, δ).

    ``increasing=True`` when privacy improves as x grows (a noise scale: the smallest such x
    is returned); ``False`` when it worsens (a sampling rate: the largest is returned).
    """
    eps, dlt = _target(epsilon, delta)
    k = check_int(count, "count", minimum=1)
    acc = accountant if accountant is not None else _pld()
    lo, hi = float(bounds[0]), float(bounds[1])
    if not 0 < lo < hi or not math.isfinite(hi):
        raise InvalidParameter(f"bounds={bounds!r} must be 0 < low < high < inf")

    def ok(x: float) -> bool:
        return acc.compose(make_event(x), k).epsilon(dlt) <= eps

    good, bad = (hi, lo) if increasing else (lo, hi)
    if not ok(good):
        raise InvalidParameter(f"even {good} does not meet (ε={eps}, δ={dlt})")
    if ok(bad):
        return bad
    return bisect(ok, good, bad, midpoint=geometric,
                  close=lambda g, b: abs(g - b) <= rel_tol * abs(g))


def max_count(event: Event, epsilon: Number, delta: Number, *,
              accountant: Accountant | None = None, limit: int = 10**7) -> int:
    """The largest number of runs of ``event`` whose composition is within (ε, δ) (0 if none).
    """
    eps, dlt = _target(epsilon, delta)
    acc = accountant if accountant is not None else _pld()

    def ok(n: int) -> bool:
        return acc.compose(event, n).epsilon(dlt) <= eps

    if not ok(1):
        return 0
    good, bad = 1, 2
    while ok(bad):
        good, bad = bad, bad * 2
        if bad > limit:
            raise InvalidParameter(f"more than limit={limit} runs fit; raise the limit")
    return bisect(ok, good, bad, midpoint=int_halfway)
