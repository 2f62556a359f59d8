"""The Laplace mechanism, sampled exactly.

* Integer inputs get discrete Laplace noise, P(z) ∝ exp(−|z|/scale) on ℤ (Canonne, Kamath &
  Steinke 2020); the map is ``d_in / scale``.
* Float inputs are rounded to the lattice ``2^k·ℤ`` (by default ``2^k ≤ scale·2^-20/m`` for
  ``m`` coordinates, see `dpcert.mechanisms._additive`) and get discrete Laplace noise of
  scale ``scale/2^k`` on that lattice: outputs are exact floats on one lattice whatever the
  input (no Mironov 2012 leak).  The map pays for the rounding: ``(d_in + m·2^k) / scale`` for
  ``m`` coordinates.

Proof: ``docs/proofs/laplace.md``.  The OpenDP framework example:

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> m = space >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum() >> dp.m.then_laplace(25.0)
>>> 0.48 <= float(m.map(1)) <= 0.4801
True
>>> isinstance(m([12.0, 10.0, 8.0, 7.0]), float)
True
>>> dp.m.make_laplace(dp.AtomDomain(int), dp.AbsoluteDistance(), scale=2).map(1)
Fraction(1, 2)
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from dpcert._numbers import Number
from dpcert._validate import check_int, check_positive
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import Domain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import PureDP
from dpcert.core.metrics import L1Distance, Metric
from dpcert.mechanisms._additive import (
    mechanism_exponent,
    noise_batch,
    noise_function,
    noise_space,
)
from dpcert.samplers import discrete_laplace, lattice_laplace, rounding_allowance

if TYPE_CHECKING:
    from dpcert.core.events import Event

__all__ = ["laplace_scale", "make_laplace", "then_laplace"]


def make_laplace(input_domain: Domain, input_metric: Metric, scale: Number, *,
                 k: int | None = None) -> Measurement:
    """Add exact Laplace noise of the given ``scale`` to a scalar or vector.

    Parameters
    ----------
    input_domain : AtomDomain or VectorDomain
        ``int`` or ``float`` values (NaN not allowed).
    input_metric : AbsoluteDistance (scalars) or L1Distance (vectors)
        Distance between neighbouring inputs.
    scale : number > 0
        Noise scale b (P(z) ∝ exp(−|z|/b)); a float means its decimal (0.1 is 1/10).
    k : int, optional
        Lattice exponent for float inputs; by default ``floor(log2(scale)) − 20 − ceil(log2 m)``.

    Returns
    -------
    Measurement
        Under [`PureDP`][dpcert.PureDP]; ``map(d_in) = (d_in + m·a_k)/scale`` for floats
        (``a_k = rounding_allowance(k) = 2^k + 2^(k−2)``),
        ``d_in/scale`` for integers.  ``accuracy(alpha)`` gives the exact half-width.
    """
    b = check_positive(scale, "scale")
    space = noise_space("make_laplace", input_domain, input_metric, L1Distance)
    if space.integer:
        kk = 0
        allowance = Fraction(0)
    else:
        kk = mechanism_exponent(b, space, l2=False) if k is None else check_int(k, "k")
        allowance = space.coordinates * rounding_allowance(kk)

    def privacy_map(d_in: int | Fraction) -> Fraction:
        d = Fraction(d_in)
        return Fraction(0) if d == 0 else (d + allowance) / b

    function = noise_function(input_domain, space, discrete_laplace, lattice_laplace, b, kk)
    batch = noise_batch(input_domain, space, discrete_laplace, lattice_laplace, b, kk)

    def event_map(d_in: int | Fraction) -> Event:
        # In lattice units the two noisy inputs are integers whose distance is an integer at
        # most (d_in + allowance) / unit, hence at most its floor.
        from dpcert.core.events import ComposedEvent, DiscreteLaplaceEvent

        unit = Fraction(2) ** kk
        d = Fraction(d_in)
        shift = math.floor((d + allowance) / unit) if d > 0 else 0
        if shift == 0:
            return ComposedEvent(())
        return DiscreteLaplaceEvent(scale=b / unit, sensitivity=shift)

    def accuracy_map(alpha: Fraction) -> Fraction:
        from dpcert.mechanisms.accuracy import discrete_laplace_accuracy

        unit = Fraction(2) ** kk
        return discrete_laplace_accuracy(b / unit, alpha) * unit

    return Measurement(
        input_domain, input_metric, PureDP(),
        function=function,
        privacy_map=privacy_map,
        name="laplace",
        params={"scale": b, "lattice_exponent": None if space.integer else kk,
                "sampler": "discrete_laplace" if space.integer else "lattice_laplace"},
        event_map=event_map,
        accuracy_map=accuracy_map,
        batch_map=batch, proof="laplace.md",
    )


def laplace_scale(sensitivity: Fraction, epsilon: Fraction) -> Fraction:
    """The scale at which `make_laplace` on integers costs exactly ``epsilon`` at
    ``sensitivity``: its map ``d ↦ d/scale`` inverted, ``Δ/ε`` (``1`` when ``Δ = 0``: any scale
    costs nothing then).

    >>> from fractions import Fraction
    >>> laplace_scale(Fraction(6), Fraction(1, 2))
    Fraction(12, 1)
    """
    return sensitivity / epsilon if sensitivity > 0 else Fraction(1)


def then_laplace(scale: Number, *, k: int | None = None) -> PartialConstructor:
    """Partial form of `make_laplace`: ``... >> then_laplace(25.0)``."""
    return partial(make_laplace, "laplace", scale, k=k)
