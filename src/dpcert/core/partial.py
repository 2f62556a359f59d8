"""``then_*`` partial constructors: a constructor waiting for its input space.

``(domain, metric) >> then_x(...)`` builds the component; ``t >> then_x(...)`` is handled by
`dpcert.core.transformation.Transformation.__rshift__`.  This module is a leaf of the core
(it does not import the component classes), which keeps the chaining code free of import cycles.

Examples
--------
>>> import dpcert as dp
>>> p = dp.t.then_count()
>>> t = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance()) >> p
>>> t([1, 2, 3])
3
>>> 5 >> p  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.DomainMismatch: cannot chain int >> count: the left side must be a ...
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpcert.core.domains import Domain
from dpcert.core.metrics import Metric
from dpcert.errors import DomainMismatch

if TYPE_CHECKING:
    from dpcert.core.measurement import Measurement
    from dpcert.core.transformation import Transformation

__all__ = ["PartialConstructor", "partial"]


@dataclass(frozen=True)
class PartialConstructor:
    """A constructor waiting for its input space: ``(domain, metric) >> then_x(...)``."""

    constructor: Callable[[Domain, Metric], Transformation | Measurement]
    name: str = "partial"

    def __call__(self, input_domain: Domain,
                 input_metric: Metric) -> Transformation | Measurement:
        return self.constructor(input_domain, input_metric)

    def __rrshift__(self, other: object) -> Transformation | Measurement:
        if isinstance(other, tuple) and len(other) == 2:
            domain, metric = other
            if not isinstance(domain, Domain) or not isinstance(metric, Metric):
                raise DomainMismatch(
                    f"a space is (Domain, Metric); got ({type(domain).__name__}, "
                    f"{type(metric).__name__})"
                )
            return self.constructor(domain, metric)
        raise DomainMismatch(
            f"cannot chain {type(other).__name__} >> {self.name}: the left side must be a "
            "(domain, metric) pair or a Transformation"
        )


def partial(constructor: Callable[..., Transformation | Measurement], name: str, *args: object,
            **kwargs: object) -> PartialConstructor:
    """Build the ``then_*`` form of a ``make_*(input_domain, input_metric, ...)`` constructor."""
    return PartialConstructor(lambda d, m: constructor(d, m, *args, **kwargs), name)
