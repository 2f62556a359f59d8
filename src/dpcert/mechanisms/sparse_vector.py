"""The sparse vector technique: AboveThreshold, SVT with ``c`` positives, and numeric SVT.

Lyu, Su & Li, *Understanding the Sparse Vector Technique for Differential Privacy* (VLDB 2017),
Algorithm 7, sampled exactly with discrete Laplace noise:

1. ``ρ ~ DLap(Δ/ε₁)`` once (the noisy threshold is ``T + ρ``);
2. for each query ``qᵢ`` in turn: ``νᵢ ~ DLap(2cΔ/ε₂)`` (``cΔ/ε₂`` if the queries are monotonic);
   if ``qᵢ(x) + νᵢ ≥ T + ρ`` output ⊤ — or, for numeric SVT, ``qᵢ(x) + DLap(cΔ/ε₃)`` with
   *fresh* noise — else ⊥; stop after ``c`` positives.

The release is ``(ε₁ + ε₂ + ε₃)``-DP for queries of sensitivity Δ (``map(d_in) = ε·d_in``).
``epsilon`` is split as ``ε₁ : ε₂ = 1 : (2c)^{2/3}`` (``c^{2/3}`` if monotonic), Lyu et al.'s
accuracy-optimal ratio, unless ``threshold_fraction`` fixes ``ε₁/ε``.  Query answers and the
threshold must be integers (counts): integer answers make the proof's shift of ρ by Δ a bijection
of the integer lattice (``docs/proofs/sparse_vector.md``).  Many published SVT variants are *not*
private; ``docs/sparse_vector.md`` lists them and why.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
>>> queries = [lambda xs, t=t: sum(x >= t for x in xs) for t in (90, 50, 10)]
>>> svt = space >> dp.m.then_sparse_vector(queries, threshold=40, epsilon=1.0)
>>> out = svt(list(range(100)))
>>> out[-1] or len(out) == 3, svt.map(1)
(True, Fraction(1, 1))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from dpcert._numbers import Number, as_fraction, is_real_number
from dpcert._validate import check_int, check_positive, check_probability
from dpcert.core.chaining import PartialConstructor, partial
from dpcert.core.domains import Domain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import PureDP
from dpcert.core.metrics import Metric
from dpcert.errors import InvalidParameter
from dpcert.samplers import discrete_laplace

__all__ = ["make_sparse_vector", "svt_budget_split", "then_sparse_vector"]

#: ``query(data)`` → an integer answer; ``data`` is a member of the input domain.
Query = Callable[[Any], Number]
#: One query's output: above/below the threshold, or the noisy answer (``None`` below it).
Answer = bool | int | None


def svt_budget_split(epsilon: Fraction, c: int, monotonic: bool) -> tuple[Fraction, Fraction]:
    """``(ε₁, ε₂)`` with ``ε₁ + ε₂ = ε`` exactly and ``ε₂/ε₁ ≈ (2c)^{2/3}`` (or ``c^{2/3}``)."""
    ratio = (c if monotonic else 2 * c) ** (2 / 3)
    share = Fraction(1 / (1 + ratio)).limit_denominator(1 << 20)
    e1 = epsilon * share
    return e1, epsilon - e1


def _int_answer(v: Number) -> int:
    finite = not isinstance(v, (float, np.floating)) or math.isfinite(v)
    if not is_real_number(v) or not finite or as_fraction(v, "answer").denominator != 1:
        raise InvalidParameter(f"query returned {v!r}: the sparse vector needs integer answers")
    return int(v)


def make_sparse_vector(input_domain: Domain, input_metric: Metric, queries: Sequence[Query],
                       threshold: Number, epsilon: Number, *, c: int = 1, sensitivity: Number = 1,
                       monotonic: bool = False, numeric_epsilon: Number | None = None,
                       threshold_fraction: Number | None = None) -> Measurement:
    """AboveThreshold (``c = 1``), SVT with ``c`` positives, or numeric SVT.

    Parameters
    ----------
    input_domain
        The datasets the queries read.
    input_metric
        Their neighbour relation.
    queries : sequence of callables
        ``query(data)`` → an integer; each of sensitivity ≤ ``sensitivity`` at ``d_in = 1``.
    threshold : int
    epsilon : number > 0
        Budget of the ⊤/⊥ answers (ε₁ + ε₂).
    c : int ≥ 1
        Number of positives after which the mechanism halts.
    sensitivity : number > 0
    monotonic : bool
        Whether all queries move in the same direction between neighbours.
    numeric_epsilon : number > 0, optional
        If given, positives are released as ``qᵢ(x) + DLap(cΔ/numeric_epsilon)`` (fresh noise).
    threshold_fraction : number in (0, 1), optional
        ε₁/ε; defaults to Lyu et al.'s ratio.

    Returns
    -------
    Measurement
        Data → list of answers (``True``/``False``, or a noisy int / ``None`` when numeric), one
        per query until the ``c``-th positive.  PureDP, ``map(d_in) = (ε + ε₃)·d_in``.
    """
    qs = list(queries)
    if not qs:
        raise InvalidParameter("queries=[] must not be empty")
    if not all(callable(q) for q in qs):
        raise InvalidParameter("every query must be callable")
    if isinstance(threshold, (bool, np.bool_)) or not is_real_number(threshold) or \
            as_fraction(threshold).denominator != 1:
        raise InvalidParameter(f"threshold={threshold!r} must be an integer")
    t = int(threshold)
    eps = check_positive(epsilon, "epsilon")
    cc = check_int(c, "c", minimum=1)
    sens = check_positive(sensitivity, "sensitivity")
    eps3 = None if numeric_epsilon is None else check_positive(numeric_epsilon, "numeric_epsilon")
    if threshold_fraction is None:
        e1, e2 = svt_budget_split(eps, cc, monotonic)
    else:
        share = check_probability(threshold_fraction, "threshold_fraction", open_low=True,
                                  open_high=True)
        e1, e2 = eps * share, eps * (1 - share)
    scale_rho = sens / e1
    scale_nu = (cc if monotonic else 2 * cc) * sens / e2
    scale_num = None if eps3 is None else cc * sens / eps3
    total = eps + (eps3 or 0)

    def function(x: object) -> list[Answer]:
        noisy_t = t + int(discrete_laplace(scale_rho, 1)[0])
        nus = discrete_laplace(scale_nu, len(qs)).tolist()
        fresh = [] if scale_num is None else discrete_laplace(scale_num, cc).tolist()
        out: list[Answer] = []
        positives = 0
        for q, nu in zip(qs, nus, strict=True):
            ans = _int_answer(q(x))
            if ans + nu >= noisy_t:
                out.append(True if scale_num is None else ans + fresh[positives])
                positives += 1
                if positives == cc:
                    break
            else:
                out.append(False if scale_num is None else None)
        return out

    def batch(x: object, n: int) -> list[list[Answer]]:
        # n independent runs at once: the same noise draws per run as ``function`` (threshold
        # noise, one noise per query, fresh noise per positive); answers are deterministic.
        k = len(qs)
        answers = np.array([_int_answer(q(x)) for q in qs], dtype=object)
        noisy_t = t + np.asarray(discrete_laplace(scale_rho, n)).astype(object)
        nus = np.asarray(discrete_laplace(scale_nu, n * k)).reshape(n, k).astype(object)
        above = (answers[None, :] + nus) >= noisy_t[:, None]
        fresh = (None if scale_num is None
                 else np.asarray(discrete_laplace(scale_num, n * cc)).reshape(n, cc))
        runs: list[list[Answer]] = []
        for r in range(n):
            out: list[Answer] = []
            positives = 0
            for i in range(k):
                if above[r, i]:
                    out.append(True if fresh is None
                               else int(answers[i]) + int(fresh[r, positives]))
                    positives += 1
                    if positives == cc:
                        break
                else:
                    out.append(False if fresh is None else None)
            runs.append(out)
        return runs

    return Measurement(
        input_domain, input_metric, PureDP(), function=function,
        privacy_map=lambda d_in: total * Fraction(d_in),
        batch_map=batch,
        name="sparse_vector",
        params={"threshold": t, "epsilon": eps, "epsilon_threshold": e1, "epsilon_queries": e2,
                "numeric_epsilon": eps3, "c": cc, "sensitivity": sens, "monotonic": monotonic,
                "queries": len(qs), "scale_threshold": scale_rho, "scale_queries": scale_nu,
                "scale_numeric": scale_num}, proof="sparse_vector.md",
    )


def then_sparse_vector(queries: Sequence[Query], threshold: Number, epsilon: Number, *, c: int = 1,
                       sensitivity: Number = 1, monotonic: bool = False,
                       numeric_epsilon: Number | None = None,
                       threshold_fraction: Number | None = None) -> PartialConstructor:
    """Partial form of `make_sparse_vector`."""
    return partial(make_sparse_vector, "sparse_vector", queries, threshold, epsilon, c=c,
                   sensitivity=sensitivity, monotonic=monotonic, numeric_epsilon=numeric_epsilon,
                   threshold_fraction=threshold_fraction)
