"""dpcert: differential privacy you can trust and check.

>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> m = space >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum() >> dp.m.then_laplace(25.0)
>>> print(dp.PureDP().describe(m.map(1)))
ε = 0.48000076293945315

The sub-packages are reachable as short aliases: ``dp.t`` (transformations), ``dp.m``
(mechanisms), ``dp.c`` (combinators); ``dp.errors`` holds the exceptions.
"""

from __future__ import annotations

import importlib
from typing import Any

from dpcert import errors
from dpcert._version import __version__
from dpcert.core import (
    ZCDP,
    AbsoluteDistance,
    ApproxDP,
    AtomDomain,
    ChangeOneDistance,
    DiscreteDistance,
    Domain,
    HammingDistance,
    InsertDeleteDistance,
    L1Distance,
    L2Distance,
    Measure,
    Measurement,
    Metric,
    PureDP,
    RenyiCurve,
    RenyiDP,
    SymmetricDistance,
    TableDomain,
    Transformation,
    VectorDomain,
    binary_search,
    binary_search_param,
)

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
    "PureDP",
    "RenyiCurve",
    "RenyiDP",
    "SymmetricDistance",
    "TableDomain",
    "Transformation",
    "VectorDomain",
    "__version__",
    "binary_search",
    "binary_search_param",
    "errors",
]

# Short aliases and heavier sub-packages load on first use, so `import dpcert` stays cheap and
# optional extras (polars, z3) are only imported when their feature is used.
_LAZY = {
    "t": "dpcert.transformations",
    "m": "dpcert.mechanisms",
    "c": "dpcert.combinators",
    "transformations": "dpcert.transformations",
    "mechanisms": "dpcert.mechanisms",
    "combinators": "dpcert.combinators",
    "samplers": "dpcert.samplers",
    "accounting": "dpcert.accounting",
    "audit": "dpcert.audit",
    "verify": "dpcert.verify",
    "frame": "dpcert.frame",
}
# The engine's names, reachable as dp.Session, dp.count(), dp.sum(...) (Polars needed).
_FRAME_NAMES = ("Session", "count", "count_distinct", "keys_product", "mean", "median",
                "quantile", "sum", "variance")


def __getattr__(name: str) -> Any:
    if name in _FRAME_NAMES:
        frame = importlib.import_module("dpcert.frame")
        return getattr(frame, name)
    if name in _LAZY:
        mod = importlib.import_module(_LAZY[name])
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'dpcert' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, *_LAZY, *_FRAME_NAMES])
