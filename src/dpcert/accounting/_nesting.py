"""Sampling wrappers around compositions (one sample shared by several queries), reduced to a
single base event that dominates the inner composition.

``PoissonSampledEvent(ComposedEvent([...]), q)`` runs every inner query on *one* Poisson sample.
Amplification by subsampling applies to any mechanism given a dominating pair (P, Q) of it for
add/remove neighbours (Zhu, Dong & Wang 2022, Thm. 11), so it suffices to dominate the inner
composition by one base event:

* only Gaussian leaves (L2 sensitivities Δᵢ, noise σᵢ, counts kᵢ): the composition's pair is
  (N(0, I), N(μ, I)) with ‖μ‖² = Σ kᵢ Δᵢ²/σᵢ², which is the pair of one Gaussian with
  σ/Δ = 1/‖μ‖ (Dong, Roth & Su 2022, Cor. 3.3); σ is rounded down (more loss);
* only pure leaves: the composition is (Σ kᵢ εᵢ)-DP and every ε-DP mechanism is dominated by
  randomized response with ε (Kairouz, Oh & Viswanath 2015), i.e. ``PureEvent(Σ kᵢ εᵢ)``;
* otherwise, if every leaf has an (ε, δ) statement, ``ApproxEvent(Σ kᵢ εᵢ, Σ kᵢ δᵢ)`` (basic
  composition; its pair dominates every (ε, δ)-DP mechanism).

Proof: ``docs/proofs/amplification.md``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from dpcert.core.events import (
    ComposedEvent,
    Event,
    GaussianEvent,
    SelfComposedEvent,
)
from dpcert.errors import UnsupportedEvent

__all__ = ["dominating_base", "flat_leaves"]


def flat_leaves(event: Event, count: int = 1) -> list[tuple[Event, int]]:
    """Leaves of ``event`` with multiplicities (Composed / SelfComposed expanded)."""
    if isinstance(event, ComposedEvent):
        out: list[tuple[Event, int]] = []
        for e in event.events:
            out += flat_leaves(e, count)
        return out
    if isinstance(event, SelfComposedEvent):
        return flat_leaves(event.event, count * event.count) if event.count else []
    return [(event, count)] if count else []


def dominating_base(event: Event) -> Event:
    """One base event whose pair dominates ``event`` (a leaf is returned as it is).

    Raises :class:`~dpcert.errors.UnsupportedEvent` when no reduction above applies.
    """
    parts = flat_leaves(event)
    if len(parts) == 1 and parts[0][1] == 1:
        return parts[0][0]
    if not parts:
        raise UnsupportedEvent(f"event={event!r} is empty: nothing is sampled")
    if all(type(e) is GaussianEvent for e, _ in parts):
        rho = sum((k * e.rho for e, k in parts), Fraction(0))  # type: ignore[attr-defined]
        sigma = math.sqrt(1.0 / (2.0 * float(rho))) * (1.0 - 1e-12)
        return GaussianEvent(Fraction(sigma), 1)
    from dpcert.accounting.approx import approx_of
    from dpcert.accounting.pure import epsilon_of
    from dpcert.core.events import ApproxEvent, PureEvent

    try:
        return PureEvent(sum((k * epsilon_of(e) for e, k in parts), Fraction(0)))
    except UnsupportedEvent:
        pass
    total_e, total_d = Fraction(0), Fraction(0)
    for e, k in parts:
        xe, xd = approx_of(e)
        total_e, total_d = total_e + k * xe, total_d + k * xd
    if total_d >= 1:
        raise UnsupportedEvent(f"event={event!r}: the inner composition has δ ≥ 1")
    return ApproxEvent(total_e, total_d)
