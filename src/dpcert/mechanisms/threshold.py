"""Partition selection: release the keys of a dataset, and their counts, without a public key set.

Each record is one privacy unit's key (bound contributions first: one key per unit).  Every
distinct key's count gets discrete Laplace noise ``Z ~ DLap(1/ε)`` and the key is released (with
its noisy count) only if ``count + Z ≥ τ``.  Neighbours that differ in a record whose key appears
in both differ by 1 in one count: ε, by the discrete Laplace mechanism.  A key present only in
the larger dataset has count 1 there and is released with probability
``P(Z ≥ τ − 1) = q^{τ−1}/(1+q)``, ``q = e^{−ε}``; τ is the smallest integer making this ``≤ δ``
(Korolova, Kenthapadi, Mishra & Ntoulas 2009; Wilson et al. 2020).  So one record costs (ε, δ);
``d_in`` records cost ``(d·ε, d·e^{(d−1)ε}·δ)`` by group privacy.  Proof:
``docs/proofs/threshold.md``.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(str)), dp.SymmetricDistance())
>>> sel = space >> dp.m.then_partition_selection(epsilon=1.0, delta=1e-6)
>>> sel.params["threshold"]
15
>>> sorted(sel(["a"] * 100 + ["rare"]))
['a']
>>> sel.map(1)
(Fraction(1, 1), Fraction(1, 1000000))
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from fractions import Fraction

import numpy as np

from dpcert._directed import EXP_ARG_MAX, exp_bounds, exp_floor, log_bounds, ru
from dpcert._numbers import Number
from dpcert._validate import check_positive, check_probability
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import Domain, VectorDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ApproxDP
from dpcert.core.metrics import InsertDeleteDistance, Metric, SymmetricDistance
from dpcert.errors import InvalidParameter, MetricMismatch
from dpcert.mechanisms._spaces import check_dataset_space
from dpcert.samplers import discrete_laplace

__all__ = [
    "keyed_threshold",
    "laplace_tail",
    "make_partition_selection",
    "partition_threshold",
    "then_partition_selection",
]


def partition_threshold(epsilon: Number, delta: Number) -> int:
    """Smallest integer τ ≥ 2 with ``P(1 + Z ≥ τ) ≤ δ`` for ``Z ~ DLap(1/ε)`` (rigorous).

    ``P(Z ≥ m) = q^m/(1+q)`` with ``q = e^{−ε}``, so ``τ − 1 ≥ (ln(1/δ) − ln(1+q))/ε``.
    """
    eps = check_positive(epsilon, "epsilon")
    dl = check_probability(delta, "delta", open_low=True, open_high=True)
    q_lo, _ = exp_bounds(-eps)
    need = (log_bounds(1 / dl)[1] - log_bounds(1 + q_lo)[0]) / eps
    return max(2, math.ceil(need) + 1)


def laplace_tail(scale: Number, m: int) -> Fraction:
    """A rigorous upper bound on ``P(Z ≥ m)`` for ``Z ~ DLap(scale)`` (``P(z) ∝ e^{-|z|/scale}``).

    ``P(Z ≥ m) = q^m / (1 + q)`` with ``q = e^{-1/scale}`` for ``m ≥ 0``; 1 for ``m ≤ 0``
    (a valid bound).

    Examples
    --------
    >>> float(laplace_tail(2, 0)), 0.3 < float(laplace_tail(2, 1)) < 0.38
    (1.0, True)
    """
    s = check_positive(scale, "scale")
    if m <= 0:
        return Fraction(1)
    q_lo, _ = exp_bounds(-1 / s)
    _, qm_hi = exp_bounds(Fraction(-m) / s)
    return min(Fraction(1), ru(qm_hi / (1 + q_lo)))


def keyed_threshold(scale: Number, per_group: int, groups: int, delta: Number) -> int:
    """Smallest τ with ``groups · P(Z ≥ τ − per_group) ≤ delta``, ``Z ~ DLap(scale)``.

    Starts from the rigorous `partition_threshold` and checks with `laplace_tail`,
    so the privacy map of a keyed release (which evaluates the same tail) meets ``delta``
    exactly at the calibration point.

    Examples
    --------
    >>> keyed_threshold(2, 1, 1, Fraction(1, 10**6))
    28
    >>> keyed_threshold(2, 3, 2, Fraction(1, 10**6))
    32
    """
    s = check_positive(scale, "scale")
    dl = check_probability(delta, "delta", open_low=True, open_high=True)
    if groups < 1 or per_group < 0:
        raise InvalidParameter(f"groups={groups} must be >= 1 and per_group={per_group} >= 0")
    if groups * exp_floor() > dl:  # laplace_tail never goes below exp_floor()
        raise InvalidParameter(f"delta={delta!r} must be at least {groups}·e^-{EXP_ARG_MAX} "
                               f"(about 2^-2954 per group) for a threshold to be computed")
    tau = partition_threshold(1 / s, dl / groups) - 1 + per_group
    while groups * laplace_tail(s, tau - per_group) > dl:
        tau += 1
    while tau - 1 - per_group >= 1 and groups * laplace_tail(s, tau - 1 - per_group) <= dl:
        tau -= 1
    return tau


def make_partition_selection(input_domain: Domain, input_metric: Metric, epsilon: Number,
                             delta: Number) -> Measurement:
    """Noisy-threshold partition selection over the keys in a vector (one key per unit).

    Parameters
    ----------
    input_domain : VectorDomain of bool, int or str
        One record per privacy unit: its key.
    input_metric : SymmetricDistance or InsertDeleteDistance
    epsilon : number > 0
    delta : number in (0, 1)

    Returns
    -------
    Measurement
        Data → ``{key: noisy count}`` of the keys that pass τ; ApproxDP.
    """
    check_dataset_space("make_partition_selection", input_domain, input_metric,
                        (bool, int, str))
    if not isinstance(input_metric, (SymmetricDistance, InsertDeleteDistance)):
        raise MetricMismatch(
            "make_partition_selection needs add/remove neighbours (SymmetricDistance or "
            f"InsertDeleteDistance), got {type(input_metric).__name__}"
        )
    assert isinstance(input_domain, VectorDomain)
    eps = check_positive(epsilon, "epsilon")
    dl = check_probability(delta, "delta", open_low=True, open_high=True)
    tau = partition_threshold(eps, dl)
    scale = 1 / eps
    to_array = input_domain.to_array

    def batch(x: object, n: int) -> list[dict[Hashable, int]]:
        arr = np.asarray(to_array(x))
        if arr.size == 0:
            return [{} for _ in range(n)]
        keys, counts = np.unique(arr, return_counts=True)
        noise = np.asarray(discrete_laplace(scale, n * keys.size)).reshape(n, keys.size)
        noisy = counts.astype(np.int64)[None, :] + noise
        keep = noisy >= tau
        key_list = keys.tolist()
        return [{key_list[j]: int(row[j]) for j in np.flatnonzero(k)}
                for row, k in zip(noisy, keep, strict=True)]

    def function(x: object) -> dict[Hashable, int]:
        return batch(x, 1)[0]

    def privacy_map(d_in: int | Fraction) -> tuple[Fraction, Fraction]:
        d = int(d_in)
        if d == 0:
            return Fraction(0), Fraction(0)
        if d == 1:
            return eps, dl
        if (d - 1) * eps > EXP_ARG_MAX:  # δ = 1 is always a valid bound
            return d * eps, Fraction(1)
        group = d * exp_bounds((d - 1) * eps)[1] * dl
        return d * eps, min(Fraction(1), ru(group))

    return Measurement(
        input_domain, input_metric, ApproxDP(), function=function, privacy_map=privacy_map,
        batch_map=batch,
        name="partition_selection",
        params={"epsilon": eps, "delta": dl, "threshold": tau, "scale": scale},
        proof="threshold.md",
    )


def then_partition_selection(epsilon: Number, delta: Number) -> PartialConstructor:
    """Partial form of `make_partition_selection`."""
    return partial(make_partition_selection, "partition_selection", epsilon, delta)
