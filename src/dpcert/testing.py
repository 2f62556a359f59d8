"""Contract checks every transformation and measurement must pass (used by dpcert's own tests,
and available to anyone who writes their own components).

Examples
--------
>>> import dpcert as dp
>>> from dpcert.testing import check_transformation_contract
>>> t = dp.t.make_clamp(dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance(), 0.0, 1.0)
>>> check_transformation_contract(t, [0, 1, 2, 5])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from dpcert.core.measurement import Measurement
from dpcert.core.metrics import scalar_distance
from dpcert.core.transformation import Transformation

if TYPE_CHECKING:  # imported lazily at run time (they need Polars): see __getattr__
    from dpcert.frame.neighbours import adversarial_unit, check_neighbours, neighbours

__all__ = ["adversarial_unit", "check_measurement_contract", "check_neighbours",
           "check_transformation_contract", "neighbours"]


def _check_frozen(obj: Any) -> None:  # Any: it tries the writes that the types forbid
    try:
        obj.name = "mutated"
    except dataclasses.FrozenInstanceError:
        pass
    else:  # pragma: no cover - only reached by a broken component
        raise AssertionError(f"{obj!r} is mutable")
    if obj.params:
        key = next(iter(obj.params))
        try:
            obj.params[key] = None
        except TypeError:
            pass
        else:  # pragma: no cover
            raise AssertionError(f"{obj!r}.params is mutable")


def check_transformation_contract(t: Transformation, d_ins: Sequence[int | Fraction]) -> None:
    """Immutability; the map is non-negative, monotone, and ``check`` agrees with ``map``."""
    _check_frozen(t)
    prev = None
    for d in sorted(d_ins):
        out = scalar_distance(t.map(d), "map")
        assert out >= 0, f"{t.name}: map({d}) = {out} < 0"
        if prev is not None:
            assert out >= prev, f"{t.name}: map not monotone at d_in={d}"
        assert t.check(d, out), f"{t.name}: check(d, map(d)) is False at d_in={d}"
        if out > 0:
            below = out - 1 if isinstance(out, int) else out * Fraction(1023, 1024)
            assert not t.check(d, below), f"{t.name}: check accepts less than map at d_in={d}"
        prev = out


def check_measurement_contract(m: Measurement, d_ins: Sequence[int | Fraction]) -> None:
    """Immutability; the map is non-negative and monotone; ``check`` agrees with ``map``."""
    _check_frozen(m)
    measure = m.output_measure
    prev = None
    for d in sorted(d_ins):
        out = m.map(d)
        measure.validate_distance(out)
        assert measure.compare(measure.zero(), out), f"{m.name}: map({d}) below zero"
        if prev is not None:
            assert measure.compare(prev, out), f"{m.name}: map not monotone at d_in={d}"
        assert m.check(d, out), f"{m.name}: check(d, map(d)) is False at d_in={d}"
        prev = out


def __getattr__(name: str) -> Any:
    """The neighbour harness (`dpcert.frame.neighbours`), imported on first use so that
    ``dpcert.testing`` does not need Polars."""
    if name == "check_neighbours":  # omitted bounds: the choices too (frame/autobounds.py)
        from dpcert.frame.autobounds_neighbours import check_any_neighbours

        return check_any_neighbours
    if name in ("neighbours", "adversarial_unit"):
        from dpcert.frame import neighbours as _nb

        return getattr(_nb, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
