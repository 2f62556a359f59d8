"""Non-adaptive sequential composition of measurements on the same input space.

Privacy (``docs/proofs/composition.md``): if M_i is d_i-private at d_in in a measure, the tuple
(M_1, …, M_k) is ``measure.compose([d_1, …, d_k])``-private: Σε (pure, Dwork et al. 2006),
(Σε, Σδ) (approx, Dwork et al. 2006), Σρ (zCDP, Bun & Steinke 2016, Lemma 2.3), and the pointwise
sum of Rényi curves (Mironov 2017, Prop. 1).  The composed measurement's accounting event is the
``ComposedEvent`` of its parts, so tight accountants see every part.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> total = space >> dp.t.then_clamp(0.0, 1.0) >> dp.t.then_sum() >> dp.m.then_laplace(10.0)
>>> count = space >> dp.t.then_count() >> dp.m.then_laplace(10.0)
>>> both = dp.c.make_composition([total, count])
>>> 0.2 <= float(both.map(1)) < 0.2001
True
>>> len(both([0.5, 0.25]))
2
>>> [len(draw) for draw in both.sample([0.5, 0.25], 3)]
[2, 2, 2]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dpcert._types import DistanceLike
from dpcert.core.measurement import Measurement

if TYPE_CHECKING:
    from dpcert.core.events import Event
from dpcert.errors import DomainMismatch, InvalidParameter, MeasureMismatch, MetricMismatch

__all__ = ["check_same_space", "make_composition"]


def check_same_space(measurements: Sequence[Measurement], who: str) -> Measurement:
    """Check the measurements share input domain, metric and measure; returns the first."""
    ms = list(measurements)
    if not ms:
        raise InvalidParameter(f"{who}: measurements=[] must not be empty")
    for i, m in enumerate(ms):
        if not isinstance(m, Measurement):
            raise InvalidParameter(f"{who}: measurements[{i}]={m!r} is not a Measurement")
    first = ms[0]
    for i, m in enumerate(ms[1:], start=1):
        if m.input_domain != first.input_domain:
            raise DomainMismatch(
                f"{who}: measurements[{i}] has input domain {m.input_domain!r} != "
                f"{first.input_domain!r}"
            )
        if m.input_metric != first.input_metric:
            raise MetricMismatch(
                f"{who}: measurements[{i}] has input metric {type(m.input_metric).__name__} != "
                f"{type(first.input_metric).__name__}"
            )
        if not first.output_measure.same_kind(m.output_measure) or (
            m.output_measure != first.output_measure
        ):
            raise MeasureMismatch(
                f"{who}: measurements[{i}] is private under {m.output_measure!r}, not "
                f"{first.output_measure!r}; convert it first (dpcert.c.make_*_to_*)"
            )
    return first


def make_composition(measurements: Sequence[Measurement]) -> Measurement:
    """Run every measurement on the same data and return the list of their outputs.

    Parameters
    ----------
    measurements
        Measurements with the same input domain, input metric and output measure.
    """
    ms = tuple(measurements)
    first = check_same_space(ms, "make_composition")
    measure = first.output_measure

    def function(data: object) -> list[object]:
        return [m.function(data) for m in ms]

    def privacy_map(d_in: DistanceLike) -> Any:
        return measure.compose([m.map(d_in) for m in ms])

    def event_map(d_in: DistanceLike) -> Event:
        from dpcert.core.events import ComposedEvent

        return ComposedEvent([m.event(d_in) for m in ms])

    batches = [m.batch_map for m in ms]

    def batch(data: object, n: int) -> list[list[object]]:
        # each part's n draws are independent of the other parts', as in n separate calls
        draws = [b(data, n) for b in batches if b is not None]
        return [[d[i] for d in draws] for i in range(n)]

    return Measurement(
        first.input_domain, first.input_metric, measure,
        function=function,
        privacy_map=privacy_map,
        name=f"composition[{len(ms)}]",
        params={"parts": [m.describe() for m in ms]},
        event_map=event_map,
        batch_map=batch if all(b is not None for b in batches) else None,
        children=ms, wiring="shared", proof="composition.md",
    )
