"""What a search hands to the estimation: a pair, a fixed event and a direction, nothing else.

The estimation (`run_estimation`) and the bounds
(`dpcert.audit.kernel.verdict`) see only a tuple of `Choice` values.  A search's
scores, predictions, supports and draws stay behind: they may pick the events, they never
enter the bound.  This is what makes the bound valid *however the search went*: the events
are fixed before the fresh estimation batch is drawn, and the union bound covers every choice
(see ``docs/auditor.md``, "Why the bound is sound").

Examples
--------
>>> import numpy as np
>>> from dpcert.audit.stats.events import Event, Identity
>>> c = Choice(0, Event(Identity(), 1.0, np.inf), True)
>>> c.pair, c.event.describe(), c.forward
(0, 'output ≥ 1', True)
"""

from __future__ import annotations

from dataclasses import dataclass

from dpcert.audit.stats.events import Event
from dpcert.errors import InvalidParameter

__all__ = ["Choice"]


@dataclass(frozen=True, eq=False)
class Choice:
    """One event to estimate.

    Attributes
    ----------
    pair
        Index of the pair ``(x, x')`` in the audit's pair list (fixed before the search).
    event
        The event ``S``: a statistic and an interval of its values, fixed by the search.
    forward
        True when ``S`` is bounded as likelier under ``M(x)`` than under ``M(x')``; False for
        the other direction.
    """

    pair: int
    event: Event
    forward: bool

    def __post_init__(self) -> None:
        if isinstance(self.pair, bool) or not isinstance(self.pair, int) or self.pair < 0:
            raise InvalidParameter(f"Choice.pair={self.pair!r} must be an index >= 0")
        if not isinstance(self.event, Event):
            raise InvalidParameter(f"Choice.event={self.event!r} must be an Event")
