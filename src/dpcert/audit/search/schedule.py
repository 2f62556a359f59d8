"""The schedule: every share of an audit's time budget, in one object.

An audit on a time budget ``T`` (``seconds=``) splits it as follows (``t`` is the time left when a
step starts; every share is of the quantity named, never a fixed number of seconds):

==================  =======================================================================
field               what it is a share of
==================  =======================================================================
``planned``         ``T`` planned for drawing; the rest absorbs fitting and counting
``search``          ``T`` the search may use (the estimation gets the rest)
``discrete``        the search's ``t`` for the discrete or the pattern screen
``wide``            the search's ``t`` kept for the wide screen of numeric vectors
``wide_first``      the wide screen's ``t`` spent ranking every pair (more pairs than finalists)
``final_round``     the discrete screen's time for its last, fixed-event round
``join``            the pattern screen's time for measuring the blocks' intersection
``confirm``         ``T``, after the search, for confirming thinly supported leaders
``contest``         ``T``, after the confirmation, for the contest between close pairs
``drawing``         the estimation's ``t`` spent drawing, to size predicted estimation batches
==================  =======================================================================

Only the search and its screens read the schedule; the estimation and the bounds
(`dpcert.audit.kernel`) know nothing of it: how the budget is split changes which events
are estimated and on how many draws, never whether the bound holds.

Examples
--------
>>> SCHEDULE.search, SCHEDULE.estimation
(0.4, 0.6)
>>> Schedule(search=0.5).estimation
0.5
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from dpcert.errors import InvalidParameter

__all__ = ["SCHEDULE", "Schedule"]


@dataclass(frozen=True)
class Schedule:
    """Shares of an audit's time budget (see the module's table).  Each is in ``(0, 1]``."""

    planned: float = 0.8
    search: float = 0.4
    discrete: float = 0.75
    wide: float = 0.15
    wide_first: float = 0.35
    final_round: float = 0.18
    join: float = 0.25
    confirm: float = 0.05
    contest: float = 0.06
    drawing: float = 0.8

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 < v <= 1.0):
                raise InvalidParameter(f"Schedule.{f.name}={v!r} must be in (0, 1]")
        if self.search + self.confirm + self.contest >= 1.0:
            raise InvalidParameter(
                f"Schedule: search + confirm + contest = "
                f"{self.search + self.confirm + self.contest:g} must leave time to estimate")

    @property
    def estimation(self) -> float:
        """Share of the budget planned for the estimation: ``1 − search``."""
        return 1.0 - self.search


#: The schedule every audit uses unless its options name another.
SCHEDULE = Schedule()
