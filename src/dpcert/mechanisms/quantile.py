"""Private quantiles over a public, sorted set of candidates, by the exponential mechanism.

For a quantile ``α = a/b`` (a rational in ``[0, 1]``), candidate ``c`` scores
``u(x, c) = −|(b − a)·#{xᵢ < c} − a·#{xᵢ > c}|`` (the integer form of OpenDP's
quantile score; Smith 2011 for the rank-score idea), which is 0 when ``c`` splits the data in
proportion ``α : 1 − α``.  Adding or removing one record changes one count by one, so the score
moves by at most ``max(a, b − a)``; changing one record can move it by ``b``.  The exponential
mechanism with that sensitivity gives ``map(d_in) = ε·d_in``.  Several quantiles split ε equally
(sequential composition).  Proof: ``docs/proofs/quantile.md``.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> cands = [float(c) for c in range(0, 101, 10)]
>>> median = space >> dp.m.then_quantile(cands, 0.5, epsilon=1.0)
>>> median([float(v) for v in range(101)]) in cands, median.map(1)
(True, Fraction(1, 1))
>>> qs = space >> dp.m.then_quantiles(cands, [0.25, 0.75], epsilon=1.0)
>>> len(qs([float(v) for v in range(101)])), qs.map(1)
(2, Fraction(1, 1))
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from dpcert._numbers import Number, as_fraction
from dpcert._types import Array
from dpcert._validate import check_positive
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import Domain, VectorDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import PureDP
from dpcert.core.metrics import ChangeOneDistance, HammingDistance, Metric
from dpcert.errors import InvalidParameter
from dpcert.mechanisms._selection import exponential_indices
from dpcert.mechanisms._spaces import check_dataset_space

__all__ = ["make_quantile", "make_quantiles", "quantile_scores", "then_quantile",
           "then_quantiles"]


def _alpha(alpha: Number) -> Fraction:
    a = as_fraction(alpha, "alpha")
    if not 0 <= a <= 1:
        raise InvalidParameter(f"alpha={alpha!r} must be in [0, 1]")
    return a


def _candidates(candidates: Sequence[float]) -> Array:
    arr = np.asarray(list(candidates))
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidParameter(f"candidates={candidates!r} must be a non-empty sequence")
    if arr.dtype.kind not in "iuf" or (arr.dtype.kind == "f" and not np.isfinite(arr).all()):
        raise InvalidParameter(f"candidates={candidates!r} must be finite numbers")
    if np.any(np.diff(arr) <= 0):
        raise InvalidParameter(f"candidates={candidates!r} must be strictly increasing")
    return arr


def quantile_scores(data: Array, candidates: Array,
                    alpha: Fraction) -> Array:
    """``−|(b − a)·#{x < c} − a·#{x > c}|`` for every candidate (vectorised, exact ints)."""
    a, b = alpha.numerator, alpha.denominator
    xs = np.sort(data)
    below = np.searchsorted(xs, candidates, side="left").astype(object)
    above = (xs.size - np.searchsorted(xs, candidates, side="right")).astype(object)
    scores: Array = -np.abs((b - a) * below - a * above)
    return scores


def _sensitivity(alpha: Fraction, input_metric: Metric) -> Fraction:
    a, b = alpha.numerator, alpha.denominator
    bounded = isinstance(input_metric, (ChangeOneDistance, HammingDistance))
    return Fraction(b if bounded else max(a, b - a))


def _check_space(input_domain: Domain, input_metric: Metric) -> None:
    element = check_dataset_space("make_quantile", input_domain, input_metric, (int, float))
    if element.nan:
        raise InvalidParameter(f"input_domain={input_domain!r} allows NaN; impute first")


