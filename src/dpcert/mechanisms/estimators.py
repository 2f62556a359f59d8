"""Unbiased frequency estimates from local-DP reports, with variances and confidence intervals.

Each local randomizer reports category ``j`` (or sets bit ``j``) with probability
``P_j = b + c·π_j`` where ``π_j`` is the true proportion of users holding ``j``:

===============================  ===================  ==========================
mechanism                        ``b``                ``c``
===============================  ===================  ==========================
binary RR (truth prob. ``p``)    ``1 − p``            ``2p − 1``
k-RR (other-category prob. q)    ``q``                ``1 − k·q``
RAPPOR (flip prob. ``r``)        ``r``                ``1 − 2r``
===============================  ===================  ==========================

so ``π̂_j = (y_j − b)/c`` with ``y_j`` the observed share is unbiased, and
``Var(π̂_j) = P_j(1 − P_j)/(n c²)``, estimated without bias by
``y_j(1 − y_j)/((n − 1) c²)`` (Wang, Blocki, Li & Jha, USENIX Security 2017).  Intervals are the
normal (Wald) intervals ``π̂_j ± z·√Var``; estimates are not clipped to ``[0, 1]`` (clipping
would bias them; clip yourself if you prefer).  The probabilities used are the exact rationals the
mechanism samples with (``mechanism.params``), not the ideal ``e^ε`` ones.

Examples
--------
>>> import numpy as np
>>> import dpcert as dp
>>> rr = dp.m.make_randomized_response_bool(1.0)
>>> reports = np.array([True] * 700 + [False] * 300)
>>> est = estimate_frequencies(reports, rr)
>>> est.categories
(False, True)
>>> [round(f, 3) for f in est.frequencies.tolist()]
[0.067, 0.933]
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from dpcert._numbers import Number
from dpcert._types import Array
from dpcert._validate import check_int, check_probability
from dpcert.core.measurement import Measurement
from dpcert.errors import InvalidParameter, OutOfDomain

__all__ = ["FrequencyEstimate", "estimate_frequencies"]


@dataclass(frozen=True, eq=False)
class FrequencyEstimate:
    """Estimated proportions (and counts) of each category among ``n`` reporting users.

    Attributes
    ----------
    categories : tuple
        The categories, in the order of the arrays below.
    n : int
        Number of reports.
    frequencies : numpy.ndarray
        Unbiased proportion estimates.
    variances : numpy.ndarray
        Their estimated variances.
    ci_low : numpy.ndarray
        Lower ends of the two-sided ``confidence`` normal intervals.
    ci_high : numpy.ndarray
        Upper ends of the two-sided ``confidence`` normal intervals.
    """

    categories: tuple[Hashable, ...]
    n: int
    frequencies: Array
    variances: Array
    ci_low: Array
    ci_high: Array
    confidence: float

    @property
    def counts(self) -> Array:
        """Estimated number of users per category (``n · frequencies``)."""
        return self.n * self.frequencies

    def as_dict(self) -> dict[Hashable, float]:
        """``{category: frequency}``."""
        return dict(zip(self.categories, self.frequencies.tolist(), strict=True))


def _fraction(params: Mapping[str, object], key: str) -> Fraction:
    v = params[key]
    if not isinstance(v, Fraction):
        raise InvalidParameter(f"{key}={v!r}: the mechanism's parameter is not exact")
    return v


def _categories(params: Mapping[str, object]) -> tuple[Hashable, ...]:
    v = params["categories"]
    if not isinstance(v, (list, tuple)):
        raise InvalidParameter(f"categories={v!r} is not a list")
    return tuple(v)


def _observed_shares(reports: npt.ArrayLike, mechanism: Measurement
                     ) -> tuple[tuple[Hashable, ...], Array, int, Fraction, Fraction]:
    """(categories, observed shares y, n, b, c) for the mechanism's reports."""
    name = mechanism.name
    params = mechanism.params
    if name == "randomized_response_bool":
        arr = np.asarray(reports)
        if arr.ndim != 1 or arr.dtype.kind != "b":
            raise InvalidParameter("reports must be a 1-D array of bools for binary RR")
        n = arr.size
        ones = int(arr.sum())
        y = np.array([n - ones, ones], dtype=np.float64)
        p = _fraction(params, "p_truth")
        return (False, True), y, n, 1 - p, 2 * p - 1
    if name == "randomized_response":
        cats = _categories(params)
        arr = np.asarray(reports, dtype=object if isinstance(cats[0], str) else None)
        if arr.ndim != 1:
            raise InvalidParameter("reports must be a 1-D array of categories for k-RR")
        n = arr.size
        uniq, cnt = np.unique(arr, return_counts=True)
        lookup = {c: i for i, c in enumerate(cats)}
        y = np.zeros(len(cats), dtype=np.float64)
        for u, c in zip(uniq.tolist(), cnt.tolist(), strict=True):
            if u not in lookup:
                raise OutOfDomain(f"report {u!r} is not one of categories={list(cats)!r}")
            y[lookup[u]] = c
        q = _fraction(params, "p_other")
        return cats, y, n, q, 1 - len(cats) * q
    if name == "rappor":
        k = check_int(params["domain_size"], "domain_size")
        arr = np.asarray(reports)
        if arr.ndim != 2 or arr.shape[1] != k:
            raise InvalidParameter(f"reports must be an (n, {k}) 0/1 array for RAPPOR")
        if arr.size and not np.isin(arr, (0, 1)).all():
            raise InvalidParameter("RAPPOR reports must contain only 0 and 1")
        n = arr.shape[0]
        r = _fraction(params, "p_flip")
        return tuple(range(k)), arr.sum(axis=0).astype(np.float64), n, r, 1 - 2 * r
    raise InvalidParameter(
        f"mechanism={mechanism!r}: estimate_frequencies supports randomized_response_bool, "
        "randomized_response and rappor"
    )


def estimate_frequencies(reports: npt.ArrayLike, mechanism: Measurement, *,
                         confidence: Number = 0.95) -> FrequencyEstimate:
    """Debias local-DP ``reports`` produced by ``mechanism`` into category frequencies.

    Parameters
    ----------
    reports : array-like
        Outputs of ``mechanism``: bools (binary RR), categories (k-RR) or an ``(n, k)`` 0/1
        matrix (RAPPOR).
    mechanism : Measurement
        The local randomizer that produced them (its exact sampling probabilities are used).
    confidence : float in (0, 1)
        Coverage of the normal confidence intervals.

    Returns
    -------
    FrequencyEstimate
    """
    conf = check_probability(confidence, "confidence", open_low=True, open_high=True)
    if not isinstance(mechanism, Measurement):
        raise InvalidParameter(f"mechanism={mechanism!r} must be a Measurement")
    cats, counts, n, b, c = _observed_shares(reports, mechanism)
    if n < 2:
        raise InvalidParameter(f"need at least 2 reports, got n={n}")
    if c <= 0:
        raise InvalidParameter(
            f"mechanism={mechanism!r} carries no signal (c={c}); frequencies cannot be estimated"
        )
    y = counts / n
    cf, bf = float(c), float(b)
    freq = (y - bf) / cf
    var = y * (1 - y) / ((n - 1) * cf * cf)
    z = NormalDist().inv_cdf(0.5 + float(conf) / 2)
    half = z * np.sqrt(var)
    return FrequencyEstimate(
        categories=cats, n=n, frequencies=freq, variances=var,
        ci_low=freq - half, ci_high=freq + half, confidence=float(conf),
    )
