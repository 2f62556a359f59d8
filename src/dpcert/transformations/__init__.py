"""Stable transformations (alias ``dp.t``): ``make_*`` constructors and ``then_*`` partials."""

from dpcert.transformations.clamp import make_clamp, then_clamp
from dpcert.transformations.count import make_count, then_count
from dpcert.transformations.sum import make_sum, then_sum

__all__ = [
    "make_clamp",
    "make_count",
    "make_sum",
    "then_clamp",
    "then_count",
    "then_sum",
]
