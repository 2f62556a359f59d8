"""No search: events fixed before the audit (a hypothesis from a proof, a paper or a bug report).

Estimating one known event spends the whole budget and the whole confidence on it: the union
bound covers only the given events.

Examples
--------
>>> import numpy as np
>>> import dpcert as dp
>>> from dpcert.audit import AuditOptions, audit
>>> from dpcert.audit.stats.events import Event, Identity
>>> def leaky(x, n):            # reveals whether x > 0, always
...     return [x > 0] * n
>>> given = GivenEvents(((0, Event(Identity(), 1.0, np.inf), True),))
>>> r = audit(leaky, [(1.0, 0.0)], AuditOptions(claimed=dp.PureDP(1.0), samples=1_000,
...                                             candidates=1, search=given, seed=0))
>>> r.violated, r.witness.event.describe()
(True, 'output ≥ 1')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dpcert.audit.kernel.handoff import Choice
from dpcert.audit.search.base import SearchOutcome, SearchTask
from dpcert.audit.stats.events import Event
from dpcert.errors import InvalidParameter

__all__ = ["GivenEvents"]


@dataclass(frozen=True, eq=False)
class GivenEvents:
    """Estimate ``events``: ``(pair index, event, forward)`` triples, as given."""

    events: Sequence[tuple[int, Event, bool]]

    def __post_init__(self) -> None:
        if not self.events:
            raise InvalidParameter("GivenEvents(events=()) needs at least one event")
        for i, e in enumerate(self.events):
            if not (isinstance(e, tuple) and len(e) == 3):
                raise InvalidParameter(f"events[{i}]={e!r} must be (pair, event, forward)")
            Choice(*e)

    @property
    def name(self) -> str:
        return "given events"

    def search(self, task: SearchTask) -> SearchOutcome:
        """The given events (checked against the task's pairs and union bound); no draws."""
        choices = tuple(Choice(*e) for e in self.events)
        if len(choices) > task.candidates + task.ladder:
            raise InvalidParameter(
                f"{len(choices)} given events, but the union bound covers "
                f"candidates + ladder = {task.candidates + task.ladder}")
        for c in choices:
            if c.pair >= len(task.pairs):
                raise InvalidParameter(f"event pair={c.pair} but the audit has "
                                       f"{len(task.pairs)} pair(s)")
        return SearchOutcome(choices, 0, 0)
