"""Checks on the dataset spaces central mechanisms accept (mechanisms do not import
[`dpcert.transformations`][dpcert.transformations], which sits below them in the layering)."""

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

__all__ = ["BOUNDED", "DATASET_METRICS", "check_dataset_space"]

BOUNDED: tuple[type[Metric], ...] = (ChangeOneDistance, HammingDistance)
DATASET_METRICS: tuple[type[Metric], ...] = (SymmetricDistance, InsertDeleteDistance, *BOUNDED)


def check_dataset_space(who: str, input_domain: Domain, input_metric: Metric,
                        types: tuple[type, ...]) -> AtomDomain:
    """Require a VectorDomain of ``types`` under a dataset metric; return its element domain."""
    if not isinstance(input_domain, VectorDomain):
        raise DomainMismatch(f"{who} needs a VectorDomain, got input_domain={input_domain!r}")
    if input_domain.element.type not in types:
        names = ", ".join(t.__name__ for t in types)
        raise DomainMismatch(f"{who} needs elements of type {names}, got {input_domain!r}")
    if not isinstance(input_metric, DATASET_METRICS):
        raise MetricMismatch(
            f"{who} needs a dataset metric (Symmetric, InsertDelete, ChangeOne, Hamming), got "
            f"{type(input_metric).__name__}"
        )
    return input_domain.element
