"""The hand-off from a search to the estimation: choices only (a pair, a fixed event, a
direction); the search plug-ins behind one interface."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import dpcert as dp
from dpcert.audit import AuditOptions, GivenEvents, Search, StandardSearch, audit
from dpcert.audit.kernel.handoff import Choice
from dpcert.audit.stats.events import Event, Identity
from dpcert.errors import InvalidParameter

UP = Event(Identity(), 1.0, np.inf)


def leaky(x: float, n: int) -> list[bool]:
    return [x > 0] * n


def test_a_choice_holds_a_pair_an_event_and_a_direction_only() -> None:
    assert [f.name for f in dataclasses.fields(Choice)] == ["pair", "event", "forward"]
    c = Choice(0, UP, True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.pair = 1  # type: ignore[misc]
    for bad in ((-1, UP, True), (True, UP, True), (0, "output ≥ 1", True)):
        with pytest.raises(InvalidParameter):
            Choice(*bad)  # type: ignore[arg-type]


def test_the_standard_search_hands_over_choices() -> None:
    seen: list[object] = []

    class Spy:
        name = "spy"

        def search(self, task):  # type: ignore[no-untyped-def]
            out = StandardSearch().search(task)
            seen.extend(out.choices)
            return out

    assert isinstance(StandardSearch(), Search) and isinstance(Spy(), Search)
    r = audit(leaky, [(1.0, -1.0)], AuditOptions(claimed=dp.PureDP(1.0), samples=1_000,
                                                 seed=0, search=Spy()))
    assert r.violated and seen and all(type(c) is Choice for c in seen)


def test_given_events_are_estimated_as_given() -> None:
    given = GivenEvents(((0, UP, True),))
    r = audit(leaky, [(1.0, -1.0)], AuditOptions(claimed=dp.PureDP(1.0), samples=1_000,
                                                 candidates=1, ladder=0, search=given,
                                                 seed=0))
    assert r.violated and r.witness is not None and r.witness.event is UP
    assert r.candidates == 1 and r.pairs_searched == 0
    # the wrong direction bounds nothing
    back = GivenEvents(((0, UP, False),))
    r = audit(leaky, [(1.0, -1.0)], AuditOptions(claimed=dp.PureDP(1.0), samples=1_000,
                                                 candidates=1, ladder=0, search=back, seed=0))
    assert r.epsilon_lower == 0.0 and not r.violated


def test_a_search_cannot_exceed_the_union_bound_or_the_pairs() -> None:
    two = GivenEvents(((0, UP, True), (0, UP, False)))
    with pytest.raises(InvalidParameter, match="union bound"):
        audit(leaky, [(1.0, -1.0)], AuditOptions(samples=1_000, candidates=1, ladder=0,
                                                 search=two))
    with pytest.raises(InvalidParameter, match="pair"):
        audit(leaky, [(1.0, -1.0)], AuditOptions(samples=1_000, candidates=1, ladder=0,
                                                 search=GivenEvents(((3, UP, True),))))

    class Greedy:
        name = "greedy"

        def search(self, task):  # type: ignore[no-untyped-def]
            out = GivenEvents(((0, UP, True),) * 3)
            return dataclasses.replace(out.search(dataclasses.replace(task, candidates=3)))

    with pytest.raises(InvalidParameter, match=r"greedy.*3 events.*covers 2"):
        audit(leaky, [(1.0, -1.0)], AuditOptions(samples=1_000, candidates=2, ladder=0,
                                                 search=Greedy()))
    with pytest.raises(InvalidParameter, match="at least one"):
        GivenEvents(())
