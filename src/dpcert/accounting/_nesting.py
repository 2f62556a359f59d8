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

from dpcert.core.events import (
    ComposedEvent,
    Event,
    SelfComposedEvent,
)

__all__ = ["flat_leaves"]


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
