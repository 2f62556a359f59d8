"""Row-local filtering of a frame: ``d ↦ d`` units (proof: ``docs/proofs/frame_filter.md``).

The predicates are checked against the backend's expression allow-list when the transformation
is built (`dpcert.backends.base.FrameOps.check_predicates`: functions of one row that
cannot fail on any value of the schema; SQL strings are parsed and walked the same way), so an
aggregation, a window, a sort or a UDF is refused before anything is charged.

The map is the identity: each unit's rows after the filter are a function of that unit's rows
alone, so units added or removed stay added or removed (or vanish).  Tests:
``tests/transformations/frame/test_frame_constructors.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpcert.backends.base import FrameOps
from dpcert.core.domains import Domain
from dpcert.core.frames import FrameDomain, UnitDistance
from dpcert.core.metrics import Metric
from dpcert.core.partial import PartialConstructor, partial
from dpcert.core.transformation import Transformation
from dpcert.errors import DomainMismatch, InvalidParameter, MetricMismatch

__all__ = ["check_frame_space", "make_frame_filter", "then_frame_filter"]


def check_frame_space(who: str, input_domain: Domain, input_metric: Metric
                      ) -> tuple[FrameDomain, UnitDistance]:
    """``(FrameDomain, UnitDistance)`` or a mismatch error naming ``who``."""
    if not isinstance(input_domain, FrameDomain):
        raise DomainMismatch(f"{who} needs a FrameDomain, got {input_domain!r}")
    if not isinstance(input_metric, UnitDistance):
        raise MetricMismatch(f"{who} needs UnitDistance, got {type(input_metric).__name__}")
    return input_domain, input_metric


def make_frame_filter(input_domain: Domain, input_metric: Metric, predicates: Sequence[object],
                      *, backend: FrameOps) -> Transformation:
    """Keep the rows on which every predicate holds.

    Parameters
    ----------
    input_domain : FrameDomain
    input_metric : UnitDistance
    predicates
        Backend expressions or SQL strings; each must pass ``backend.check_predicates`` (raises
        `UnsafeExpression` naming the sub-expression otherwise).
    backend : FrameOps

    Returns
    -------
    Transformation
        Frame → frame on the same space; ``map(d) = d``.
    """
    domain, metric = check_frame_space("make_frame_filter", input_domain, input_metric)
    if domain.bounds is not None:
        raise InvalidParameter(
            "make_frame_filter: filter before make_bound_contributions (a filter after "
            "bounding would still be row-local, but the engine's plans never need it)")
    preds = tuple(backend.check_predicates(tuple(predicates), domain.columns))
    ops = backend
    return Transformation(
        domain, metric, domain, metric,
        function=lambda frame: ops.filter(frame, preds) if preds else frame,
        stability_map=lambda d: d,
        name="frame_filter",
        params={"predicates": [str(p) for p in preds], "backend": ops.name},
        proof="frame_filter.md",
    )


def then_frame_filter(predicates: Sequence[object], *, backend: FrameOps) -> PartialConstructor:
    """Partial form of `make_frame_filter`."""
    return partial(make_frame_filter, "frame_filter", predicates, backend=backend)
