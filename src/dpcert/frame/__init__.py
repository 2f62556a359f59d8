"""The DP data engine: Session API, backend-neutral plans, the Polars backend."""

from dpcert.frame.aggregates import (
    count,
    count_distinct,
    mean,
    median,
    quantile,
    sum,
    variance,
)
from dpcert.frame.keys import keys_product
from dpcert.frame.session import Query, Release, Session

__all__ = ["Query", "Release", "Session", "count", "count_distinct", "keys_product", "mean",
           "median", "quantile", "sum", "variance"]
