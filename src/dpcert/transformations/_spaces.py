"""Shared checks on the input spaces of vector transformations."""

from __future__ import annotations

from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.metrics import (
    ChangeOneDistance,
    HammingDistance,
    InsertDeleteDistance,
    Metric,
    SymmetricDistance,
)
from dpcert.errors import DomainMismatch, MetricMismatch

__all__ = ["BOUNDED_METRICS", "DATASET_METRICS", "UNBOUNDED_METRICS", "vector_space"]

#: Neighbours add or remove records (unbounded DP).
UNBOUNDED_METRICS: tuple[type[Metric], ...] = (SymmetricDistance, InsertDeleteDistance)
#: Neighbours change records in place (bounded DP: the size is public).
BOUNDED_METRICS: tuple[type[Metric], ...] = (ChangeOneDistance, HammingDistance)
DATASET_METRICS = UNBOUNDED_METRICS + BOUNDED_METRICS


def vector_space(
    who: str, input_domain: Domain, input_metric: Metric,
    *, types: tuple[type, ...] = (int, float), metrics: tuple[type[Metric], ...] = DATASET_METRICS,
) -> AtomDomain:
    """Check ``(input_domain, input_metric)`` is a vector space ``who`` accepts.

    Returns the element domain.
    """
    if not isinstance(input_domain, VectorDomain):
        raise DomainMismatch(f"{who} needs a VectorDomain, got input_domain={input_domain!r}")
    if input_domain.element.type not in types:
        names = ", ".join(t.__name__ for t in types)
        raise DomainMismatch(
            f"{who} needs elements of type {names}, got input_domain={input_domain!r}"
        )
    if not isinstance(input_metric, metrics):
        names = ", ".join(m.__name__ for m in metrics)
        raise MetricMismatch(
            f"{who} needs input_metric in ({names}), got {type(input_metric).__name__}"
        )
    return input_domain.element
