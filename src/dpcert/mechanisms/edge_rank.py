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

Examples
--------
>>> import dpcert as dp
>>> space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
>>> cands = [float(2**j) for j in range(12)]
>>> m = make_edge_rank(*space, cands, k=5, side="upper", epsilon=1)
>>> m.map(1), m.params["k"]
(Fraction(1, 1), 5)
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

from dpcert._validate import check_int, check_positive
from dpcert.core.domains import Domain, VectorDomain
from dpcert.core.measurement import Measurement
from dpcert.core.measures import PureDP
from dpcert.core.metrics import InsertDeleteDistance, Metric, SymmetricDistance
from dpcert.errors import InvalidParameter, MetricMismatch
from dpcert.mechanisms._selection import exponential_indices
from dpcert.mechanisms._spaces import check_dataset_space
from dpcert.mechanisms.quantile import _candidates

__all__ = ["default_k", "edge_scores", "make_edge_rank"]

Side = Literal["upper", "lower"]


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
    if side == "upper":  # interval [#{x > c_j}, #{x > c_(j-1)}]
        m, lo = np.minimum(k, below), above
        hi = np.concatenate(([xs.size], above[:-1]))
    else:  # interval [#{x < c_j}, #{x < c_(j+1)}]
        m, lo = np.minimum(k, above), below
        hi = np.concatenate((below[1:], [xs.size]))
    out: np.ndarray[Any, Any] = -np.maximum(0, np.maximum(lo - m, m - hi))
    return out


def make_edge_rank(input_domain: Domain, input_metric: Metric, candidates: Sequence[Any],
                   k: int, side: Side, epsilon: Any) -> Measurement:
    """A candidate with about ``k`` records beyond it on ``side``.

    Parameters
    ----------
    input_domain : VectorDomain of int or float (NaN allowed: it is neither above nor below)
    input_metric : SymmetricDistance or InsertDeleteDistance (records added or removed)
    candidates : strictly increasing finite numbers
    k : int ≥ 1, records to leave beyond the bound (`default_k`)
    side : ``"upper"`` or ``"lower"``
    epsilon : number > 0

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
    if side not in ("upper", "lower"):
        raise InvalidParameter(f"side={side!r} must be 'upper' or 'lower'")
    eps = check_positive(epsilon, "epsilon")
    to_array = input_domain.to_array

    def draw(x: Any, n: int) -> np.ndarray[Any, Any]:
        data = np.asarray(to_array(x), dtype=np.float64)
        data = data[~np.isnan(data)]
        scores = edge_scores(data, cands, k, side).tolist()
        top = max(scores)
        out: np.ndarray[Any, Any] = cands[exponential_indices(
            [Fraction(top - u) * eps / 2 for u in scores], n)]
        return out

    return Measurement(
        input_domain, input_metric, PureDP(),
        function=lambda x: draw(x, 1)[0].item(),
        privacy_map=lambda d_in: eps * Fraction(d_in),
        batch_map=draw,
        name="edge_rank",
        params={"side": side, "k": k, "epsilon": eps, "candidates": len(cands),
                "sensitivity": 1},
        proof="edge_rank.md",
    )
