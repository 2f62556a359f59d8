"""The accounting event of an engine release, so that sessions and the ledger charge tightly.

A release's :class:`~dpcert.frame.calibrate.Calibration` lists its noisy components; its event
is the composition of one event per component (``docs/proofs/filters.md``):

* a (discrete) Laplace component whose privacy unit touches one group (``max_groups = 1``) is a
  scalar query with integer L1 sensitivity Δ (in lattice units): ``DiscreteLaplaceEvent(b, Δ)``
  — exact, so a declared batch of them composes with the PLD of the real noise;
* any other Laplace component, the quantiles (permute-and-flip, ε-DP) and any component whose
  exact pair is not used: ``PureEvent(ε)`` — every ε-DP mechanism is dominated by randomized
  response with ε (Kairouz, Oh & Viswanath 2015), so this never under-charges;
* under a zCDP budget, every component: ``ZCDPEvent(ρ)``, its exact ρ;
* partition selection: ``ApproxEvent(ε, δ)``, its proven (ε, δ).

Every component's event is stated for add/remove neighbours of privacy units.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from dpcert.core.events import (
    ApproxEvent,
    ComposedEvent,
    DiscreteLaplaceEvent,
    Event,
    PureEvent,
    Relation,
    ZCDPEvent,
)

__all__ = ["calibration_event", "release_event"]

#: Largest integer sensitivity (lattice units) given to the exact discrete-Laplace pair; above
#: it the pure-DP pair is used (the PLD of a huge lattice would be slow, never unsound).
_MAX_EXACT_SENSITIVITY = 10_000


def _epsilon(cost: Any) -> Fraction:
    return cost[0] if isinstance(cost, tuple) else Fraction(cost)


def _component_event(c: Any, max_groups: int, zcdp: bool) -> Event | None:
    rel: Relation = "add_remove"
    if zcdp:  # every component's cost is its exact ρ
        return ZCDPEvent(c.cost, neighbours=rel) if c.cost else None
    if c.kind == "select":
        e, d = c.cost
        return ApproxEvent(e, d, neighbours=rel)
    eps = _epsilon(c.cost)
    if eps == 0:
        return None
    if (c.noise == "discrete_laplace" and max_groups == 1 and c.l1.denominator == 1
            and c.l1 <= _MAX_EXACT_SENSITIVITY and c.scale > 0 and c.l1 / c.scale == eps):
        return DiscreteLaplaceEvent(c.scale, c.l1, neighbours=rel)
    return PureEvent(eps, neighbours=rel)


def calibration_event(cal: Any, max_groups: int) -> Event:
    """The event of one release (a ``ComposedEvent`` of its components' events)."""
    from dpcert.core.measures import ZCDP

    zcdp = isinstance(cal.measure, ZCDP)
    evs = [e for c in cal.components
           if (e := _component_event(c, max_groups, zcdp)) is not None]
    return ComposedEvent(evs)


def release_event(cals: Sequence[tuple[Any, int]]) -> Event:
    """The event of several releases declared together (one batch)."""
    return ComposedEvent([calibration_event(c, g) for c, g in cals])
