"""Select one column of a table as a vector.

Stability (``docs/proofs/row_maps.md``, "select"): a table's records are its rows; projecting
every row to one column maps the rows that differ between neighbours to the values that differ,
so every dataset metric is preserved: ``d_out = d_in``.

Examples
--------
>>> import dpcert as dp
>>> table = dp.TableDomain({"age": dp.AtomDomain(int), "income": dp.AtomDomain(float)})
>>> t = dp.t.make_select_column(table, dp.SymmetricDistance(), "income")
>>> t({"age": [30, 41], "income": [1.0, 2.5]}).tolist(), t.map(2)
([1.0, 2.5], 2)
>>> m = ((table, dp.SymmetricDistance()) >> dp.t.then_select_column("age")
...      >> dp.t.then_clamp(0, 120) >> dp.t.then_sum() >> dp.m.then_laplace(240))
>>> m.map(1)
Fraction(1, 2)
"""

from __future__ import annotations

from dpcert._types import Array
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import Domain, TableDomain, VectorDomain
from dpcert.core.metrics import Metric
from dpcert.core.transformation import Transformation
from dpcert.errors import DomainMismatch, MetricMismatch
from dpcert.transformations._spaces import DATASET_METRICS

__all__ = ["make_select_column", "then_select_column"]


def make_select_column(input_domain: Domain, input_metric: Metric, column: str
                       ) -> Transformation:
    """The column ``column`` of a table, as a vector under the same dataset metric."""
    if not isinstance(input_domain, TableDomain):
        raise DomainMismatch(
            f"make_select_column needs a TableDomain, got input_domain={input_domain!r}"
        )
    if not isinstance(input_metric, DATASET_METRICS):
        raise MetricMismatch(
            f"make_select_column needs a dataset metric, got {type(input_metric).__name__}"
        )
    element = input_domain.column(column)  # raises InvalidParameter for an unknown column

    def function(x: object) -> Array:
        return input_domain.get(x, column)

    return Transformation(
        input_domain, input_metric, VectorDomain(element), input_metric,
        function=function,
        stability_map=lambda d_in: d_in,
        name="select_column",
        params={"column": column}, proof="row_maps.md",
    )


def then_select_column(column: str) -> PartialConstructor:
    """Partial form of [`make_select_column`][dpcert.transformations.select.make_select_column]."""
    return partial(make_select_column, "select_column", column)
