"""Combinators (alias ``dp.c``): composition, adaptive filters, parallel composition, group
privacy and measure conversions.

Post-processing needs no combinator: ``measurement >> f``.
"""

from dpcert.combinators.composition import make_composition
from dpcert.combinators.conversions import (
    advanced_composition,
    make_advanced_composition,
    make_optimal_composition,
    make_pureDP_to_approxDP,
    make_pureDP_to_zCDP,
    make_renyiDP_to_approxDP,
    make_zCDP_to_approxDP,
    optimal_composition_delta,
    optimal_composition_epsilon,
)
from dpcert.combinators.group import group_privacy_map, make_group_privacy
from dpcert.combinators.parallel import make_parallel_composition
from dpcert.combinators.queryable import Queryable, make_filter, make_odometer

__all__ = [
    "Queryable",
    "advanced_composition",
    "group_privacy_map",
    "make_advanced_composition",
    "make_composition",
    "make_filter",
    "make_group_privacy",
    "make_odometer",
    "make_optimal_composition",
    "make_parallel_composition",
    "make_pureDP_to_approxDP",
    "make_pureDP_to_zCDP",
    "make_renyiDP_to_approxDP",
    "make_zCDP_to_approxDP",
    "optimal_composition_delta",
    "optimal_composition_epsilon",
]
