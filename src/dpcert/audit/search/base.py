"""The interface every search implements: given the pairs and a plan, choose events to estimate.

A search is a plug-in in the sense of DP-Auditorium's tester interface (Kong et al., 2024: a
*property tester* estimates a divergence lower bound from two samples, a *dataset finder*
proposes neighbouring inputs): here a `Search` receives a `SearchTask` (the
mechanism's sampler, the fixed list of neighbouring pairs, the sizes and deadline the auditor
planned, the normal quantiles of the final bounds) and returns a `SearchOutcome`: the
chosen `Choice` values and how many draws it used.  It may
draw as much as it likes and look at anything; the estimation draws afresh and only sees the
choices, so no search can make the bound invalid, only weaker or stronger.

Implementations: `StandardSearch` (the default: fitted
statistics, screens, confirmation) and [`GivenEvents`][dpcert.audit.search.given.GivenEvents] (no
search: events chosen beforehand, e.g. from a paper's proof).

Examples
--------
>>> import numpy as np
>>> from dpcert.audit.search.given import GivenEvents
>>> from dpcert.audit.stats.events import Event, Identity
>>> s = GivenEvents(((0, Event(Identity(), 1.0, np.inf), True),))
>>> isinstance(s, Search), s.name
(True, 'given events')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from dpcert.audit.kernel.handoff import Choice
from dpcert.audit.kernel.outputs import OutputEncoder, Sampler
from dpcert.audit.kernel.parallel import Forking

__all__ = ["Plan", "Progress", "Search", "SearchOutcome", "SearchTask"]

#: Called with one line of progress text (the CLI prints it to stderr).
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Plan:
    """Draws per input for the search (``n_search``, per pair) and the estimation
    (``n_estimate``), draws per call (``chunk``), the pilot's seconds per draw and the audit's
    deadline on the ``time.perf_counter`` clock (None: no time budget)."""

    n_search: int
    n_estimate: int
    chunk: int
    per_draw: float
    deadline: float | None


@dataclass(frozen=True, eq=False)
class SearchTask:
    """What a search is given.

    ``z`` is the normal quantile of the estimation's per-event bounds and ``z_search`` the one
    to predict them with (the ratio bound's, lower); ``delta`` the δ at which ε is bounded;
    ``candidates`` and ``ladder`` how many events the union bound was sized for (the search
    may return fewer, never more); ``started`` the audit's start on the ``perf_counter``
    clock; ``fork`` the worker processes a search may draw with (None: this process only).
    """

    sampler: Sampler
    pairs: Sequence[tuple[object, object]]
    plan: Plan
    encoder: OutputEncoder
    z_search: float
    delta: float
    candidates: int
    ladder: int
    started: float
    progress: Progress | None = None
    fork: Forking | None = None


@dataclass(frozen=True, eq=False)
class SearchOutcome:
    """The chosen events, the search's draws (both inputs, all pairs) and pairs searched."""

    choices: tuple[Choice, ...]
    draws: int
    pairs_searched: int


@runtime_checkable
class Search(Protocol):
    """A search plug-in: ``search(task)`` returns at most ``task.candidates + task.ladder``
    choices (the union bound's size)."""

    @property
    def name(self) -> str: ...

    def search(self, task: SearchTask) -> SearchOutcome: ...
