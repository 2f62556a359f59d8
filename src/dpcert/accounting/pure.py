"""The pure-DP accountant: ε adds up exactly (basic composition, Dwork et al. 2006).

Leaves: ``PureEvent``, Laplace and discrete Laplace (ε = Δ/scale), randomized response, and
their Poisson-subsampled (add/remove neighbours) or without-replacement (replace-one) versions,
with ε' = log(1 + γ(e^ε − 1)) (Balle, Barthe & Gaboardi 2018, Thms. 8 and 9), rounded up.  A
sampled composition (one shared sample) is amplified with its total ε; sampling without
replacement around a Poisson-sampled event uses that event's replace-one ε (see
`poisson_replace_one_epsilon`).

``delta(ε)`` for ε below the total E uses the single-mechanism bound: every E-DP pair is a
post-processing of randomized response with E (Kairouz, Oh & Viswanath 2015), whose δ(ε) is
(e^E − e^ε)/(1 + e^E).

Examples
--------
>>> from dpcert.accounting import PureAccountant, LaplaceEvent
>>> PureAccountant().compose(LaplaceEvent(scale=10), 5).total
Fraction(1, 2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from dpcert._directed import exp_down, exp_up, log_up
from dpcert._numbers import Number, round_up
from dpcert.accounting.accountant import (
    Accountant,
    _check_delta_arg,
    _check_eps_arg,
    clamp_delta,
    leaves,
)
from dpcert.accounting.zcdp import _rr_epsilon
from dpcert.core.events import (
    ComposedEvent,
    DiscreteLaplaceEvent,
    Event,
    LaplaceEvent,
    PoissonSampledEvent,
    PureEvent,
    RandomizedResponseEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
)
from dpcert.errors import UnsupportedEvent

__all__ = ["PureAccountant", "amplify_epsilon", "epsilon_of", "poisson_replace_one_epsilon"]


def amplify_epsilon(epsilon: Fraction, rate: Fraction) -> Fraction:
    """An upper bound on log(1 + rate·(e^ε − 1)) (privacy amplification by subsampling)."""
    if rate == 1:
        return epsilon
    return min(epsilon, log_up(1 + rate * (exp_up(epsilon) - 1)))


def poisson_replace_one_epsilon(event: PoissonSampledEvent) -> Fraction:
    """The replace-one ε of a Poisson-subsampled ε-DP (add/remove) event, rounded up:
    log((1 − q + q e^ε)/(1 − q + q e^{−ε})) (``docs/proofs/amplification.md``).

    Examples
    --------
    >>> from dpcert.core.events import PoissonSampledEvent, PureEvent
    >>> round(float(poisson_replace_one_epsilon(PoissonSampledEvent(PureEvent(1), 0.1))), 5)
    0.22386
    """
    eps, q = epsilon_of(event.event), event.rate
    if q == 1:
        return 2 * eps
    ratio = (1 - q + q * exp_up(eps)) / (1 - q + q * exp_down(-eps))
    return min(2 * eps, log_up(ratio))


def epsilon_of(event: Event) -> Fraction:
    """The pure ε of one leaf (raises `UnsupportedEvent`)."""
    if isinstance(event, (PureEvent, LaplaceEvent, DiscreteLaplaceEvent)):
        return event.epsilon
    if isinstance(event, RandomizedResponseEvent):
        return _rr_epsilon(event)
    if isinstance(event, (ComposedEvent, SelfComposedEvent)):
        return sum((k * epsilon_of(e) for e, k in leaves(event)), Fraction(0))
    if isinstance(event, SampledWithoutReplacementEvent) and isinstance(
            event.event, PoissonSampledEvent):
        return amplify_epsilon(poisson_replace_one_epsilon(event.event), event.rate)
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
        return amplify_epsilon(epsilon_of(event.event), event.rate)
    raise UnsupportedEvent(f"PureAccountant cannot account for {type(event).__name__}")


@dataclass(frozen=True)
class PureAccountant(Accountant):
    """Sums ε exactly."""

    def _supports_leaf(self, event: Event) -> bool:
        try:
            epsilon_of(event)
        except UnsupportedEvent:
            return False
        return True

    @property
    def total(self) -> Fraction:
        """The exact total ε (an upper bound where amplification needed exp/log)."""
        return sum((epsilon_of(e) * k for e, k in self.entries), Fraction(0))

    def epsilon(self, delta: Number = 0.5) -> float:
        """The total ε rounded up (the same for every δ)."""
        _check_delta_arg(delta)
        return round_up(self.total)

    def delta(self, epsilon: Number) -> float:
        """0 when ``epsilon`` covers the total, else (e^E − e^ε)/(1 + e^E), rounded up."""
        e = _check_eps_arg(epsilon)
        total = self.total
        if e >= total:
            return 0.0
        big = float(total)
        val = -math.expm1(e - big) / (1.0 + math.exp(-big))
        return clamp_delta(val * (1 + 1e-12) + 1e-16)
