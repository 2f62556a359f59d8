"""Mean of a bounded vector of known size.

Sensitivity (``docs/proofs/mean.md``): with elements in ``[L, U]`` and a public size ``n`` (from
the domain: use ``make_resize`` first), changing one record moves the mean by at most
``(U − L)/n``.  Under change-one metrics ``d_out = d_in·(U − L)/n``; under add/remove metrics two
same-size datasets ``d_in`` apart differ in ``⌊d_in/2⌋`` changes.  The mean is computed exactly
and rounded once to the nearest float.

For an *unknown* size, release a noisy sum and a noisy count (two measurements, composed) and
divide them: post-processing, documented in ``docs/proofs/mean.md``; its error grows when the
count is small.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float), size=4), dp.ChangeOneDistance())
>>> t = space >> dp.t.then_clamp(0.0, 10.0) >> dp.t.then_mean()
>>> t([1.0, 2.0, 3.0, 14.0]), t.map(1)
(4.0, Fraction(5, 2))
"""

from __future__ import annotations

from fractions import Fraction

from dpcert._numbers import float_exact
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import AtomDomain, Domain, VectorDomain
from dpcert.core.metrics import AbsoluteDistance, Metric
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter
from dpcert.transformations._moments import exact_sum_and_squares
from dpcert.transformations._spaces import BOUNDED_METRICS, vector_space

__all__ = ["changes_for", "make_mean", "sized_bounded", "then_mean"]


def sized_bounded(who: str, input_domain: Domain,
                  input_metric: Metric) -> tuple[VectorDomain, Fraction, Fraction, int]:
    """Check a sized, bounded, NaN-free numeric vector space; return (domain, L, U, n)."""
    element = vector_space(who, input_domain, input_metric)
    assert isinstance(input_domain, VectorDomain)
    if element.bounds is None or element.nan:
        raise InvalidParameter(f"{who} needs bounded elements without NaN, got {input_domain!r}")
    if input_domain.size is None or input_domain.size < 1:
        raise InvalidParameter(
            f"{who} needs a known size >= 1 (use make_resize), got {input_domain!r}"
        )
    lo, hi = element.bounds
    return input_domain, float_exact(lo), float_exact(hi), input_domain.size


def changes_for(input_metric: Metric, d_in: int | Fraction) -> int:
    """Records changed between same-size datasets ``d_in`` apart."""
    return int(d_in) if isinstance(input_metric, BOUNDED_METRICS) else int(d_in) // 2


def make_mean(input_domain: Domain, input_metric: Metric) -> Transformation:
    """The exact mean (rounded once to float) of a bounded vector of known size."""
    dom, lo, hi, n = sized_bounded("make_mean", input_domain, input_metric)
    sens = (hi - lo) / n
    to_array = dom.to_array

    def function(x: object) -> float:
        s, _ = exact_sum_and_squares(to_array(x))
        return float(s / n)

    return Transformation(
        input_domain, input_metric, AtomDomain(float), AbsoluteDistance(),
        function=function,
        stability_map=lambda d_in: changes_for(input_metric, d_in) * sens,
        name="mean", params={"size": n, "sensitivity": sens}, proof="mean.md",
    )


def then_mean() -> PartialConstructor:
    """Partial form of [`make_mean`][dpcert.transformations.mean.make_mean]."""
    return partial(make_mean, "mean")
