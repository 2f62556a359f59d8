"""(ε, δ) for the Gaussian mechanism: calibrating σ, and an ApproxDP Gaussian measurement.

* `classic_gaussian_scale`: ``σ = Δ₂·√(2 ln(1.25/δ))/ε`` (Dwork & Roth 2014, Thm. A.1;
  the Lecture 18 notes and the DP primer).  The theorem only holds for ``ε < 1``, which is enforced.
* `analytic_gaussian_scale`: the smallest σ for which the Gaussian mechanism is exactly
  (ε, δ)-DP, from its privacy profile (Balle & Wang, ICML 2018, Thm. 8)
  ``δ(σ) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ)``; valid for every ε > 0 and never larger
  than the classic σ.
* `zcdp_to_approx_epsilon`: ρ-zCDP ⇒ (ε, δ)-DP with
  ``ε = inf_{α>1} αρ + (ln(1/δ) + (α−1) ln(1−1/α) − ln α)/(α−1)`` (Canonne, Kamath & Steinke
  2020, Prop. 12; Asoodeh et al. 2021).
* `make_gaussian_approx`: dpcert's exact Gaussian (`make_gaussian`,
  discrete or lattice Gaussian noise, map in ZCDP) with a map in [`ApproxDP`][dpcert.ApproxDP]:
  ``d_in ↦ (ε(ρ(d_in), δ), δ)``.  The conversion goes through zCDP because the discrete Gaussian's
  (ε, δ) profile is not the continuous one (CKS20 §4); it costs a little: the analytic σ is the
  right scale for *continuous* Gaussian noise, and ``gaussian_scale(..., method="zcdp")`` the right
  one for [`make_gaussian_approx`][dpcert.mechanisms.calibration.make_gaussian_approx].

All results are on the safe side: σ rounded up, ε rounded up, decided with rigorous enclosures
(`dpcert._directed`).  Proof notes: ``docs/proofs/gaussian_approx.md``.

Examples
--------
>>> round(classic_gaussian_scale(0.5, 1e-5), 4)
9.6896
>>> round(analytic_gaussian_scale(0.5, 1e-5), 4)
7.0318
>>> import dpcert as dp
>>> m = make_gaussian_approx(dp.AtomDomain(int), dp.AbsoluteDistance(), scale=8, delta=1e-5)
>>> eps, delta = m.map(1)
>>> round(float(eps), 4), delta
(0.4776, Fraction(1, 100000))
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

from dpcert._directed import exp_lower, log_bounds, normal_cdf_bounds, sqrt_bounds
from dpcert._numbers import Number, as_fraction, round_up
from dpcert._types import DistanceLike
from dpcert._validate import check_nonnegative, check_positive, check_probability
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import Domain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ApproxDP
from dpcert.core.metrics import Metric
from dpcert.core.search import bisect, geometric
from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    from dpcert.core.events import Event

__all__ = [
    "analytic_gaussian_delta",
    "analytic_gaussian_scale",
    "classic_gaussian_scale",
    "gaussian_scale",
    "make_gaussian_approx",
    "then_gaussian_approx",
    "zcdp_to_approx_epsilon",
]


def _eps_delta(epsilon: Number, delta: Number) -> tuple[Fraction, Fraction]:
    return (check_positive(epsilon, "epsilon"),
            check_probability(delta, "delta", open_low=True, open_high=True))


def classic_gaussian_scale(epsilon: Number, delta: Number, sensitivity: Number = 1) -> float:
    """``σ = Δ₂√(2 ln(1.25/δ))/ε`` rounded up; requires ``0 < ε < 1`` and ``0 < δ < 1``.

    Examples
    --------
    >>> classic_gaussian_scale(1.0, 1e-5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpcert.errors.InvalidParameter: epsilon=1.0 must be < 1 for the classic Gaussian bound ...
    """
    eps, dl = _eps_delta(epsilon, delta)
    sens = check_positive(sensitivity, "sensitivity")
    if eps >= 1:
        raise InvalidParameter(
            f"epsilon={epsilon!r} must be < 1 for the classic Gaussian bound "
            "(use analytic_gaussian_scale)"
        )
    ln_hi = log_bounds(Fraction(5, 4) / dl)[1]
    return round_up(sens * sqrt_bounds(2 * ln_hi)[1] / eps)


def analytic_gaussian_delta(epsilon: Number, sigma: Number, sensitivity: Number = 1) -> Fraction:
    """A rigorous upper bound on the δ of the Gaussian mechanism at ``epsilon`` (Balle & Wang)."""
    eps = check_positive(epsilon, "epsilon")
    s = check_positive(sigma, "sigma")
    d = check_positive(sensitivity, "sensitivity")
    a = d / (2 * s) - eps * s / d
    b = -d / (2 * s) - eps * s / d
    hi = normal_cdf_bounds(a)[1] - exp_lower(eps) * normal_cdf_bounds(b)[0]
    return max(hi, Fraction(0))


def _delta_float(eps: float, s: float, d: float) -> float:
    a = d / (2 * s) - eps * s / d
    b = -d / (2 * s) - eps * s / d
    return 0.5 * math.erfc(-a / math.sqrt(2)) - math.exp(eps) * 0.5 * math.erfc(-b / math.sqrt(2))


def analytic_gaussian_scale(epsilon: Number, delta: Number, sensitivity: Number = 1) -> float:
    """The smallest σ (rounded up, within a relative 1e-9) making N(0, σ²) (ε, δ)-DP."""
    eps, dl = _eps_delta(epsilon, delta)
    sens = check_positive(sensitivity, "sensitivity")
    fe, fd, fs = float(eps), float(dl), float(sens)
    lo, hi = 1e-12 * fs, fs
    while _delta_float(fe, hi, fs) > fd:
        hi *= 2
    hi = bisect(lambda s: not _delta_float(fe, s, fs) > fd, hi, lo, midpoint=geometric,
                steps=200)
    sigma = hi * (1 + 1e-9)
    while analytic_gaussian_delta(eps, Fraction(sigma), sens) > dl:
        sigma *= 1 + 1e-6
    return sigma


def _cks_epsilon(rho: Fraction, ln_inv_delta: Fraction, alpha: Fraction) -> Fraction:
    """Upper bound on CKS20's ε at order ``alpha`` (rigorous)."""
    am1 = alpha - 1
    term = (ln_inv_delta + am1 * log_bounds(1 - 1 / alpha)[1] - log_bounds(alpha)[0]) / am1
    return alpha * rho + term


def zcdp_to_approx_epsilon(rho: Number, delta: Number) -> Fraction:
    """The ε (an exact upper bound) at which a ρ-zCDP mechanism is (ε, δ)-DP (CKS20 Prop. 12).

    Examples
    --------
    >>> eps = zcdp_to_approx_epsilon(Fraction(1, 2), Fraction(1, 10**6))
    >>> 5.2 < eps < 0.5 + 2 * (0.5 * 13.82) ** 0.5   # below Bun & Steinke's ρ + 2√(ρ ln 1/δ)
    True
    """
    r = as_rho(rho)
    dl = check_probability(delta, "delta", open_low=True, open_high=True)
    if r == 0:
        return Fraction(0)
    fr, ld = float(r), float(log_bounds(1 / dl)[1])

    def f(a: float) -> float:
        return a * fr + (ld + (a - 1) * math.log1p(-1 / a) - math.log(a)) / (a - 1)

    # golden-section search for the minimising order in log(α − 1)
    lo, hi = math.log(1e-9), math.log(1e9)
    g = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
        if f(1 + math.exp(m1)) < f(1 + math.exp(m2)):
            hi = m2
        else:
            lo = m1
    alpha = Fraction(1 + math.exp((lo + hi) / 2))
    ln_inv_delta = log_bounds(1 / dl)[1]
    eps = _cks_epsilon(r, ln_inv_delta, alpha)
    return max(Fraction(round_up(eps)), Fraction(0))


def as_rho(rho: Number) -> Fraction:
    """Validate a zCDP ρ (≥ 0)."""
    return check_nonnegative(rho, "rho")


def gaussian_scale(epsilon: Number, delta: Number, sensitivity: Number = 1, *,
                   method: Literal["analytic", "classic", "zcdp"] = "analytic") -> float:
    """σ for (ε, δ)-DP at L2 sensitivity ``sensitivity`` by the chosen ``method``.

    ``"classic"`` and ``"analytic"`` calibrate *continuous* Gaussian noise; ``"zcdp"`` returns the
    smallest σ (rounded up, relative 1e-9) for which `make_gaussian_approx` on integers
    satisfies (ε, δ) at ``d_in = sensitivity``.
    """
    if method == "classic":
        return classic_gaussian_scale(epsilon, delta, sensitivity)
    if method == "analytic":
        return analytic_gaussian_scale(epsilon, delta, sensitivity)
    if method != "zcdp":
        raise InvalidParameter(f"method={method!r} must be 'analytic', 'classic' or 'zcdp'")
    eps, dl = _eps_delta(epsilon, delta)
    sens = check_positive(sensitivity, "sensitivity")

    def ok(s: float) -> bool:
        rho = sens * sens / (2 * Fraction(s) ** 2)
        return zcdp_to_approx_epsilon(rho, dl) <= eps

    lo = hi = float(sens)
    while ok(lo):
        lo /= 2
    while not ok(hi):
        hi *= 2
    hi = bisect(ok, hi, lo, midpoint=geometric, steps=40)
    return hi


def make_gaussian_approx(input_domain: Domain, input_metric: Metric, scale: Number, delta: Number,
                         *,
                         k: int | None = None) -> Measurement:
    """dpcert's exact Gaussian mechanism with its privacy stated in (ε, δ) at a fixed ``delta``.

    Parameters
    ----------
    input_domain
        The data's domain, as for `dpcert.m.make_gaussian`.
    input_metric
        Its metric, as for `dpcert.m.make_gaussian`.
    scale
        The noise's standard deviation σ.
    k
        The lattice exponent for float inputs, as for `dpcert.m.make_gaussian` (``None``: its
        default).
    delta : float in (0, 1)
        The δ at which ε is reported.

    Returns
    -------
    Measurement
        Under [`ApproxDP`][dpcert.ApproxDP]: ``map(d_in) = (ε, δ)`` where ε is the CKS20 conversion
        of the Gaussian's zCDP map at ``d_in`` (lattice allowance included).
    """
    from dpcert.mechanisms.gaussian import make_gaussian

    dl = check_probability(delta, "delta", open_low=True, open_high=True)
    inner = make_gaussian(input_domain, input_metric, scale, k=k)
    zmap = inner.privacy_map

    def privacy_map(d_in: DistanceLike) -> tuple[Fraction, Fraction]:
        rho = as_fraction(zmap(d_in), "rho")
        if rho == 0:
            return Fraction(0), Fraction(0)
        return zcdp_to_approx_epsilon(rho, dl), dl

    def event_map(d_in: DistanceLike) -> Event:
        assert inner.event_map is not None
        return inner.event_map(d_in)

    return Measurement(
        inner.input_domain, inner.input_metric, ApproxDP(),
        function=inner.function,
        privacy_map=privacy_map,
        name="gaussian_approx",
        params={**dict(inner.params), "delta": dl},
        event_map=event_map if inner.event_map is not None else None,
        accuracy_map=inner.accuracy_map,
        batch_map=inner.batch_map, proof="gaussian_approx.md",
    )


def then_gaussian_approx(scale: Number, delta: Number, *,
                         k: int | None = None) -> PartialConstructor:
    """Partial form of `make_gaussian_approx`."""
    return partial(make_gaussian_approx, "gaussian_approx", scale, delta, k=k)
