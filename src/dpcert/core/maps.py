"""Named types for the maps a transformation or measurement carries.

A map receives an input distance that its input metric has validated, and returns a bound that the
output metric or measure validates in turn: a distance for a stability map, a `Loss` for a
privacy map.  The argument's type is the input metric's (a count of changed records, a
sensitivity, a group distance's tuple of counts), so it is not constrained statically here; each
constructor annotates its own map with its metric's distance type.

Examples
--------
>>> from fractions import Fraction
>>> double: StabilityMap = lambda d: 2 * d
>>> double(Fraction(1, 3))
Fraction(2, 3)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from dpcert._types import Array, DistanceLike
from dpcert.core.measures import Loss

if TYPE_CHECKING:
    from dpcert.core.events import Event

__all__ = ["BatchMap", "EventMap", "Function", "Loss", "PrivacyMap", "Releases",
           "StabilityMap"]

#: ``d_in ↦ d_out`` of a transformation, from its input metric's distance.
StabilityMap: TypeAlias = Callable[[Any], DistanceLike]
#: ``d_in ↦ loss`` of a measurement, from its input metric's distance.
PrivacyMap: TypeAlias = Callable[[Any], Loss]
#: A transformation's or measurement's function, applied to members of its input domain (checked
#: at run time by the domain) and returning the output.
Function: TypeAlias = Callable[[Any], object]
#: ``d_in ↦ event`` of a measurement, for accountants that compose tightly.
EventMap: TypeAlias = "Callable[[Any], Event]"
#: ``n`` releases of a measurement: an array (one row or entry per release) or a sequence.
Releases: TypeAlias = "Array | Sequence[object]"
#: ``(data, n) ↦`` ``n`` independent releases on ``data``, vectorised.
BatchMap: TypeAlias = "Callable[[Any, int], Releases]"
