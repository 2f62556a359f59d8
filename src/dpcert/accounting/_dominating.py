"""The dominating base event of a nested composition (used under Poisson subsampling).

Split from `dpcert.accounting._nesting` so that ``_nesting`` (imported by the pure and
approximate accountants) does not import them back.
"""

from __future__ import annotations

import math
from fractions import Fraction

from dpcert.accounting._nesting import flat_leaves
from dpcert.accounting.approx import approx_of
from dpcert.accounting.pure import epsilon_of
from dpcert.core.events import ApproxEvent, Event, GaussianEvent, PureEvent
from dpcert.errors import UnsupportedEvent

__all__ = ["dominating_base"]


def dominating_base(event: Event) -> Event:
    """One base event whose pair dominates ``event`` (a leaf is returned as it is).

    Raises `UnsupportedEvent` when no reduction above applies.
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
