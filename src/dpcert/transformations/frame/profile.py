"""One number per privacy unit, for choosing bounds privately: ``(FrameDomain, UnitDistance) →
(VectorDomain, SymmetricDistance)``, ``d ↦ d`` (proof: ``docs/proofs/frame_autobounds.md``).

* `make_unit_profile`: each unit's number of distinct groups (``"groups"``) or its largest
  number of rows in one group (``"rows"``);
* `make_unit_extremes`: each unit's largest (``"max"``) or smallest (``"min"``) non-null,
  non-NaN value of a column, clamped to ±2^64 (a unit without one gives nothing); with rows as
  units, every such value.

A unit's number depends on its own rows only, so the multisets of two frames ``d`` units apart
differ by at most ``d`` entries.  The candidate grids the bounds are chosen from are public
constants (`count_candidates`, `value_candidates`).

Examples
--------
>>> c = count_candidates(64)
>>> c[:18], c[-1]
((1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 19, 23), 64)
>>> v = value_candidates()
>>> v[len(v) // 2], min(x for x in v if x > 0), max(v), len(v)
(0.0, 9.5367431640625e-07, 1.8446744073709552e+19, 675)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from dpcert.backends.base import FrameOps
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.metrics import Metric, SymmetricDistance
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter
from dpcert.transformations.frame.filter import check_frame_space

__all__ = ["COUNT_CAP", "STEPS_PER_OCTAVE", "count_candidates", "make_unit_extremes",
           "make_unit_profile", "value_candidates"]

#: Largest number of groups or rows per group a chosen contribution bound can take.
COUNT_CAP = 1 << 16
#: Candidates per factor of two in the geometric grids.
STEPS_PER_OCTAVE = 4
#: Smallest and largest non-zero |candidate| of the value grid: 2^-20 and 2^64.
VALUE_OCTAVES = (-20, 64)


def count_candidates(cap: int = COUNT_CAP) -> tuple[int, ...]:
    """Candidate contribution bounds: every integer to 16, then a geometric grid with
    `STEPS_PER_OCTAVE` steps per doubling (rounded, distinct), then ``cap``."""
    out = list(range(1, min(cap, 16) + 1))
    j = 1
    while (e := round(16 * 2 ** (j / STEPS_PER_OCTAVE))) < cap:
        if e > out[-1]:
            out.append(e)
        j += 1
    if out[-1] < cap:
        out.append(cap)
    return tuple(out)


def value_candidates() -> tuple[float, ...]:
    """Candidate value bounds: ``±2^(j/4)`` for ``2^-20 ≤ 2^(j/4) ≤ 2^64``, and 0."""
    lo, hi = VALUE_OCTAVES
    pos = [2.0 ** (j / STEPS_PER_OCTAVE)
           for j in range(lo * STEPS_PER_OCTAVE, hi * STEPS_PER_OCTAVE + 1)]
    return (*(-p for p in reversed(pos)), 0.0, *pos)


def _space(kind: type) -> tuple[VectorDomain, SymmetricDistance]:
    return VectorDomain(AtomDomain(kind)), SymmetricDistance()


def make_unit_profile(input_domain: Domain, input_metric: Metric, by: Sequence[str],
                      what: Literal["groups", "rows"], *,
                      backend: FrameOps | None) -> Transformation:
    """Each unit's number of distinct groups of ``by`` (``what="groups"``) or its largest
    number of rows in one group (``"rows"``); ``d ↦ d``."""
    domain, metric = check_frame_space("make_unit_profile", input_domain, input_metric)
    unit = metric.unit
    if unit is None:
        raise InvalidParameter("make_unit_profile needs a privacy unit column (rows are units: "
                               "nothing to choose)")
    for c in (unit, *by):
        if c not in domain.columns:
            raise InvalidParameter(f"column {c!r} is not in the schema {sorted(domain.columns)}")
    if what not in ("groups", "rows"):
        raise InvalidParameter(f"what={what!r} must be 'groups' or 'rows'")
    by_t = tuple(by)

    def function(frame: object) -> object:
        if backend is None:
            raise InvalidParameter("make_unit_profile was built without a backend")
        return backend.unit_profile(frame, unit, by_t, what)  # type: ignore[attr-defined]

    return Transformation(domain, metric, *_space(int), function=function,
                          stability_map=lambda d: d, name=f"unit_profile({what})",
                          params={"unit": unit, "by": list(by_t)},
                          proof="frame_autobounds.md")


def make_unit_extremes(input_domain: Domain, input_metric: Metric, column: str,
                       which: Literal["max", "min"], *,
                       backend: FrameOps | None) -> Transformation:
    """Each unit's largest (``which="max"``) or smallest (``"min"``) value of ``column``;
    ``d ↦ d``."""
    domain, metric = check_frame_space("make_unit_extremes", input_domain, input_metric)
    if column not in domain.columns:
        raise InvalidParameter(f"column {column!r} is not in the schema "
                               f"{sorted(domain.columns)}")
    if which not in ("max", "min"):
        raise InvalidParameter(f"which={which!r} must be 'max' or 'min'")
    unit = metric.unit

    def function(frame: object) -> object:
        if backend is None:
            raise InvalidParameter("make_unit_extremes was built without a backend")
        return backend.unit_extremes(frame, unit, column, which)  # type: ignore[attr-defined]

    return Transformation(domain, metric, *_space(float), function=function,
                          stability_map=lambda d: d, name=f"unit_extremes({which})",
                          params={"unit": unit, "column": column},
                          proof="frame_autobounds.md")
