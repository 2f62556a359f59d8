"""The accountant interface shared by every accountant.

Accountants are immutable: ``compose(event, count)`` returns a *new* accountant, so a total can be
kept, branched and compared without copying::

    acc = PLDAccountant().compose(GaussianEvent(sigma=50), 1000)
    acc.epsilon(1e-6)

``supports(event)`` says whether every leaf of the event tree can be accounted; ``compose`` raises
`UnsupportedEvent` otherwise (nothing is guessed).  ``epsilon(delta)`` and
``delta(epsilon)`` are floats rounded *up*.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TypeVar

from dpcert._numbers import Number, as_fraction
from dpcert._validate import check_int
from dpcert.core.events import ComposedEvent, Event, SelfComposedEvent
from dpcert.errors import InvalidParameter, UnsupportedEvent

__all__ = ["Accountant", "leaves"]

A = TypeVar("A", bound="Accountant")


def leaves(event: Event, count: int = 1) -> Iterator[tuple[Event, int]]:
    """The leaves of an event tree with their multiplicities (Composed/SelfComposed expanded)."""
    if isinstance(event, ComposedEvent):
        for e in event.events:
            yield from leaves(e, count)
    elif isinstance(event, SelfComposedEvent):
        if event.count:
            yield from leaves(event.event, count * event.count)
    elif isinstance(event, Event):
        if count:
            yield event, count
    else:
        raise InvalidParameter(f"event={event!r} is not an accounting Event")


def _check_delta_arg(delta: Number) -> float:
    d = as_fraction(delta, "delta")
    if not 0 < d < 1:
        raise InvalidParameter(f"delta={delta!r} must be in (0, 1)")
    return float(d)


def _check_eps_arg(epsilon: Number) -> float:
    e = as_fraction(epsilon, "epsilon")
    if e < 0:
        raise InvalidParameter(f"epsilon={epsilon!r} must be >= 0")
    return float(e)


@dataclass(frozen=True)
class Accountant:
    """Base class: holds the composed leaves as ``(event, count)`` pairs."""

    entries: tuple[tuple[Event, int], ...] = field(default=(), kw_only=True)

    def _supports_leaf(self, event: Event) -> bool:
        raise NotImplementedError

    def supports(self, event: Event) -> bool:
        """Whether every leaf of ``event`` can be accounted for by this accountant."""
        try:
            return all(self._supports_leaf(e) for e, _ in leaves(event))
        except InvalidParameter:
            return False

    def compose(self: A, event: Event, count: int = 1) -> A:
        """A new accountant that has also seen ``count`` runs of ``event``."""
        c = check_int(count, "count", minimum=0)
        new = list(self.entries)
        for leaf, k in leaves(event, c):
            if not self._supports_leaf(leaf):
                raise UnsupportedEvent(
                    f"{type(self).__name__} cannot account for {leaf!r} (nothing is guessed)"
                )
            new.append((leaf, k))
        return replace(self, entries=tuple(new))

    def merged(self) -> dict[Event, int]:
        """Leaves with their total counts (equal events merged)."""
        out: dict[Event, int] = {}
        for e, k in self.entries:
            out[e] = out.get(e, 0) + k
        return out

    def epsilon(self, delta: Number) -> float:
        """An upper bound on ε at ``delta`` (float rounded up; ``inf`` if none is known)."""
        raise NotImplementedError

    def delta(self, epsilon: Number) -> float:
        """An upper bound on δ at ``epsilon`` (float rounded up, at most 1)."""
        raise NotImplementedError


def clamp_delta(x: float) -> float:
    """A δ bound as reported: within [0, 1]; NaN becomes the trivial bound 1."""
    if math.isnan(x):
        return 1.0
    return min(1.0, max(0.0, x))
