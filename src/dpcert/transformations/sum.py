"""Bounded sum of a vector, computed exactly.

Sensitivity (``docs/proofs/sum.md``), elements in ``[L, U]``:

* add/remove neighbours (``SymmetricDistance``, ``InsertDeleteDistance``): ``d_in · max(|L|, |U|)``;
* change-one neighbours (``ChangeOneDistance``, ``HammingDistance``): ``d_in · (U − L)``.

Float sums are exact: the true real sum is computed without rounding (`dpcert._exact`) and
rounded once, correctly, to the nearest float.  dpcert's float mechanisms (the lattice samplers)
accept such correctly-rounded values at no extra cost beyond their lattice allowance
(``docs/proofs/lattice.md``), so the float-summation attacks on DP libraries do not apply.
Integer sums are exact Python integers (int64 with overflow-safe chunking).

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> t = space >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum()
>>> t([12.0, 10.0, 8.0, 7.0]), t.map(1)
(37.0, Fraction(12, 1))
>>> bounded = (dp.VectorDomain(dp.AtomDomain(int), size=4), dp.ChangeOneDistance())
>>> (bounded >> dp.t.then_clamp(0, 12) >> dp.t.then_sum()).map(1)
Fraction(12, 1)
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from dpcert._exact import exact_float_sum, exact_int_sum
from dpcert._numbers import float_exact
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.metrics import AbsoluteDistance, Metric
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter
from dpcert.transformations._spaces import BOUNDED_METRICS, vector_space

__all__ = ["make_sum", "sum_sensitivity", "then_sum"]


def sum_sensitivity(lower: float, upper: float, input_metric: Metric) -> Fraction:
    """Per-unit-distance sensitivity of a sum of elements in ``[lower, upper]``."""
    lo, hi = float_exact(lower), float_exact(upper)
    if isinstance(input_metric, BOUNDED_METRICS):
        return hi - lo
    return max(abs(lo), abs(hi))


def make_sum(input_domain: Domain, input_metric: Metric) -> Transformation:
    """The exact sum of a vector of bounded ``int`` or ``float`` elements.

    Parameters
    ----------
    input_domain : VectorDomain
        Elements must carry bounds (clamp first). Under change-one metrics the size is public.
    input_metric : Metric
        A dataset metric; the output metric is [`AbsoluteDistance`][dpcert.AbsoluteDistance].

    Returns
    -------
    Transformation
        ``int`` output for int vectors, ``float`` (the correctly rounded exact sum) for floats.
    """
    element = vector_space("make_sum", input_domain, input_metric)
    assert isinstance(input_domain, VectorDomain)
    if element.bounds is None:
        raise InvalidParameter(
            f"make_sum needs bounded elements: input_domain={input_domain!r} has no bounds; "
            "clamp first"
        )
    lo, hi = element.bounds
    sens = sum_sensitivity(lo, hi, input_metric)
    to_array = input_domain.to_array
    if element.type is int:
        bound = max(abs(int(lo)), abs(int(hi)))

        def function(x: object) -> int | float:
            return exact_int_sum(to_array(x), bound)

        def stability(d_in: int | Fraction) -> int | Fraction:
            return int(d_in) * int(sens)
        out = AtomDomain(int)
    else:

        def function(x: object) -> int | float:
            return float(exact_float_sum(np.asarray(to_array(x), dtype=np.float64)))

        def stability(d_in: int | Fraction) -> int | Fraction:
            return Fraction(d_in) * sens
        out = AtomDomain(float)
    return Transformation(
        input_domain, input_metric, out, AbsoluteDistance(),
        function=function,
        stability_map=stability,
        name="sum",
        params={"lower": lo, "upper": hi, "sensitivity": sens}, proof="sum.md",
    )


def then_sum() -> PartialConstructor:
    """Partial form of [`make_sum`][dpcert.transformations.sum.make_sum]."""
    return partial(make_sum, "sum")
