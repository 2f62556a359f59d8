"""Clamp every element of a vector into ``[lower, upper]``.

Stability (``docs/proofs/clamp.md``): clamping is applied record by record, so it maps
neighbouring datasets to neighbouring datasets under every dataset metric: ``d_out = d_in``.

Examples
--------
>>> import dpcert as dp
>>> t = dp.t.make_clamp(dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance(), 0.0, 12.0)
>>> t([-3.0, 5.5, 20.0]).tolist()
[0.0, 5.5, 12.0]
>>> t.output_domain
VectorDomain(AtomDomain(float, bounds=(0.0, 12.0)))
"""

from __future__ import annotations

import numpy as np

from dpcert._numbers import Number
from dpcert._types import Array
from dpcert._validate import check_bounds
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.metrics import Metric
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter
from dpcert.transformations._spaces import vector_space

__all__ = ["make_clamp", "then_clamp"]


def make_clamp(input_domain: Domain, input_metric: Metric, lower: Number, upper: Number
               ) -> Transformation:
    """Clamp each element of a numeric vector to the closed interval ``[lower, upper]``.

    Parameters
    ----------
    input_domain : VectorDomain
        Vectors of ``int`` or ``float`` (NaN not allowed: it has no place in an interval).
    input_metric : Metric
        Any dataset metric; the output metric is the same.
    lower
        Finite lower bound, ``<= upper``, of the element type (an int for int vectors).
    upper
        Finite upper bound, ``>= lower``, of the element type (an int for int vectors).
    """
    element = vector_space("make_clamp", input_domain, input_metric)
    assert isinstance(input_domain, VectorDomain)
    if element.nan:
        raise InvalidParameter(
            f"input_domain={input_domain!r} allows NaN; impute NaNs before clamping"
        )
    lower, upper = check_bounds(lower, upper)
    if element.type is int:
        for v, n in ((lower, "lower"), (upper, "upper")):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                raise InvalidParameter(f"{n}={v!r} must be an int to clamp an int vector")
        lo_c: int | float = int(lower)
        hi_c: int | float = int(upper)
    else:
        lo_c, hi_c = float(lower), float(upper)
    out_element = AtomDomain(element.type, bounds=(lo_c, hi_c))
    out_domain = VectorDomain(out_element, size=input_domain.size)
    to_array = input_domain.to_array

    def function(x: object) -> Array:
        arr = to_array(x)
        if arr.dtype == object:  # exact Python ints beyond int64
            return np.array([min(max(v, lo_c), hi_c) for v in arr.tolist()], dtype=np.int64)
        out: Array = np.clip(arr, lo_c, hi_c)
        return out

    return Transformation(
        input_domain, input_metric, out_domain, input_metric,
        function=function,
        stability_map=lambda d_in: d_in,
        name="clamp",
        params={"lower": lo_c, "upper": hi_c}, proof="clamp.md",
    )


def then_clamp(lower: Number, upper: Number) -> PartialConstructor:
    """Partial form of `make_clamp`: ``space >> then_clamp(0.0, 12.0)``."""
    return partial(make_clamp, "clamp", lower, upper)
