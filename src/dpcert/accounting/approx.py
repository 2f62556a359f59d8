"""The approximate-DP accountant: basic composition of (ε, δ) guarantees (Dwork et al. 2006).

Leaves: everything `PureAccountant` supports (δ = 0), ``ApproxEvent``,
and their subsampled versions: (log(1 + γ(e^ε − 1)), γδ) (Balle, Barthe & Gaboardi 2018).
``epsilon(delta)`` is Σε when ``delta`` ≥ Σδ, else ``inf``; for tighter totals use
`dpcert.combinators.advanced_composition` or the PLD accountant.

Examples
--------
>>> from dpcert.accounting import ApproxAccountant, ApproxEvent
>>> acc = ApproxAccountant().compose(ApproxEvent(0.5, 1e-7), 4)
>>> acc.total
(Fraction(2, 1), Fraction(1, 2500000))
>>> acc.epsilon(1e-6), acc.epsilon(1e-7)
(2.0, inf)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from dpcert._numbers import Number, as_fraction, round_up
from dpcert.accounting.accountant import Accountant, _check_delta_arg, _check_eps_arg, leaves
from dpcert.accounting.pure import amplify_epsilon, epsilon_of
from dpcert.core.events import (
    ApproxEvent,
    ComposedEvent,
    Event,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
)
from dpcert.errors import UnsupportedEvent

__all__ = ["ApproxAccountant", "approx_of"]


def approx_of(event: Event) -> tuple[Fraction, Fraction]:
    """The (ε, δ) of one leaf (raises `UnsupportedEvent`)."""
    if isinstance(event, ApproxEvent):
        return event.epsilon, event.delta
    if isinstance(event, (ComposedEvent, SelfComposedEvent)):
        te, td = Fraction(0), Fraction(0)
        for leaf, k in leaves(event):
            e, d = approx_of(leaf)
            te, td = te + k * e, td + k * d
        return te, min(td, Fraction(1))
    if isinstance(event, SampledWithoutReplacementEvent) and isinstance(
            event.event, PoissonSampledEvent):
        try:
            return epsilon_of(event), Fraction(0)
        except UnsupportedEvent:
            raise UnsupportedEvent(
                f"{event!r}: no replace-one guarantee is implemented for a Poisson-sampled "
                "(ε, δ) event with δ > 0"
            ) from None
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
        e, d = approx_of(event.event)
        return amplify_epsilon(e, event.rate), event.rate * d
    try:
        return epsilon_of(event), Fraction(0)
    except UnsupportedEvent:
        raise UnsupportedEvent(
            f"ApproxAccountant cannot account for {type(event).__name__}"
        ) from None


@dataclass(frozen=True)
class ApproxAccountant(Accountant):
    """Sums ε and δ exactly."""

    def _supports_leaf(self, event: Event) -> bool:
        try:
            approx_of(event)
        except UnsupportedEvent:
            return False
        return True

    @property
    def total(self) -> tuple[Fraction, Fraction]:
        """The exact (Σε, min(1, Σδ))."""
        e, d = Fraction(0), Fraction(0)
        for ev, k in self.entries:
            xe, xd = approx_of(ev)
            e += k * xe
            d += k * xd
        return e, min(d, Fraction(1))

    def epsilon(self, delta: Number) -> float:
        """Σε (rounded up) if ``delta`` ≥ Σδ, else ``inf``."""
        _check_delta_arg(delta)
        e, d = self.total
        return round_up(e) if as_fraction(delta, "delta") >= d else math.inf

    def delta(self, epsilon: Number) -> float:
        """Σδ (rounded up) if ``epsilon`` ≥ Σε, else the trivial bound 1."""
        _check_eps_arg(epsilon)
        e, d = self.total
        return round_up(d) if as_fraction(epsilon, "epsilon") >= e else 1.0
