"""Count the records of a vector.

Sensitivity (``docs/proofs/count.md``): one added or removed record changes the count by one,
so ``d_out = d_in`` under ``SymmetricDistance`` / ``InsertDeleteDistance``; under change-one
metrics the size is public and the count cannot change: ``d_out = 0``.

Examples
--------
>>> import dpcert as dp
>>> t = dp.t.make_count(dp.VectorDomain(dp.AtomDomain(str)), dp.SymmetricDistance())
>>> t(["a", "b", "b"]), t.map(3)
(3, Fraction(3, 1))
"""

from __future__ import annotations

from fractions import Fraction

from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import AtomDomain, Domain
from dpcert.core.metrics import AbsoluteDistance, Metric
from dpcert.core.transformation import Transformation
from dpcert.transformations._spaces import BOUNDED_METRICS, vector_space

__all__ = ["make_count", "then_count"]


def make_count(input_domain: Domain, input_metric: Metric) -> Transformation:
    """The number of records, an ``int`` under [`AbsoluteDistance`][dpcert.AbsoluteDistance]."""
    vector_space("make_count", input_domain, input_metric, types=(bool, int, float, str))
    bounded = isinstance(input_metric, BOUNDED_METRICS)

    def stability(d_in: int | Fraction) -> int:
        return 0 if bounded else int(d_in)

    return Transformation(
        input_domain, input_metric, AtomDomain(int), AbsoluteDistance(),
        function=len,
        stability_map=stability,
        name="count",
        params={}, proof="count.md",
    )


def then_count() -> PartialConstructor:
    """Partial form of [`make_count`][dpcert.transformations.count.make_count]."""
    return partial(make_count, "count")
