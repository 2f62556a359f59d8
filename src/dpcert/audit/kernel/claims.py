"""What a mechanism claims, as the (ε, δ) pair the auditor tests.

* ``PureDP(ε)`` → (ε, 0); ``ApproxDP(ε, δ)`` → (ε, δ); a bare number ε → (ε, 0).
* ``ZCDP(ρ)`` → (ε(ρ, δ), δ) at a stated δ with the tight conversion of Canonne, Kamath &
  Steinke 2020, Cor. 13 (`dpcert.combinators.conversions.zcdp_epsilon`, never above
  Bun & Steinke's ρ + 2√(ρ ln(1/δ))): a smaller ε to test, so an understated ρ is caught
  with fewer samples.
* ``RenyiDP`` curves → (min over the measure's orders of ε(α) + ln(1/δ)/(α − 1), δ)
  (Mironov 2017, Prop. 3).
* A [`Measurement`][dpcert.core.measurement.Measurement] with no explicit claim claims ``map(1)``.

The implied ε is rounded *up*, so a claim is never made to look stricter than it is (which
could only cause false alarms).

Examples
--------
>>> import dpcert as dp
>>> resolve_claim(dp.PureDP(1.0), None, 1e-6).epsilon
1.0
>>> c = resolve_claim(dp.ZCDP(0.5), None, 1e-6)
>>> round(c.epsilon, 4), c.delta       # Bun–Steinke would give 5.7565
(5.2215, 1e-06)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from dpcert._numbers import as_fraction, is_real_number, round_up
from dpcert.combinators.conversions import zcdp_epsilon
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ZCDP, ApproxDP, Loss, Measure, PureDP, RenyiCurve, RenyiDP
from dpcert.errors import InvalidParameter

__all__ = ["Claim", "resolve_claim", "zcdp_to_approx"]


@dataclass(frozen=True)
class Claim:
    """The claim under test: (ε, δ)-DP, with the measure object it came from."""

    epsilon: float
    delta: float
    measure: Measure


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


def zcdp_to_approx(rho: Fraction, delta: float) -> float:
    """The ε at which a ρ-zCDP mechanism is (ε, δ)-DP (CKS20 Cor. 13), rounded up."""
    return float(round_up(zcdp_epsilon(Fraction(rho), as_fraction(delta, "zcdp_delta"))))


def _renyi_to_approx(curve: RenyiCurve, orders: tuple[Fraction, ...], delta: float) -> float:
    best = math.inf
    for a in orders:
        e = float(round_up(curve(a))) + _up(math.log(1.0 / delta) / (float(a) - 1.0))
        best = min(best, _up(e))
    return best


def _from_distance(measure: Measure, d: Loss, zcdp_delta: float) -> Claim:
    if isinstance(measure, PureDP):
        e = measure.validate_distance(d)
        return Claim(round_up(e), 0.0, PureDP(e) if e > 0 else measure)
    if isinstance(measure, ApproxDP):
        e, dl = measure.validate_distance(d)
        return Claim(round_up(e), float(dl), ApproxDP(e, dl) if e > 0 and dl < 1 else measure)
    if isinstance(measure, ZCDP):
        r = measure.validate_distance(d)
        return Claim(zcdp_to_approx(r, zcdp_delta), zcdp_delta, ZCDP(r) if r > 0 else measure)
    if isinstance(measure, RenyiDP):
        c = measure.validate_distance(d)
        return Claim(_renyi_to_approx(c, measure.orders, zcdp_delta), zcdp_delta, measure)
    raise InvalidParameter(f"claimed={measure!r}: the auditor cannot test this measure")


#: What a claim may be given as: a measure with an amount, a number ε, or None (a measurement's
#: own ``map(1)``, else no claim).
Claimable = Measure | float | Fraction | None


def resolve_claim(claimed: object, mechanism: object, zcdp_delta: float) -> Claim | None:
    """The (ε, δ) claim to test, from ``claimed`` or else from a Measurement's ``map(1)``."""
    if not (isinstance(zcdp_delta, float) and 0.0 < zcdp_delta < 1.0):
        raise InvalidParameter(f"zcdp_delta={zcdp_delta!r} must be a float in (0, 1)")
    if claimed is None:
        if isinstance(mechanism, Measurement):
            return _from_distance(mechanism.output_measure, mechanism.map(1), zcdp_delta)
        return None
    if is_real_number(claimed):
        e = as_fraction(claimed, "claimed")
        if e <= 0:
            raise InvalidParameter(f"claimed={claimed!r} must be > 0")
        return Claim(round_up(e), 0.0, PureDP(e))
    if isinstance(claimed, Measure):
        return _from_distance(claimed, claimed.require_value("claimed"), zcdp_delta)
    raise InvalidParameter(
        f"claimed={claimed!r} must be a measure with an amount (PureDP(1.0), "
        "ApproxDP(1.0, 1e-6), ZCDP(0.5)) or a number ε"
    )
