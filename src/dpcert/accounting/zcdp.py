"""The zCDP accountant: ρ adds up exactly; (ε, δ) by the conversion of Canonne, Kamath & Steinke.

Each leaf contributes an exact ρ (Bun & Steinke 2016): Gaussian Δ²/(2σ²) (Prop. 1.6), discrete
Gaussian the same (Canonne, Kamath & Steinke 2020, Thm. 14), any ε-DP mechanism (Laplace,
discrete Laplace, randomized response, ``PureEvent``) ε²/2 (Prop. 1.4), an ε-bounded-range
``BoundedRangeEvent`` (the exponential mechanism) ε²/8 (Cesar & Rogers 2021, Lemma 3.2),
``ZCDPEvent`` its ρ.

Examples
--------
>>> from dpcert.accounting import ZCDPAccountant, GaussianEvent, LaplaceEvent
>>> acc = ZCDPAccountant().compose(GaussianEvent(sigma=2)).compose(LaplaceEvent(scale=2))
>>> acc.rho
Fraction(1, 4)
>>> round(acc.epsilon(1e-6), 4)
3.5423
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from dpcert._directed import log_up
from dpcert._numbers import Number, as_fraction
from dpcert.accounting._convert import zcdp_to_delta
from dpcert.accounting.accountant import Accountant, _check_delta_arg, _check_eps_arg
from dpcert.core.events import (
    BoundedRangeEvent,
    DiscreteGaussianEvent,
    DiscreteLaplaceEvent,
    Event,
    GaussianEvent,
    LaplaceEvent,
    PureEvent,
    RandomizedResponseEvent,
    ZCDPEvent,
)
from dpcert.errors import UnsupportedEvent
from dpcert.mechanisms.calibration import zcdp_to_approx_epsilon

__all__ = ["ZCDPAccountant", "rho_of"]


def _rr_epsilon(event: RandomizedResponseEvent) -> Fraction:
    if event.epsilon is not None:
        return event.epsilon
    assert event.probability is not None
    p, k = event.probability, event.categories
    return log_up(p * (k - 1) / (1 - p))


def rho_of(event: Event) -> Fraction:
    """The exact ρ of one leaf (raises `UnsupportedEvent`)."""
    if isinstance(event, ZCDPEvent):
        return event.rho
    if isinstance(event, (GaussianEvent, DiscreteGaussianEvent)):
        return event.rho
    if isinstance(event, BoundedRangeEvent):  # ε-bounded range ⇒ ε²/8-zCDP (Cesar & Rogers 2021)
        return event.epsilon**2 / 8
    if isinstance(event, (LaplaceEvent, DiscreteLaplaceEvent, PureEvent)):
        return event.epsilon**2 / 2
    if isinstance(event, RandomizedResponseEvent):
        return _rr_epsilon(event) ** 2 / 2
    raise UnsupportedEvent(f"ZCDPAccountant cannot account for {type(event).__name__}")


@dataclass(frozen=True)
class ZCDPAccountant(Accountant):
    """Sums ρ exactly; converts to (ε, δ) with CKS20 Cor. 13."""

    def _supports_leaf(self, event: Event) -> bool:
        try:
            rho_of(event)
        except UnsupportedEvent:
            return False
        return True

    @property
    def rho(self) -> Fraction:
        """The exact total ρ."""
        return sum((rho_of(e) * k for e, k in self.entries), Fraction(0))

    def epsilon(self, delta: Number) -> float:
        """ε at ``delta`` (rounded up)."""
        _check_delta_arg(delta)
        return float(zcdp_to_approx_epsilon(self.rho, as_fraction(delta, "delta")))

    def delta(self, epsilon: Number) -> float:
        """δ at ``epsilon`` (rounded up)."""
        return zcdp_to_delta(float(self.rho) * (1 + 2**-52), _check_eps_arg(epsilon))
