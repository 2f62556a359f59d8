"""A bound near the edge of the data, by the exponential mechanism on a rank score.

For an upper bound, candidate ``c_j`` (of ``c_0 < c_1 < …``) scores the distance from
``m = min(k, B(c_j))`` to the interval ``[A(c_j), A(c_{j−1})]``, negated::

    u(x, c_j) = −max(0, A(c_j) − m, m − A(c_{j−1}))

with ``A(c) = #{xᵢ > c}``, ``B(c) = #{xᵢ < c}`` and ``A(c_{−1}) = n``: 0 when at most ``k``
records lie above ``c_j`` and at least ``k`` above the candidate before it (so the records between
two candidates count for the upper one, ties and gaps alike), or, with fewer than ``2k`` records,
where as many lie above as below.  A lower bound mirrors it: ``m = min(k, A(c_j))``, interval
``[B(c_j), B(c_{j+1})]`` with ``B(c_C) = n``.  Adding (removing) one record changes each of the
three counts by at most one, all in the same direction, so ``a − m`` and ``m − b`` move by at most
one and so does the score; the exponential mechanism (McSherry & Talwar 2007) samples ``c`` with
probability ∝ ``exp(ε·u(x, c)/2)``: ``map(d_in) = ε·d_in`` (proof: ``docs/proofs/edge_rank.md``).

Why a count ``k`` and not a level: the bias of clipping at a bound grows with the number of
records beyond it, and the noise it saves does not depend on the data's size (Amin, Kulesza,
Muñoz Medina & Vassilvitskii, ICML 2019).  Candidates beyond every record all score
``−min(k, n)``; with `default_k` they weigh together at most ``β`` against one scoring 0,
so the bound is rarely far outside the data.

A *prior* ``γ ≥ 0`` with an ``anchor`` fixed before the data are read (0 for contribution
bounds; a median released earlier for value bounds) weighs candidate ``c`` by its distance
beyond the anchor to the power ``−γ`` as well (a data-independent base measure, so the privacy
map is unchanged): the noise a bound costs grows with that distance, and on a grid reaching
2^64 the candidates beyond the data then weigh little even with a small ``k``, so ``k`` can aim
at the few units that the bias–variance trade-off leaves beyond the bound (Amin et al. 2019)
instead of covering the grid.  The prior's exponents are the rationals `prior_exponents`
(exact sampling).  ``side="middle"`` releases the median (score ``−max(0, D(c_j),
−D(c_{j−1}))`` with ``D = A − B``, also sensitivity 1), the anchor of value bounds.

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> cands = [float(2**j) for j in range(12)]
>>> m = make_edge_rank(*space, cands, k=5, side="upper", epsilon=1)
>>> m.map(1), m.params["k"]
(Fraction(1, 1), 5)
>>> [round(float(g), 6) for g in prior_exponents([1.0, 2.0, 4.0], 2)]
[0.0, 1.386295, 2.772589]
>>> [round(float(g), 6) for g in prior_exponents([-4.0, 0.0, 3.0, 7.0], 1, anchor=3.0,
...                                                   side="lower")]
[1.94591, 1.098613, 1.098613, 1.098613]
>>> edge_scores([1.0, 2.0, 3.0, 900.0], [2.0, 4.0, 1024.0], 1, "middle").tolist()
[-1, 0, -2]
>>> edge_scores([1.0, 2.0, 3.0, 900.0], [2.0, 4.0, 1024.0], 1, "upper").tolist()
[-1, 0, 0]
>>> edge_scores([3.0, 3.0, 3.0, 3.0], [2.0, 4.0, 8.0], 2, "upper").tolist()
[-4, 0, -2]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from dpcert._validate import check_int, check_nonnegative, check_positive
from dpcert.core.domains import Domain, VectorDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import PureDP
from dpcert.core.metrics import InsertDeleteDistance, Metric, SymmetricDistance
from dpcert.errors import InvalidParameter, MetricMismatch
from dpcert.mechanisms._selection import exponential_indices
from dpcert.mechanisms._spaces import check_dataset_space
from dpcert.mechanisms.quantile import _candidates

__all__ = ["default_k", "edge_scores", "make_edge_rank", "prior_exponents"]

Side = Literal["upper", "lower", "middle"]


def default_k(epsilon: Any, candidates: int, beta: Any = Fraction(1, 20)) -> int:
    """The ``k`` at which the candidates beyond the data weigh at most ``beta`` against one
    scoring 0: ``⌈2·ln(C/β)/ε⌉``.

    >>> default_k(1, 100)
    16
    """
    return max(1, math.ceil(2 * math.log(candidates / float(beta)) / float(epsilon)))


def edge_scores(data: Any, candidates: Sequence[Any] | np.ndarray[Any, Any], k: int, side: Side
                ) -> np.ndarray[Any, Any]:
    """The scores of every candidate (exact integers; module docstring)."""
    xs = np.sort(np.asarray(data, dtype=np.float64))
    c = np.asarray(candidates, dtype=np.float64)
    below = np.searchsorted(xs, c, side="left").astype(np.int64)  # x < c_j
    above = (xs.size - np.searchsorted(xs, c, side="right")).astype(np.int64)  # x > c_j
    if side == "middle":  # the median lies in (c_(j-1), c_j]: D(c_j) ≤ 0 ≤ D(c_(j-1))
        d = above - below
        d_prev = np.concatenate(([xs.size], d[:-1]))
        mid: np.ndarray[Any, Any] = -np.maximum(0, np.maximum(d, -d_prev))
        return mid
    if side == "upper":  # interval [#{x > c_j}, #{x > c_(j-1)}]
        m, lo = np.minimum(k, below), above
        hi = np.concatenate(([xs.size], above[:-1]))
    else:  # interval [#{x < c_j}, #{x < c_(j+1)}]
        m, lo = np.minimum(k, above), below
        hi = np.concatenate((below[1:], [xs.size]))
    out: np.ndarray[Any, Any] = -np.maximum(0, np.maximum(lo - m, m - hi))
    return out


def prior_exponents(candidates: Sequence[float], gamma: Any, anchor: float = 0.0,
                    side: Side = "upper") -> list[Fraction]:
    """The prior's exponents: ``γ·ln(max(d_j, d₀))`` per candidate, ``d_j`` its distance beyond
    ``anchor`` on ``side`` (``c_j − anchor`` for an upper bound, ``anchor − c_j`` for a lower
    one) and ``d₀`` the least positive one; each logarithm rounded up to a multiple of 2^-20, so
    the exponents are exact rationals fixed by the candidates, ``γ`` and ``anchor`` alone (a
    data-independent base measure).  Weights are ``exp(−exponent)``, so a candidate twice as far
    from the anchor weighs ``2^−γ`` as much; ``side="middle"`` has no prior (all 0)."""
    g = Fraction(gamma)
    if side == "middle" or g == 0:
        return [Fraction(0)] * len(candidates)
    d = [(float(c) - anchor) if side == "upper" else (anchor - float(c)) for c in candidates]
    d0 = min((v for v in d if v > 0), default=1.0)
    scale = 1 << 20
    return [Fraction(math.ceil(math.log(max(v, d0)) * scale), scale) * g for v in d]


def make_edge_rank(input_domain: Domain, input_metric: Metric, candidates: Sequence[Any],
                   k: int, side: Side, epsilon: Any, prior: Any = 0, anchor: float = 0.0
                   ) -> Measurement:
    """A candidate with about ``k`` records beyond it on ``side``.

    Parameters
    ----------
    input_domain : VectorDomain of int or float (NaN allowed: it is neither above nor below)
    input_metric : SymmetricDistance or InsertDeleteDistance (records added or removed)
    candidates : strictly increasing finite numbers
    k : int ≥ 1, records to leave beyond the bound (`default_k`)
    side : ``"upper"``, ``"lower"``, or ``"middle"`` (the median: with ``D = A − B``, score
        ``−max(0, D(c_j), −D(c_{j−1}))``, 0 when the median lies in ``(c_{j−1}, c_j]``;
        ``k`` unused)
    epsilon : number > 0
    prior : number ≥ 0, the prior's ``γ``: candidate ``c`` also weighted by its distance
        beyond ``anchor`` to the power ``−γ`` (`prior_exponents`; 0: none)
    anchor : finite number, where the prior's distances start (fixed before the data are read)

    Returns
    -------
    Measurement
        Data → one candidate; PureDP with ``map(d_in) = ε·d_in``.
    """
    check_dataset_space("make_edge_rank", input_domain, input_metric, (int, float))
    if not isinstance(input_metric, (SymmetricDistance, InsertDeleteDistance)):
        raise MetricMismatch("make_edge_rank needs records added or removed (Symmetric or "
                             f"InsertDelete distance), got {type(input_metric).__name__}")
    assert isinstance(input_domain, VectorDomain)
    cands = _candidates(candidates)
    k = check_int(k, "k", minimum=1)
    if side not in ("upper", "lower", "middle"):
        raise InvalidParameter(f"side={side!r} must be 'upper', 'lower' or 'middle'")
    eps = check_positive(epsilon, "epsilon")
    gamma = check_nonnegative(prior, "prior")
    if not math.isfinite(anchor):
        raise InvalidParameter(f"anchor={anchor!r} must be a finite number")
    base = prior_exponents(cands.tolist(), gamma, float(anchor), side)
    to_array = input_domain.to_array

    def draw(x: Any, n: int) -> np.ndarray[Any, Any]:
        data = np.asarray(to_array(x), dtype=np.float64)
        data = data[~np.isnan(data)]
        scores = edge_scores(data, cands, k, side).tolist()
        top = max(scores)
        gammas = [Fraction(top - u) * eps / 2 + b for u, b in zip(scores, base, strict=True)]
        least = min(gammas)
        out: np.ndarray[Any, Any] = cands[exponential_indices([g - least for g in gammas], n)]
        return out

    return Measurement(
        input_domain, input_metric, PureDP(),
        function=lambda x: draw(x, 1)[0].item(),
        privacy_map=lambda d_in: eps * Fraction(d_in),
        batch_map=draw,
        name="edge_rank",
        params={"side": side, "k": k, "epsilon": eps, "candidates": len(cands),
                "sensitivity": 1, "prior": gamma, "anchor": float(anchor)},
        proof="edge_rank.md",
    )
