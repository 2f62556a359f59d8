"""``make_edge_rank`` (docs/proofs/edge_rank.md): sensitivity 1 of the scores on every
neighbour of small datasets, the map, the exact output distribution against ``map(1)``, and a
wrong variant the sensitivity check catches."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpcert as dp
from dpcert.errors import InvalidParameter, MetricMismatch
from dpcert.mechanisms.edge_rank import default_k, edge_scores, make_edge_rank, prior_exponents
from dpcert.testing import check_measurement_contract

CANDS = [0.0, 1.0, 2.0, 4.0, 8.0]
SPACE = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())


def _max_move(scores: Any, data: list[float], k: int, side: str) -> int:
    """Largest move of any score over every neighbour (one record added or removed)."""
    base = np.asarray(scores(data, CANDS, k, side))
    out = 0
    for i in range(len(data)):  # remove one
        out = max(out, int(np.abs(base - scores(data[:i] + data[i + 1:], CANDS, k, side)).max()))
    for y in [-1.0, *CANDS, 0.5, 3.0, 100.0]:  # add one
        out = max(out, int(np.abs(base - scores([*data, y], CANDS, k, side)).max()))
    return out


@given(st.lists(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 8.0, 9.0]), max_size=9),
       st.integers(1, 5), st.sampled_from(["upper", "lower", "middle"]))
def test_scores_move_by_at_most_one(data: list[float], k: int, side: str) -> None:
    assert _max_move(edge_scores, data, k, side) <= 1


def _wrong(data: Any, cands: Any, k: int, side: str) -> Any:
    """Wrong variant: the interval's top counts records at or above c_j (not above c_{j−1}),
    and ``m`` is not capped at k -- the score then moves by 2 for some neighbours."""
    xs = np.sort(np.asarray(data, dtype=np.float64))
    c = np.asarray(cands, dtype=np.float64)
    below = np.searchsorted(xs, c, side="left")
    above = xs.size - np.searchsorted(xs, c, side="right")
    return -np.abs(above - (below - (xs.size - below)))


def test_the_sensitivity_check_catches_a_wrong_score() -> None:
    assert _max_move(_wrong, [1.0, 2.0, 2.0, 8.0], 2, "upper") > 1


def test_map_and_contract() -> None:
    m = make_edge_rank(*SPACE, CANDS, 3, "upper", Fraction(1, 2))
    assert m.map(1) == Fraction(1, 2) and m.map(4) == 2
    check_measurement_contract(m, [0, 1, 2, 5])
    assert m([1.0, 2.0]) in CANDS
    assert len(m.sample([1.0, 2.0], 7)) == 7


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(InvalidParameter):
        make_edge_rank(*SPACE, CANDS, 0, "upper", 1)
    with pytest.raises(InvalidParameter):
        make_edge_rank(*SPACE, CANDS, 1, "centre", 1)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter):
        make_edge_rank(*SPACE, [2.0, 1.0], 1, "upper", 1)
    with pytest.raises(InvalidParameter, match="prior"):
        make_edge_rank(*SPACE, CANDS, 1, "upper", 1, prior=-1)
    with pytest.raises(MetricMismatch):
        make_edge_rank(dp.VectorDomain(dp.AtomDomain(float)), dp.ChangeOneDistance(), CANDS, 1,
                       "upper", 1)


def _pmf(data: list[float], k: int, side: str, eps: Fraction, prior: Any = 0
         ) -> np.ndarray[Any, Any]:
    """The sampled distribution: the exponents ``make_edge_rank`` hands to the sampler."""
    u = edge_scores(data, CANDS, k, side).astype(float)
    base = np.array([float(b) for b in prior_exponents(CANDS, prior, 3.0, side)])  # type: ignore[arg-type]
    w = np.exp(float(eps) * u / 2 - base)
    return np.asarray(w / w.sum())


def _data_prior_pmf(data: list[float], k: int, side: str, eps: Fraction, prior: Any = 0
                    ) -> np.ndarray[Any, Any]:
    """Wrong variant: the prior measured from the data (magnitudes relative to its largest
    value), no longer a base measure."""
    u = edge_scores(data, CANDS, k, side).astype(float)
    top = max([1.0, *(abs(v) for v in data)])
    base = float(prior) * np.log(np.maximum(1.0, np.abs(np.array(CANDS)) * 9.0 / top))
    w = np.exp(float(eps) * u / 2 - base)
    return np.asarray(w / w.sum())


def _worst_log_ratio(pmf: Any, prior: Any) -> float:
    eps = Fraction(1)
    worst = 0.0
    for n in range(0, 4):
        for data in itertools.product([0.0, 1.0, 3.0, 9.0], repeat=n):
            for y in [0.0, 1.0, 3.0, 9.0]:
                for side in ("upper", "lower", "middle"):
                    p = pmf(list(data), 2, side, eps, prior)
                    q = pmf([*data, y], 2, side, eps, prior)
                    worst = max(worst, float(np.max(np.abs(np.log(p) - np.log(q)))))
    return worst


@pytest.mark.parametrize("prior", [0, 1, 4])
def test_the_exact_distribution_is_within_the_map(prior: int) -> None:
    """Over every pair of neighbours on a small grid, the largest log-ratio of the output
    probabilities is at most map(1) = ε = 1 (the exponential mechanism's PMF, as sampled,
    with or without the magnitude prior)."""
    assert _worst_log_ratio(_pmf, prior) <= 1 + 1e-12


def test_a_prior_read_from_the_data_breaks_the_map() -> None:
    assert _worst_log_ratio(_data_prior_pmf, 4) > 2


def test_the_prior_pulls_towards_small_bounds() -> None:
    """Records 0..9, k = 1, ε = 1/100 (the scores barely matter), 162 candidates to 2^40: the
    exact output distribution puts most of its mass above 16 without a prior, and under 1/4
    of it there with γ = 4 (Σ_j (2^(j/4)/16)^-4 over the candidates above 16 is below 1)."""
    cands = [0.0, *(2.0 ** (j / 4) for j in range(0, 161))]
    data = [float(v) for v in range(10)]
    far = np.array(cands) > 16

    def mass(prior: int) -> float:
        u = edge_scores(data, cands, 1, "upper").astype(float)
        base = np.array([float(b) for b in prior_exponents(cands, prior)])
        w = np.exp(u / 200 - base)
        return float(w[far].sum() / w.sum())

    assert mass(0) > 0.7 and mass(4) < 0.25


def test_a_large_budget_lands_on_the_edge() -> None:
    """1000 records 0..999, k = 10, ε = 50 over 12 candidates: every candidate but 1024 scores
    ≤ −10 (weight ≤ e^{-250} each), so a draw off 1024 has probability < 1e-100."""
    m = make_edge_rank(*SPACE, [float(2**j) for j in range(12)], 10, "upper", 50)
    assert m([float(v) for v in range(1000)]) == 1024.0


def test_default_k_covers_the_candidates() -> None:
    for eps, c in ((Fraction(1, 40), 64), (Fraction(1, 2), 675)):
        k = default_k(eps, c, Fraction(1, 1000))
        assert c * math.exp(-float(eps) * k / 2) <= 1e-3
