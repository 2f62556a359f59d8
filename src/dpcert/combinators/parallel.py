"""Parallel composition over a data-independent partition (McSherry 2009).

``make_parallel_composition(PartitionDomain, PartitionDistance, [M_0, …, M_{n−1}])`` runs
M_i on part i.  For partitions ``(l0, l1, l∞)`` apart, at most l0 parts differ, each by at most
l∞ records, so the loss is the composition of l0 copies of max_i M_i.map(l∞) (for a single
changed record: just the max).  Proof: ``docs/proofs/composition.md``.

Examples
--------
>>> import dpcert as dp
>>> from dpcert.transformations.partition import make_partition
>>> space = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
>>> part = make_partition(*space, by=lambda x: x % 2, keys=[0, 1])
>>> inner = (part.output_domain.inner, dp.SymmetricDistance())
>>> counts = [inner >> dp.t.then_count() >> dp.m.then_laplace(s) for s in (2.0, 4.0)]
>>> m = part >> dp.c.make_parallel_composition(part.output_domain, part.output_metric, counts)
>>> m.map(1)
Fraction(1, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpcert._types import DistanceLike
from dpcert.core.domains import Domain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import RenyiCurve, RenyiDP
from dpcert.core.metrics import Metric
from dpcert.errors import DomainMismatch, InvalidParameter, MetricMismatch

__all__ = ["make_parallel_composition"]


def _max(measure: Any, ds: list[Any]) -> Any:
    if isinstance(measure, RenyiDP):
        curves = [measure.validate_distance(d) for d in ds]
        return RenyiCurve(lambda a: max(c(a) for c in curves), "max")
    if isinstance(ds[0], tuple):
        return max(d[0] for d in ds), max(d[1] for d in ds)
    return max(ds)


def make_parallel_composition(input_domain: Domain, input_metric: Metric,
                              measurements: Sequence[Measurement]) -> Measurement:
    """Run ``measurements[i]`` on part ``i`` of a partition; returns the list of outputs."""
    from dpcert.combinators.composition import check_same_space
    from dpcert.transformations.partition import PartitionDistance, PartitionDomain

    if not isinstance(input_domain, PartitionDomain):
        raise DomainMismatch(
            f"make_parallel_composition needs a PartitionDomain, got {input_domain!r}"
        )
    if not isinstance(input_metric, PartitionDistance):
        raise MetricMismatch(
            f"make_parallel_composition needs PartitionDistance, got "
            f"{type(input_metric).__name__}"
        )
    ms = tuple(measurements)
    first = check_same_space(ms, "make_parallel_composition")
    if len(ms) != input_domain.parts:
        raise InvalidParameter(
            f"measurements has {len(ms)} entries but the partition has {input_domain.parts} parts"
        )
    if first.input_domain != input_domain.inner:
        raise DomainMismatch(
            f"the measurements take {first.input_domain!r}, the parts are {input_domain.inner!r}"
        )
    if not isinstance(first.input_metric, type(input_metric).inner_metric()):
        raise MetricMismatch(
            f"the measurements use {type(first.input_metric).__name__}; parts are compared "
            "with SymmetricDistance"
        )
    measure = first.output_measure

    def function(parts: Sequence[object]) -> list[object]:
        return [m.function(p) for m, p in zip(ms, parts, strict=True)]

    def privacy_map(d_in: DistanceLike) -> Any:
        l0, _l1, li = input_metric.validate_d_in(d_in)
        if l0 == 0 or li == 0:
            return measure.zero()
        worst = _max(measure, [m.map(li) for m in ms])
        return measure.compose([worst] * l0)

    return Measurement(
        input_domain, input_metric, measure,
        function=function,
        privacy_map=privacy_map,
        name=f"parallel[{len(ms)}]",
        params={"parts": [m.describe() for m in ms]}, proof="composition.md",
    )
