"""Candidate events handed from the search to the estimation, and the ladder of nested rays.

Shared by `dpcert.audit.search.standard` and `dpcert.audit.search.screen` (the wide
screen).

Examples
--------
>>> import numpy as np
>>> from dpcert.audit.stats.events import Event, Identity
>>> best = Candidate(0, Event(Identity(), 0.0, np.inf), True, 0.5)
>>> rungs = _ladder(best, np.arange(1000.0), np.arange(1000.0), n_estimate=10**6, z=2.0,
...                 delta=0.0)
>>> [c.event.describe() for c in rungs][:2]
['output ≥ 899.1', 'output ≥ 969.03']
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpcert._types import Array
from dpcert.audit.search.intervals import predicted_one
from dpcert.audit.stats.events import Event

__all__ = ["HOLDOUT", "LADDER_TAILS", "Candidate"]

#: Share of each search batch held out to re-score the selected events.
HOLDOUT = 1.0 / 3.0
#: Tail probabilities (under the favoured input) of the nested rays sent to estimation beside
#: the best event (see ``_ladder``).
LADDER_TAILS = (0.1, 0.03, 0.01, 0.003)


@dataclass(frozen=True, eq=False)
class Candidate:
    """An event to estimate: pair index, event, direction and the bound the search predicts.

    ``support`` and ``against``: how many draws of the likelier and of the other input fell in
    the event among the ``held`` draws per input that ``predicted`` was measured on
    (``support`` is ``inf`` when not recorded: screens of 10⁵–10⁸ draws);
    `dpcert.audit.search.confirm` re-measures candidates with little support."""

    pair: int
    event: Event
    forward: bool
    predicted: float
    ladder: bool = False
    support: float = math.inf
    held: int = 0
    against: float = 0.0


def _ladder(best: Candidate, ha: Array, hb: Array, *, n_estimate: int, z: float,
            delta: float) -> list[Candidate]:
    """Smaller rays of ``best``'s statistic, nested inside its event: thresholds at the
    `LADDER_TAILS` quantiles (of the held-out outputs ``ha`` of x and ``hb`` of x', of
    the favoured input's) beyond its own.  The search cannot tell a strong event of
    probability 0.5 % from a weak one of 20 % on 10⁵ draws; the estimation batch of 10⁶–10⁷
    can, so a few nested rays go to it.  Each rung's prediction is its own, on the held-out
    outputs, at their point estimates (no pessimism: it only ranks the rungs of one ladder,
    and a pessimistic one ranks the rarer rungs, the ones the estimation's larger batch is
    for, last)."""
    low, high = float(best.event.low), float(best.event.high)
    upper = math.isinf(high) and not math.isinf(low)
    lower = math.isinf(low) and not math.isinf(high)
    if not (upper or lower):
        return []
    sa, sb = best.event.statistic(ha), best.event.statistic(hb)
    s1, s2 = (sa, sb) if best.forward else (sb, sa)
    s = s1[np.isfinite(s1)]
    if s.size == 0:
        return []
    tails = np.array(LADDER_TAILS)
    cuts = np.quantile(s, 1.0 - tails if upper else tails)
    out = []
    for t in np.unique(cuts):
        t = float(t)
        if (upper and t > low) or (lower and t < high):
            ev = Event(best.event.statistic, t, math.inf) if upper else \
                Event(best.event.statistic, -math.inf, t)
            k1 = float(np.count_nonzero((s1 >= ev.low) & (s1 <= ev.high)))
            k2 = float(np.count_nonzero((s2 >= ev.low) & (s2 <= ev.high)))
            pred = predicted_one(k1, k2, s1.size, s2.size, n_estimate, z, delta, 0.0)
            out.append(Candidate(best.pair, ev, best.forward, pred, True, support=k1,
                                 held=s1.size, against=k2))
    return out
