"""Stable transformations: deterministic maps between (domain, metric) pairs.

A `Transformation` is *c-stable* in the sense of McSherry (2009): if two inputs are within
``d_in`` under ``input_metric`` then their outputs are within ``stability_map(d_in)`` under
``output_metric``.  ``stability_map`` returns the smallest such bound this library can prove.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> t = space >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum()
>>> t([12.0, 10.0, 8.0, 20.0])
42.0
>>> t.map(1)
Fraction(12, 1)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeAlias

from dpcert._types import JSON, DistanceLike
from dpcert.core._describe import Wiring, frozen_params, jsonable
from dpcert.core.domains import Domain
from dpcert.core.maps import BatchMap, Function, StabilityMap
from dpcert.core.measurement import Measurement
from dpcert.core.metrics import ExactDistance, Metric
from dpcert.core.partial import PartialConstructor
from dpcert.errors import DomainMismatch, MetricMismatch

__all__ = ["Transformation", "chain"]

#: A component of a chain.
Component: TypeAlias = "Transformation | Measurement"


@dataclass(frozen=True, eq=False)
class Transformation:
    """A stable transformation.

    Parameters
    ----------
    input_domain
        The space of inputs.
    input_metric
        How distance between inputs is measured.
    output_domain
        The space of outputs.
    output_metric
        How distance between outputs is measured.
    function
        The map itself; called only on members of ``input_domain``.
    stability_map
        ``d_in ↦ d_out``: a bound on output distance for inputs ``d_in`` apart (monotone).
    name
        A label, used in certificates and reports.
    params
        The constructor's parameters, used in certificates and reports.
    randomized
        Whether ``function`` draws randomness (e.g. contribution bounding with a fresh key per
        call).  A chain batches a deterministic transformation once for ``n`` draws of the
        measurement after it; a randomized one is re-run per draw (see `Measurement.sample`).
    children
        The components a combinator is built from, as for
        [`Measurement`][dpcert.core.measurement.Measurement] (read by `dpcert.core.trace`).
    wiring
        How the children receive ``d_in``, as for
        [`Measurement`][dpcert.core.measurement.Measurement].
    proof
        The proof note (a file in ``docs/proofs/``) of the constructor's stability map.
    """

    input_domain: Domain
    input_metric: Metric
    output_domain: Domain
    output_metric: Metric
    function: Function
    stability_map: StabilityMap
    name: str = "transformation"
    params: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    randomized: bool = False
    children: tuple[Transformation | Measurement, ...] = ()
    wiring: Wiring = "shared"
    proof: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", frozen_params(self.params))
        object.__setattr__(self, "children", tuple(self.children))

    def __call__(self, data: object) -> object:
        """Apply the transformation, after checking ``data`` is in the input domain."""
        self.input_domain.check_member(data)
        return self.function(data)

    def map(self, d_in: DistanceLike) -> ExactDistance:
        """The output distance bound for inputs at most ``d_in`` apart."""
        d = self.input_metric.validate_d_in(d_in)
        return self.output_metric.validate_d_in(self.stability_map(d), "d_out")

    def check(self, d_in: DistanceLike, d_out: DistanceLike) -> bool:
        """Whether inputs ``d_in`` apart are guaranteed to give outputs ``d_out`` apart."""
        return self.output_metric.compare(
            self.map(d_in), self.output_metric.validate_d_in(d_out, "d_out"))

    def __rshift__(self, other: object) -> Transformation | Measurement:
        return chain(self, other)

    def describe(self) -> dict[str, JSON]:
        """A JSON-friendly description (name, parameters, spaces)."""
        return {
            "kind": "transformation",
            "name": self.name,
            "params": {k: jsonable(v) for k, v in self.params.items()},
            "input": f"{self.input_domain!r} / {type(self.input_metric).__name__}",
            "output": f"{self.output_domain!r} / {type(self.output_metric).__name__}",
        }

    def __repr__(self) -> str:
        return (f"Transformation({self.name}: {self.input_domain!r}/"
                f"{type(self.input_metric).__name__} -> {self.output_domain!r}/"
                f"{type(self.output_metric).__name__})")


def _check_spaces(left: Transformation, right: Component) -> None:
    if left.output_domain != right.input_domain:
        raise DomainMismatch(
            f"cannot chain {left.name} >> {right.name}: output domain {left.output_domain!r} "
            f"!= input domain {right.input_domain!r}"
        )
    if left.output_metric != right.input_metric:
        raise MetricMismatch(
            f"cannot chain {left.name} >> {right.name}: output metric "
            f"{type(left.output_metric).__name__} != input metric "
            f"{type(right.input_metric).__name__}"
        )


def chain(left: Transformation, right: object) -> Transformation | Measurement:
    """``left >> right`` for a transformation on the left (see ``docs/proofs/chaining.md``).

    If ``T`` is stable with map ``s`` and ``M`` is private with map ``p``, then ``M ∘ T`` is
    private with map ``p ∘ s``; ``T2 ∘ T1`` is stable with map ``s2 ∘ s1``.
    """
    if isinstance(right, PartialConstructor):
        right = right(left.output_domain, left.output_metric)
    if isinstance(right, Transformation):
        _check_spaces(left, right)
        f0, f1 = left.function, right.function
        s0, s1 = left.stability_map, right.stability_map
        return Transformation(
            left.input_domain, left.input_metric, right.output_domain, right.output_metric,
            function=lambda x: f1(f0(x)),
            stability_map=lambda d: s1(s0(d)),
            name=f"{left.name} >> {right.name}",
            params={"chain": [left.describe(), right.describe()]},
            randomized=left.randomized or right.randomized,
            children=(left, right), wiring="chain", proof="chaining.md",
        )
    if isinstance(right, Measurement):
        _check_spaces(left, right)
        f0, g1 = left.function, right.function
        s0, p1 = left.stability_map, right.privacy_map
        ev = right.event_map
        batch = right.batch_map
        return Measurement(
            left.input_domain, left.input_metric, right.output_measure,
            function=lambda x: g1(f0(x)),
            privacy_map=lambda d: p1(s0(d)),
            name=f"{left.name} >> {right.name}",
            params={"chain": [left.describe(), right.describe()]},
            event_map=None if ev is None else (lambda d: ev(s0(d))),
            accuracy_map=right.accuracy_map,
            # a deterministic left side is computed once for n draws; a randomized one per draw
            batch_map=None if batch is None or left.randomized else _batch_after(f0, batch),
            children=(left, right), wiring="chain", proof="chaining.md",
        )
    raise DomainMismatch(
        f"cannot chain {left.name} >> {type(right).__name__}: expected a Transformation, "
        "a Measurement or a then_* constructor"
    )


def _batch_after(f0: Function, batch: BatchMap) -> BatchMap:
    return lambda x, n: batch(f0(x), n)
