"""Stable transformations (alias ``dp.t``): ``make_*`` constructors and ``then_*`` partials."""

from dpcert.transformations.cast import make_cast, then_cast
from dpcert.transformations.clamp import make_clamp, then_clamp
from dpcert.transformations.count import make_count, then_count
from dpcert.transformations.count_distinct import make_count_distinct, then_count_distinct
from dpcert.transformations.histogram import make_count_by_categories, then_count_by_categories
from dpcert.transformations.impute import make_impute_constant, then_impute_constant
from dpcert.transformations.mean import make_mean, then_mean
from dpcert.transformations.partition import make_partition, then_partition
from dpcert.transformations.resize import make_resize, then_resize
from dpcert.transformations.select import make_select_column, then_select_column
from dpcert.transformations.sum import make_sum, then_sum
from dpcert.transformations.variance import make_variance, then_variance

__all__ = [
    "make_cast",
    "make_clamp",
    "make_count",
    "make_count_by_categories",
    "make_count_distinct",
    "make_impute_constant",
    "make_mean",
    "make_partition",
    "make_resize",
    "make_select_column",
    "make_sum",
    "make_variance",
    "then_cast",
    "then_clamp",
    "then_count",
    "then_count_by_categories",
    "then_count_distinct",
    "then_impute_constant",
    "then_mean",
    "then_partition",
    "then_resize",
    "then_select_column",
    "then_sum",
    "then_variance",
]
