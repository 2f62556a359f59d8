"""The framework: domains, metrics, measures, transformations, measurements and chaining."""

from dpcert.core.chaining import PartialConstructor, chain, chain_postprocess, partial
from dpcert.core.domains import AtomDomain, Domain, TableDomain, VectorDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import (
    ZCDP,
    ApproxDP,
    Measure,
    PureDP,
    RenyiCurve,
    RenyiDP,
)
from dpcert.core.metrics import (
    AbsoluteDistance,
    ChangeOneDistance,
    DiscreteDistance,
    HammingDistance,
    InsertDeleteDistance,
    L1Distance,
    L2Distance,
    Metric,
    SymmetricDistance,
)
from dpcert.core.search import binary_search, binary_search_param
from dpcert.core.transformation import Transformation

__all__ = [
    "ZCDP",
    "AbsoluteDistance",
    "ApproxDP",
    "AtomDomain",
    "ChangeOneDistance",
    "DiscreteDistance",
    "Domain",
    "HammingDistance",
    "InsertDeleteDistance",
    "L1Distance",
    "L2Distance",
    "Measure",
    "Measurement",
    "Metric",
    "PartialConstructor",
    "PureDP",
    "RenyiCurve",
    "RenyiDP",
    "SymmetricDistance",
    "TableDomain",
    "Transformation",
    "VectorDomain",
    "binary_search",
    "binary_search_param",
    "chain",
    "chain_postprocess",
    "partial",
]
