"""Stable transformations: deterministic maps between (domain, metric) pairs.

A :class:`Transformation` is *c-stable* in the sense of McSherry (2009): if two inputs are within
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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dpcert.core.domains import Domain
from dpcert.core.metrics import Metric

if TYPE_CHECKING:
    from dpcert.core.measurement import Measurement

__all__ = ["Transformation"]


def _frozen_params(params: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(params or {}))


@dataclass(frozen=True, eq=False)
class Transformation:
    """A stable transformation.

    Parameters
    ----------
    input_domain, input_metric
        The space of inputs and how distance between inputs is measured.
    output_domain, output_metric
        The space of outputs and how distance between outputs is measured.
    function
        The map itself; called only on members of ``input_domain``.
    stability_map
        ``d_in ↦ d_out``: a bound on output distance for inputs ``d_in`` apart (monotone).
    name, params
        A label and the constructor's parameters, used in certificates and reports.
    """

    input_domain: Domain
    input_metric: Metric
    output_domain: Domain
    output_metric: Metric
    function: Callable[[Any], Any]
    stability_map: Callable[[Any], Any]
    name: str = "transformation"
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", _frozen_params(self.params))

    def __call__(self, data: Any) -> Any:
        """Apply the transformation, after checking ``data`` is in the input domain."""
        self.input_domain.check_member(data)
        return self.function(data)

    def map(self, d_in: Any) -> Any:
        """The output distance bound for inputs at most ``d_in`` apart."""
        d = self.input_metric.validate_d_in(d_in)
        return self.output_metric.validate_d_in(self.stability_map(d), "d_out")

    def check(self, d_in: Any, d_out: Any) -> bool:
        """Whether inputs ``d_in`` apart are guaranteed to give outputs ``d_out`` apart."""
        return self.output_metric.compare(
            self.map(d_in), self.output_metric.validate_d_in(d_out, "d_out"))

    def __rshift__(self, other: Any) -> Transformation | Measurement:
        from dpcert.core.chaining import chain

        return chain(self, other)

    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description (name, parameters, spaces)."""
        return {
            "kind": "transformation",
            "name": self.name,
            "params": {k: _jsonable(v) for k, v in self.params.items()},
            "input": f"{self.input_domain!r} / {type(self.input_metric).__name__}",
            "output": f"{self.output_domain!r} / {type(self.output_metric).__name__}",
        }

    def __repr__(self) -> str:
        return (f"Transformation({self.name}: {self.input_domain!r}/"
                f"{type(self.input_metric).__name__} -> {self.output_domain!r}/"
                f"{type(self.output_metric).__name__})")


def _jsonable(v: Any) -> Any:
    from fractions import Fraction

    if isinstance(v, Fraction):
        return str(v)
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return repr(v)
