"""Count the records in each of a known (public) list of categories.

Sensitivity (``docs/proofs/histogram.md``): adding or removing ``d`` records moves the
count vector by ``d`` in L1 and at most ``d`` in L2; changing ``d`` records moves it by at most
``2d`` in L1 and ``√2·d`` in L2 (the L2 bound is reported as the rational ``1.414213563·d``, just
above ``√2·d``).  Records outside ``categories`` are not counted.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(str)), dp.SymmetricDistance())
>>> t = space >> dp.t.then_count_by_categories(["a", "b"])
>>> t(["a", "b", "b", "z"]).tolist(), t.map(1)
([1, 2], Fraction(1, 1))
>>> m = t >> dp.m.then_laplace(1)
>>> m.map(1)
Fraction(1, 1)
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from fractions import Fraction

import numpy as np

from dpcert._types import Array
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.metrics import L1Distance, L2Distance, Metric
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter
from dpcert.mechanisms.histogram import check_categories, count_categories
from dpcert.transformations._spaces import BOUNDED_METRICS, vector_space

__all__ = ["SQRT2_UP", "make_count_by_categories", "then_count_by_categories"]

#: A rational just above √2.
SQRT2_UP = Fraction(1414213563, 10**9)


def make_count_by_categories(input_domain: Domain, input_metric: Metric,
                             categories: Sequence[Hashable], *,
                             output_metric: Metric | None = None) -> Transformation:
    """Counts of each category, an int64 vector of known size under L1 (default) or L2."""
    vector_space("make_count_by_categories", input_domain, input_metric,
                 types=(bool, int, float, str))
    assert isinstance(input_domain, VectorDomain)
    cats = check_categories(categories)
    out_metric = L1Distance() if output_metric is None else output_metric
    if not isinstance(out_metric, (L1Distance, L2Distance)):
        raise InvalidParameter(f"output_metric={output_metric!r} must be L1Distance or L2Distance")
    bounded = isinstance(input_metric, BOUNDED_METRICS)
    factor = Fraction(1) if not bounded else (
        Fraction(2) if isinstance(out_metric, L1Distance) else SQRT2_UP)
    to_array = input_domain.to_array

    def function(x: object) -> Array:
        return count_categories(np.asarray(to_array(x)), cats)

    return Transformation(
        input_domain, input_metric, VectorDomain(AtomDomain(int), size=len(cats)), out_metric,
        function=function, stability_map=lambda d_in: factor * Fraction(d_in),
        name="count_by_categories", params={"categories": cats}, proof="histogram.md",
    )


def then_count_by_categories(categories: Sequence[Hashable], *,
                             output_metric: Metric | None = None) -> PartialConstructor:
    """Partial form of `make_count_by_categories`."""
    return partial(make_count_by_categories, "count_by_categories", categories,
                   output_metric=output_metric)
