"""The Gaussian mechanism under zero-concentrated DP, sampled exactly.

* Integer inputs get discrete Gaussian noise, P(z) ∝ exp(−z²/2σ²) on ℤ; the map is
  ``ρ = d_in² / (2σ²)`` (Canonne, Kamath & Steinke 2020, Thm. 14; independent coordinates for
  vectors under L2).
* Float inputs are rounded to the lattice ``2^k·ℤ`` (by default ``2^k ≤ σ·2^-20/√m``) and get
  discrete Gaussian noise of scale ``σ/2^k`` on it; the map pays for the rounding:
  ``ρ = (d_in + √m·a_k)² / (2σ²)`` for ``m`` coordinates (√m rounded up to a rational;
  ``a_k = 2^k + 2^(k−2)`` is [`rounding_allowance`][dpcert.samplers.rounding_allowance]).

Proof: ``docs/proofs/gaussian.md``.

Examples
--------
>>> import dpcert as dp
>>> m = dp.m.make_gaussian(dp.AtomDomain(int), dp.AbsoluteDistance(), scale=2)
>>> m.output_measure, m.map(1)
(ZCDP(), Fraction(1, 8))
>>> g = dp.m.make_gaussian(dp.AtomDomain(float), dp.AbsoluteDistance(), scale=1.0)
>>> 0.5 <= float(g.map(1)) <= 0.5 + 2e-6
True
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from dpcert._directed import ceil_sqrt, sqrt_up
from dpcert._numbers import Number
from dpcert._validate import check_int, check_positive
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import Domain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ZCDP
from dpcert.core.metrics import L2Distance, Metric
from dpcert.mechanisms._additive import (
    mechanism_exponent,
    noise_batch,
    noise_function,
    noise_space,
)
from dpcert.samplers import discrete_gaussian, lattice_gaussian, rounding_allowance

if TYPE_CHECKING:
    from dpcert.core.events import Event

__all__ = ["gaussian_sigma", "make_gaussian", "then_gaussian"]


def make_gaussian(input_domain: Domain, input_metric: Metric, scale: Number, *,
                  k: int | None = None) -> Measurement:
    """Add exact Gaussian noise of standard deviation parameter ``scale`` (σ).

    Parameters
    ----------
    input_domain : AtomDomain or VectorDomain
        ``int`` or ``float`` values (NaN not allowed).
    input_metric : AbsoluteDistance (scalars) or L2Distance (vectors)
        Distance between neighbouring inputs.
    scale : number > 0
        σ; a float means its decimal.
    k : int, optional
        Lattice exponent for float inputs; by default ``floor(log2 σ) − 20 − ceil(log2 m)/2``.

    Returns
    -------
    Measurement
        Under [`ZCDP`][dpcert.ZCDP].
    """
    sigma = check_positive(scale, "scale")
    space = noise_space("make_gaussian", input_domain, input_metric, L2Distance)
    if space.integer:
        kk = 0
        allowance = Fraction(0)
    else:
        kk = mechanism_exponent(sigma, space, l2=True) if k is None else check_int(k, "k")
        allowance = ceil_sqrt(space.coordinates) * rounding_allowance(kk)

    def privacy_map(d_in: int | Fraction) -> Fraction:
        d = Fraction(d_in)
        return Fraction(0) if d == 0 else (d + allowance) ** 2 / (2 * sigma**2)

    function = noise_function(input_domain, space, discrete_gaussian, lattice_gaussian, sigma, kk)
    batch = noise_batch(input_domain, space, discrete_gaussian, lattice_gaussian, sigma, kk)

    def event_map(d_in: int | Fraction) -> Event:
        # Scalars: integer inputs (or lattice points) differ by an integer number of units, at
        # most floor((d_in + allowance) / unit).  Vectors: the L2 distance is not an integer, so
        # the event is the zCDP guarantee itself.
        from dpcert.core.events import ComposedEvent, DiscreteGaussianEvent, ZCDPEvent

        d = Fraction(d_in)
        if d == 0:
            return ComposedEvent(())
        if space.vector:
            return ZCDPEvent(rho=privacy_map(d))
        unit = Fraction(2) ** kk
        shift = math.floor((d + allowance) / unit)
        if shift == 0:
            return ComposedEvent(())
        return DiscreteGaussianEvent(sigma=sigma / unit, sensitivity=shift)

    def accuracy_map(alpha: Fraction) -> Fraction:
        from dpcert.mechanisms.accuracy import discrete_gaussian_accuracy

        unit = Fraction(2) ** kk
        return discrete_gaussian_accuracy(sigma / unit, alpha) * unit

    return Measurement(
        input_domain, input_metric, ZCDP(),
        function=function,
        privacy_map=privacy_map,
        name="gaussian",
        params={"scale": sigma, "lattice_exponent": None if space.integer else kk,
                "sampler": "discrete_gaussian" if space.integer else "lattice_gaussian"},
        event_map=event_map,
        accuracy_map=accuracy_map,
        batch_map=batch, proof="gaussian.md",
    )


def gaussian_sigma(sensitivity: Fraction, rho: Fraction) -> Fraction:
    """The smallest convenient σ at which `make_gaussian` on integers costs at most ``rho`` at
    L2 ``sensitivity``: its map ``Δ ↦ Δ²/(2σ²)`` inverted, ``σ = √(Δ²/(2ρ))`` rounded up to a
    rational (``1`` when ``Δ = 0``).

    >>> from fractions import Fraction
    >>> gaussian_sigma(Fraction(2), Fraction(2))
    Fraction(1, 1)
    """
    return sqrt_up(sensitivity * sensitivity / (2 * rho)) if sensitivity > 0 else Fraction(1)


def then_gaussian(scale: Number, *, k: int | None = None) -> PartialConstructor:
    """Partial form of [`make_gaussian`][dpcert.mechanisms.gaussian.make_gaussian]."""
    return partial(make_gaussian, "gaussian", scale, k=k)
