"""Chaining with ``>>``: transformation >> transformation, transformation >> measurement,
measurement >> post-processing, and ``then_*`` partial constructors.

Chaining checks that the output space of the left side is the input space of the right side and
raises :class:`~dpcert.errors.DomainMismatch` or :class:`~dpcert.errors.MetricMismatch` showing
both sides otherwise.

Privacy of a chain (see ``docs/proofs/chaining.md``): if ``T`` is stable with map ``s`` and ``M``
is private with map ``p``, then ``M ∘ T`` is private with map ``p ∘ s``; post-processing by any
function keeps the map of ``M`` unchanged.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> space >> dp.t.then_sum()  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.InvalidParameter: make_sum needs bounded elements: ... clamp first
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpcert.core.domains import Domain
from dpcert.core.measurement import Measurement
from dpcert.core.metrics import Metric
from dpcert.core.transformation import Transformation
from dpcert.errors import DomainMismatch, InvalidParameter, MetricMismatch

__all__ = ["PartialConstructor", "chain", "chain_postprocess", "partial"]

Component = Transformation | Measurement


@dataclass(frozen=True)
class PartialConstructor:
    """A constructor waiting for its input space: ``(domain, metric) >> then_x(...)``."""

    constructor: Callable[[Domain, Metric], Component]
    name: str = "partial"

    def __call__(self, input_domain: Domain, input_metric: Metric) -> Component:
        return self.constructor(input_domain, input_metric)

    def __rrshift__(self, other: Any) -> Component:
        if isinstance(other, tuple) and len(other) == 2:
            domain, metric = other
            if not isinstance(domain, Domain) or not isinstance(metric, Metric):
                raise DomainMismatch(
                    f"a space is (Domain, Metric); got ({type(domain).__name__}, "
                    f"{type(metric).__name__})"
                )
            return self.constructor(domain, metric)
        if isinstance(other, Transformation):
            return chain(other, self)
        raise DomainMismatch(
            f"cannot chain {type(other).__name__} >> {self.name}: the left side must be a "
            "(domain, metric) pair or a Transformation"
        )


def partial(constructor: Callable[..., Component], name: str, *args: Any,
            **kwargs: Any) -> PartialConstructor:
    """Build the ``then_*`` form of a ``make_*(input_domain, input_metric, ...)`` constructor."""
    return PartialConstructor(lambda d, m: constructor(d, m, *args, **kwargs), name)


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


def chain(left: Transformation, right: Any) -> Component:
    """``left >> right`` for a transformation on the left."""
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
        )
    if isinstance(right, Measurement):
        _check_spaces(left, right)
        f0, g1 = left.function, right.function
        s0, p1 = left.stability_map, right.privacy_map
        ev = right.event_map
        return Measurement(
            left.input_domain, left.input_metric, right.output_measure,
            function=lambda x: g1(f0(x)),
            privacy_map=lambda d: p1(s0(d)),
            name=f"{left.name} >> {right.name}",
            params={"chain": [left.describe(), right.describe()]},
            event_map=None if ev is None else (lambda d: ev(s0(d))),
            accuracy_map=right.accuracy_map,
            batch_map=None if right.batch_map is None else _batch_after(f0, right.batch_map),
        )
    raise DomainMismatch(
        f"cannot chain {left.name} >> {type(right).__name__}: expected a Transformation, "
        "a Measurement or a then_* constructor"
    )


def _batch_after(f0: Callable[[Any], Any], batch: Callable[[Any, int], Any]
                 ) -> Callable[[Any, int], Any]:
    return lambda x, n: batch(f0(x), n)


def chain_postprocess(meas: Measurement, post: Any) -> Measurement:
    """``meas >> post``: apply a data-independent function to the release (map unchanged)."""
    if isinstance(post, (Measurement, PartialConstructor)):
        raise InvalidParameter(
            f"postprocess={post!r}: only a function or Transformation can follow a Measurement "
            "(use dpcert.c.make_composition to combine measurements)"
        )
    if not callable(post):
        raise InvalidParameter(f"postprocess={post!r} is not callable")
    g = meas.function
    name = getattr(post, "name", getattr(post, "__name__", type(post).__name__))
    return Measurement(
        meas.input_domain, meas.input_metric, meas.output_measure,
        function=lambda x: post(g(x)),
        privacy_map=meas.privacy_map,
        name=f"{meas.name} >> {name}",
        params={"chain": [meas.describe(), {"kind": "postprocess", "name": str(name)}]},
        event_map=meas.event_map,
        batch_map=None if meas.batch_map is None else (
            lambda x, n: [post(y) for y in meas.batch_map(x, n)]),  # type: ignore[misc]
    )
