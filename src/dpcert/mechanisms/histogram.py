"""Histograms over known (public) categories, with exact discrete Laplace or Gaussian noise.

Each record adds one to the count of its category (records outside ``categories`` are
ignored).  Adding or removing ``d`` records moves the count vector by ``d`` in L1 and at most
``d`` in L2; changing ``d`` records moves it by at most ``2d`` in L1 and ``√2·d`` in L2.  Integer
counts get integer noise, so the release is exact and the maps are those of the discrete Laplace
(``PureDP``: ``Δ₁/scale``) and discrete Gaussian (``ZCDP``: ``Δ₂²/(2σ²)``) mechanisms
(Canonne, Kamath & Steinke 2020).  For unknown categories use
`make_partition_selection`.  Proof: ``docs/proofs/histogram.md``.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(str)), dp.SymmetricDistance())
>>> h = space >> dp.m.then_histogram(["a", "b", "c"], scale=2)
>>> h(["a", "a", "b", "z"]).shape, h.map(1)
((3,), Fraction(1, 2))
>>> bounded = (dp.VectorDomain(dp.AtomDomain(str)), dp.ChangeOneDistance())
>>> dp.m.make_histogram(*bounded, ["a", "b"], scale=2, noise="gaussian").map(1)
Fraction(1, 4)
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from fractions import Fraction
from typing import Literal

import numpy as np

from dpcert._numbers import Number
from dpcert._types import Array, IntArray
from dpcert._validate import check_positive
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import Domain, VectorDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ZCDP, PureDP
from dpcert.core.metrics import Metric
from dpcert.errors import InvalidParameter
from dpcert.mechanisms._spaces import BOUNDED, check_dataset_space
from dpcert.samplers import discrete_gaussian, discrete_laplace

__all__ = ["check_categories", "count_categories", "make_histogram", "then_histogram"]


def count_categories(values: Array, categories: list[Hashable]) -> Array:
    """Exact int64 count of each category in ``values`` (others ignored), vectorised."""
    counts = np.zeros(len(categories), dtype=np.int64)
    if values.size == 0:
        return counts
    uniq, cnt = np.unique(values, return_counts=True)
    where = {c: i for i, c in enumerate(categories)}
    for u, n in zip(uniq.tolist(), cnt.tolist(), strict=True):
        i = where.get(u)
        if i is not None:
            counts[i] = n
    return counts


def check_categories(categories: Sequence[Hashable]) -> list[Hashable]:
    """The categories as a list of distinct plain values (non-empty, not a string)."""
    if isinstance(categories, (str, bytes)):
        raise InvalidParameter(f"categories={categories!r} must be a sequence of values")
    cats = [c.item() if isinstance(c, np.generic) else c for c in categories]
    if not cats:
        raise InvalidParameter("categories=[] must not be empty")
    if len(set(cats)) != len(cats):
        raise InvalidParameter(f"categories={categories!r} has duplicates")
    return cats


def make_histogram(input_domain: Domain, input_metric: Metric, categories: Sequence[Hashable],
                   scale: Number, *, noise: Literal["laplace", "gaussian"] = "laplace"
                   ) -> Measurement:
    """Noisy counts of each of ``categories`` (int64 array in the order given).

    Parameters
    ----------
    input_domain : VectorDomain of bool, int or str
    input_metric : a dataset metric
    categories : sequence of distinct values
    scale : number > 0
        Discrete Laplace scale, or σ of the discrete Gaussian.
    noise : {"laplace", "gaussian"}

    Returns
    -------
    Measurement
        PureDP (Laplace) or ZCDP (Gaussian); ``accuracy(alpha)`` is per count.
    """
    check_dataset_space("make_histogram", input_domain, input_metric, (bool, int, str))
    assert isinstance(input_domain, VectorDomain)
    cats = check_categories(categories)
    s = check_positive(scale, "scale")
    bounded = isinstance(input_metric, BOUNDED)
    to_array = input_domain.to_array
    if noise == "laplace":
        def privacy_map(d_in: int | Fraction) -> Fraction:
            return (2 if bounded else 1) * Fraction(d_in) / s

        def sample(n: int) -> IntArray:
            return discrete_laplace(s, n)

        measure: PureDP | ZCDP = PureDP()
    elif noise == "gaussian":
        def privacy_map(d_in: int | Fraction) -> Fraction:
            return (2 if bounded else 1) * Fraction(d_in) ** 2 / (2 * s * s)

        def sample(n: int) -> IntArray:
            return discrete_gaussian(s, n)

        measure = ZCDP()
    else:
        raise InvalidParameter(f"noise={noise!r} must be 'laplace' or 'gaussian'")

    def function(x: object) -> IntArray:
        counts = count_categories(np.asarray(to_array(x)), cats)
        return counts + np.asarray(sample(len(cats)), dtype=np.int64)

    def accuracy_map(alpha: Fraction) -> Fraction:
        from dpcert.mechanisms.accuracy import (
            discrete_gaussian_accuracy,
            discrete_laplace_accuracy,
        )

        if noise == "laplace":
            return discrete_laplace_accuracy(s, alpha)
        return discrete_gaussian_accuracy(s, alpha)

    return Measurement(
        input_domain, input_metric, measure, function=function, privacy_map=privacy_map,
        name="histogram",
        params={"categories": list(cats), "scale": s, "noise": noise},
        accuracy_map=accuracy_map, proof="histogram.md",
    )


def then_histogram(categories: Sequence[Hashable], scale: Number, *,
                   noise: Literal["laplace", "gaussian"] = "laplace") -> PartialConstructor:
    """Partial form of [`make_histogram`][dpcert.mechanisms.histogram.make_histogram]."""
    return partial(make_histogram, "histogram", categories, scale, noise=noise)
