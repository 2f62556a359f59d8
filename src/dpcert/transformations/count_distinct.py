"""Count the distinct values of a vector.

Sensitivity (``docs/proofs/count_distinct.md``): adding or removing one record changes the number
of distinct values by at most one, and so does changing one record (its old value may disappear
*or* its new value may appear, and if both happen the count is unchanged: each change moves it
by −1, 0 or +1).  Hence ``d_out = d_in`` under every dataset metric.

Examples
--------
>>> import dpcert as dp
>>> t = dp.t.make_count_distinct(dp.VectorDomain(dp.AtomDomain(str)), dp.SymmetricDistance())
>>> t(["a", "b", "b"]), t.map(2)
(2, Fraction(2, 1))
"""

from __future__ import annotations

import numpy as np

from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.metrics import AbsoluteDistance, Metric
from dpcert.core.transformation import Transformation
from dpcert.transformations._spaces import vector_space

__all__ = ["make_count_distinct", "then_count_distinct"]


def make_count_distinct(input_domain: Domain, input_metric: Metric) -> Transformation:
    """The number of distinct values, an ``int`` under AbsoluteDistance (NaN counts once)."""
    vector_space("make_count_distinct", input_domain, input_metric,
                 types=(bool, int, float, str))
    assert isinstance(input_domain, VectorDomain)
    to_array = input_domain.to_array

    def function(x: object) -> int:
        arr = to_array(x)
        if arr.size == 0:
            return 0
        if arr.dtype.kind == "f":
            nan = np.isnan(arr)
            return int(np.unique(arr[~nan]).size + (1 if nan.any() else 0))
        return int(np.unique(arr).size)

    return Transformation(
        input_domain, input_metric, AtomDomain(int), AbsoluteDistance(),
        function=function, stability_map=lambda d_in: int(d_in),
        name="count_distinct", params={}, proof="count_distinct.md",
    )


def then_count_distinct() -> PartialConstructor:
    """Partial form of `make_count_distinct`."""
    return partial(make_count_distinct, "count_distinct")
