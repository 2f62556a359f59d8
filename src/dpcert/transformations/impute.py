"""Replace NaN in a float vector by a constant.

Stability (``docs/proofs/row_maps.md``): a record-by-record map, ``d_out = d_in`` under every
dataset metric.  The output domain excludes NaN (and keeps bounds if the constant is inside them).

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float, nan=True)), dp.SymmetricDistance())
>>> t = space >> dp.t.then_impute_constant(0.0)
>>> t([1.0, float("nan")]).tolist(), t.output_domain
([1.0, 0.0], VectorDomain(AtomDomain(float)))
"""

from __future__ import annotations

import math

import numpy as np

from dpcert._numbers import Number, is_real_number
from dpcert._types import Array
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.metrics import Metric
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter
from dpcert.transformations._spaces import vector_space

__all__ = ["make_impute_constant", "then_impute_constant"]


def make_impute_constant(input_domain: Domain, input_metric: Metric,
                         constant: Number) -> Transformation:
    """Replace each NaN by ``constant`` (a finite float, inside the bounds if there are any)."""
    element = vector_space("make_impute_constant", input_domain, input_metric, types=(float,))
    assert isinstance(input_domain, VectorDomain)
    if not is_real_number(constant) or not math.isfinite(float(constant)):
        raise InvalidParameter(f"constant={constant!r} must be a finite number")
    c = float(constant)
    if element.bounds is not None and not element.bounds[0] <= c <= element.bounds[1]:
        raise InvalidParameter(f"constant={constant!r} is outside bounds {element.bounds}")
    out = VectorDomain(AtomDomain(float, bounds=element.bounds), size=input_domain.size)
    to_array = input_domain.to_array

    def function(x: object) -> Array:
        arr = np.array(to_array(x), dtype=np.float64)
        arr[np.isnan(arr)] = c
        return arr

    return Transformation(
        input_domain, input_metric, out, input_metric, function=function,
        stability_map=lambda d_in: d_in, name="impute_constant", params={"constant": c},
        proof="row_maps.md",
    )


def then_impute_constant(constant: object) -> PartialConstructor:
    """Partial form of `make_impute_constant`."""
    return partial(make_impute_constant, "impute_constant", constant)
