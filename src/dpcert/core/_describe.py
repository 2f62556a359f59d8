"""Leaf helpers shared by `Transformation` and `Measurement`: frozen parameters,
JSON-friendly values and the proof-note/children bookkeeping that `dpcert.core.trace` reads.

This module imports nothing from the rest of `dpcert.core`, so the component classes can
depend on it without a cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import Literal

from dpcert._types import JSON

__all__ = ["Wiring", "frozen_params", "jsonable"]

#: How a composite passes its ``d_in`` to its children: ``"chain"`` -- each child gets the
#: previous child's ``d_out`` (transformation chains); ``"shared"`` -- every child is evaluated at
#: the parent's ``d_in`` (composition, conversions, post-processing).
Wiring = Literal["chain", "shared"]


def frozen_params(params: Mapping[str, object] | None) -> Mapping[str, object]:
    """A read-only copy of a constructor's parameters.

    Examples
    --------
    >>> p = frozen_params({"scale": 2})
    >>> p["scale"]
    2
    """
    return MappingProxyType(dict(params or {}))


def jsonable(v: object) -> JSON:
    """A JSON-friendly rendering: Fractions as exact strings, sequences as lists, others as repr.

    Examples
    --------
    >>> from fractions import Fraction
    >>> jsonable((Fraction(1, 3), 2, None))
    ['1/3', 2, None]
    """
    if isinstance(v, Fraction):
        return str(v)
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): jsonable(x) for k, x in v.items()}
    return repr(v)