def _many(data: Array, cands: Array, alpha: Fraction,
          eps: Fraction, sens: Fraction, n: int) -> Array:
    """``n`` independent exponential-mechanism draws of the quantile (same scores)."""
    scores = quantile_scores(data, cands, alpha).tolist()
    top = max(scores)
    factor = eps / (2 * sens)
    out: Array = cands[exponential_indices([(top - u) * factor for u in scores],
                                                          n)]
    return out


def _one(data: Array, cands: Array, alpha: Fraction,
         eps: Fraction, sens: Fraction) -> int | float:
    value: int | float = _many(data, cands, alpha, eps, sens, 1)[0].item()
    return value


def make_quantile(input_domain: Domain, input_metric: Metric, candidates: Sequence[float],
                  alpha: Number, epsilon: Number) -> Measurement:
    """The ``alpha``-quantile of a numeric vector, chosen among ``candidates``.

    Parameters
    ----------
    input_domain : VectorDomain of int or float (no NaN)
    input_metric : a dataset metric (add/remove or change-one)
    candidates : sequence of numbers, strictly increasing
    alpha : number in [0, 1] (a float means its decimal: 0.5 is 1/2)
    epsilon : number > 0

    Returns
    -------
    Measurement
        Data → one candidate; PureDP with ``map(d_in) = ε·d_in``.
    """
    _check_space(input_domain, input_metric)
    assert isinstance(input_domain, VectorDomain)
    cands = _candidates(candidates)
    al = _alpha(alpha)
    eps = check_positive(epsilon, "epsilon")
    sens = _sensitivity(al, input_metric)
    to_array = input_domain.to_array

    def function(x: object) -> int | float:
        return _one(np.asarray(to_array(x)), cands, al, eps, sens)

    def batch(x: object, n: int) -> Array:
        return _many(np.asarray(to_array(x)), cands, al, eps, sens, n)

    return Measurement(
        input_domain, input_metric, PureDP(), function=function,
        privacy_map=lambda d_in: eps * Fraction(d_in),
        batch_map=batch,
        name="quantile",
        params={"alpha": al, "epsilon": eps, "candidates": len(cands), "sensitivity": sens},
        proof="quantile.md",
    )


def make_quantiles(input_domain: Domain, input_metric: Metric, candidates: Sequence[float],
                   alphas: Sequence[Number], epsilon: Number) -> Measurement:
    """Several quantiles, each by `make_quantile` with ``ε/len(alphas)``.

    Returns a list in the order of ``alphas``; ``map(d_in) = ε·d_in``.
    """
    _check_space(input_domain, input_metric)
    assert isinstance(input_domain, VectorDomain)
    cands = _candidates(candidates)
    als = [_alpha(a) for a in alphas]
    if not als:
        raise InvalidParameter("alphas=[] must not be empty")
    eps = check_positive(epsilon, "epsilon")
    each = eps / len(als)
    senses = [_sensitivity(a, input_metric) for a in als]
    to_array = input_domain.to_array

    def function(x: object) -> list[int | float]:
        data = np.asarray(to_array(x))
        return [_one(data, cands, a, each, s) for a, s in zip(als, senses, strict=True)]

    return Measurement(
        input_domain, input_metric, PureDP(), function=function,
        privacy_map=lambda d_in: eps * Fraction(d_in),
        name="quantiles",
        params={"alphas": [str(a) for a in als], "epsilon": eps, "candidates": len(cands),
                "epsilon_each": each}, proof="quantile.md",
    )


def then_quantile(candidates: Sequence[float], alpha: Number,
                  epsilon: Number) -> PartialConstructor:
    """Partial form of [`make_quantile`][dpcert.mechanisms.quantile.make_quantile]."""
    return partial(make_quantile, "quantile", candidates, alpha, epsilon)


def then_quantiles(candidates: Sequence[float], alphas: Sequence[Number],
                   epsilon: Number) -> PartialConstructor:
    """Partial form of [`make_quantiles`][dpcert.mechanisms.quantile.make_quantiles]."""
    return partial(make_quantiles, "quantiles", candidates, alphas, epsilon)
