"""Variance of a bounded vector of known size.

Sensitivity (``docs/proofs/variance.md``): write ``S = Σ(xᵢ − x̄)²``.  Splitting off one record
``a``, ``S = S_rest + (n−1)/n·(a − m)²`` with ``m`` the mean of the others; replacing ``a`` by
``b`` moves ``S`` by ``(n−1)/n·|(a − m)² − (b − m)²| ≤ (n−1)/n·(U − L)²``.  The variance
``S/(n − ddof)`` therefore moves by at most ``(U − L)²(n − 1)/(n(n − ddof))`` per changed record
(the bound OpenDP states for its variance).  Computed exactly, rounded once.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float), size=4), dp.ChangeOneDistance())
>>> t = space >> dp.t.then_clamp(0.0, 2.0) >> dp.t.then_variance()
>>> t([0.0, 0.0, 2.0, 2.0]), t.map(1)
(1.3333333333333333, Fraction(1, 1))
"""

from __future__ import annotations

from fractions import Fraction

from dpcert._validate import check_int
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import AtomDomain, Domain
from dpcert.core.metrics import AbsoluteDistance, Metric
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter
from dpcert.transformations._moments import exact_sum_and_squares
from dpcert.transformations.mean import changes_for, sized_bounded

__all__ = ["make_variance", "then_variance"]


def make_variance(input_domain: Domain, input_metric: Metric, *, ddof: int = 1) -> Transformation:
    """``Σ(xᵢ − x̄)²/(n − ddof)`` of a bounded vector of known size ``n > ddof``."""
    dom, lo, hi, n = sized_bounded("make_variance", input_domain, input_metric)
    dd = check_int(ddof, "ddof", minimum=0)
    if n <= dd:
        raise InvalidParameter(f"size={n} must exceed ddof={ddof!r}")
    sens = (hi - lo) ** 2 * (n - 1) / (n * (n - dd))
    to_array = dom.to_array

    def function(x: object) -> float:
        s, sq = exact_sum_and_squares(to_array(x))
        return float((sq - s * s / n) / (n - dd))

    return Transformation(
        input_domain, input_metric, AtomDomain(float), AbsoluteDistance(),
        function=function,
        stability_map=lambda d_in: changes_for(input_metric, d_in) * sens,
        name="variance", params={"size": n, "ddof": dd, "sensitivity": Fraction(sens)},
        proof="variance.md",
    )


def then_variance(*, ddof: int = 1) -> PartialConstructor:
    """Partial form of [`make_variance`][dpcert.transformations.variance.make_variance]."""
    return partial(make_variance, "variance", ddof=ddof)
