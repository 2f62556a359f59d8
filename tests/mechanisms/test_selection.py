"""Exponential mechanism, report-noisy-max, permute-and-flip, quantiles (contracts, statistics)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import dpcert as dp
from dpcert.errors import InvalidParameter
from dpcert.mechanisms._selection import (
    exponential_indices,
    noisy_max_indices,
    permute_and_flip_indices,
)
from dpcert.mechanisms.exponential import gammas_for
from dpcert.mechanisms.quantile import quantile_scores
from dpcert.testing import check_measurement_contract

Z = 5.5
N = 10**6
SPACE = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
CANDS = [0, 1, 2, 3]


def votes(xs: list[int]) -> list[int]:
    return [sum(1 for x in xs if x == c) for c in CANDS]


def privacy_ok(c1: np.ndarray, c2: np.ndarray, n: int, eps: float) -> None:
    keep = (c1 >= 500) & (c2 >= 500)
    for a, b in ((c1[keep], c2[keep]), (c2[keep], c1[keep])):
        p1, p2 = a / n, b / n
        lo = (p1 - Z * np.sqrt(p1 * (1 - p1) / n)) / (p2 + Z * np.sqrt(p2 * (1 - p2) / n))
        assert lo.max() <= math.exp(eps), f"ratio {lo.max()} > e^{eps}"


def chisquare_ok(counts: np.ndarray, probs: np.ndarray) -> None:
    exp = probs * counts.sum()
    keep = exp >= 5
    chi2 = float((((counts - exp) ** 2)[keep] / exp[keep]).sum())
    assert chi2 <= stats.chi2.isf(1e-7, int(keep.sum()) - 1), chi2


@pytest.mark.parametrize("make", [dp.m.make_exponential, dp.m.make_permute_and_flip,
                                  dp.m.make_report_noisy_max])
def test_contract_and_bad_input(make: object) -> None:
    m = make(*SPACE, CANDS, votes, 1, 1.0)  # type: ignore[operator]
    check_measurement_contract(m, [0, 1, 3])
    assert m([1, 1, 2]) in CANDS
    with pytest.raises(InvalidParameter, match="candidates"):
        make(*SPACE, [], votes, 1, 1.0)  # type: ignore[operator]
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(InvalidParameter, match="epsilon"):
            make(*SPACE, CANDS, votes, 1, bad)  # type: ignore[operator]
    with pytest.raises(InvalidParameter, match="sensitivity"):
        make(*SPACE, CANDS, votes, 0, 1.0)  # type: ignore[operator]
    bad_scorer = make(*SPACE, CANDS, lambda xs: [1.0, float("nan"), 0, 0], 1, 1.0)  # type: ignore[operator]
    with pytest.raises(InvalidParameter, match="finite"):
        bad_scorer([1])


def test_report_noisy_max_options() -> None:
    m = dp.m.make_report_noisy_max(*SPACE, CANDS, votes, 1, 0.5, noise="laplace", k=3)
    out = m([1, 1, 2, 3])
    assert len(out) == 3 and len(set(out)) == 3 and m.map(1) == Fraction(3, 2)
    with pytest.raises(InvalidParameter, match="integer scores"):
        dp.m.make_report_noisy_max(*SPACE, CANDS, lambda xs: [0.5, 0, 0, 0], 1, 1.0,
                                   noise="laplace")([1])
    with pytest.raises(InvalidParameter, match="k="):
        dp.m.make_report_noisy_max(*SPACE, CANDS, votes, 1, 1.0, k=5)
    with pytest.raises(InvalidParameter, match="noise"):
        dp.m.make_report_noisy_max(*SPACE, CANDS, votes, 1, 1.0, noise="gumbel")  # type: ignore[arg-type]


def test_gammas_exact() -> None:
    g = gammas_for([Fraction(3), Fraction(1), Fraction(0)], Fraction(1), Fraction(1), False)
    assert g == [0, 1, Fraction(3, 2)]
    assert gammas_for([Fraction(3), Fraction(1)], Fraction(1), Fraction(1), True) == [0, 2]


# neighbours for a sensitivity-1 scorer, worst case for the exponential mechanism: the chosen
# candidate loses a point while every rival gains one (ratio e^{ε/2}(1+3e^{ε/2})/(e^{ε/2}+3))
U1 = [Fraction(v) for v in (1, 0, 0, 0)]
U2 = [Fraction(v) for v in (0, 1, 1, 1)]


def em_probs(u: list[Fraction], eps: float) -> np.ndarray:
    w = np.exp(np.array([float(v) for v in u]) * eps / 2)
    return w / w.sum()


def pf_probs(u: list[Fraction], eps: float) -> np.ndarray:
    top = max(u)
    p = [math.exp(eps * float(v - top) / 2) for v in u]
    out = np.zeros(len(u))
    for heads in itertools.product([0, 1], repeat=len(u)):
        if not any(heads):
            continue
        pr = math.prod(p[j] if h else 1 - p[j] for j, h in enumerate(heads))
        for j, h in enumerate(heads):
            if h:
                out[j] += pr / sum(heads)
    return out


@pytest.mark.slow
def test_exponential_mechanism_statistics() -> None:
    eps = 1.0
    counts = [np.bincount(exponential_indices(gammas_for(u, Fraction(eps), Fraction(1), False),
                                              N), minlength=4) for u in (U1, U2)]
    chisquare_ok(counts[0], em_probs(U1, eps))
    chisquare_ok(counts[1], em_probs(U2, eps))
    privacy_ok(counts[0], counts[1], N, eps)


@pytest.mark.slow
def test_permute_and_flip_statistics() -> None:
    eps = 1.0
    counts = [np.bincount(permute_and_flip_indices(
        gammas_for(u, Fraction(eps), Fraction(1), False), N), minlength=4) for u in (U1, U2)]
    chisquare_ok(counts[0], pf_probs(U1, eps))
    chisquare_ok(counts[1], pf_probs(U2, eps))
    privacy_ok(counts[0], counts[1], N, eps)


@pytest.mark.slow
def test_report_noisy_max_laplace_privacy() -> None:
    eps = 1.0
    # worst case for RNM: the leader loses a point, a rival gains one
    u1, u2 = [3, 3, 0], [2, 4, 0]
    counts = [np.bincount(noisy_max_indices(u, Fraction(2), N), minlength=3) for u in (u1, u2)]
    assert counts[0][0] > counts[1][0]
    privacy_ok(counts[0], counts[1], N, eps)


@pytest.mark.slow
def test_quantile_statistics() -> None:
    eps = Fraction(1)
    cands = np.arange(0, 11)
    x1 = np.array([1, 2, 3, 5, 8, 9])
    x2 = np.append(x1, 10)
    alpha = Fraction(1, 2)
    sens = Fraction(1, 2) * 2  # max(a, b − a) = 1 for α = 1/2
    counts, probs = [], []
    for x in (x1, x2):
        u = [Fraction(int(v)) for v in quantile_scores(x, cands, alpha).tolist()]
        counts.append(np.bincount(exponential_indices(gammas_for(u, eps, sens, False), N),
                                  minlength=11))
        probs.append(em_probs(u, float(eps) / float(sens)))
    chisquare_ok(counts[0], probs[0])
    chisquare_ok(counts[1], probs[1])
    privacy_ok(counts[0], counts[1], N, float(eps))


def test_quantile_api() -> None:
    space = (dp.VectorDomain(dp.AtomDomain(float)), dp.ChangeOneDistance())
    m = dp.m.make_quantile(*space, [0.0, 5.0, 10.0], 0.25, 1.0)
    assert m.params["sensitivity"] == 4  # change-one: b = 4
    check_measurement_contract(m, [0, 1, 2])
    assert m([1.0, 2.0, 9.0]) in (0.0, 5.0, 10.0)
    with pytest.raises(InvalidParameter, match="increasing"):
        dp.m.make_quantile(*space, [1.0, 0.0], 0.5, 1.0)
    with pytest.raises(InvalidParameter, match="alpha"):
        dp.m.make_quantile(*space, [0.0, 1.0], 1.5, 1.0)
    with pytest.raises(InvalidParameter, match="candidates"):
        dp.m.make_quantile(*space, [], 0.5, 1.0)
    many = dp.m.make_quantiles(*space, [0.0, 5.0, 10.0], [0.1, 0.9], 2.0)
    assert many.map(1) == 2 and len(many([1.0, 9.0])) == 2
    # a big sample picks the true median with overwhelming probability at ε = 5
    med = dp.m.make_quantile(*space, [float(c) for c in range(11)], 0.5, 5.0)
    assert med([float(v) for v in np.repeat(np.arange(11), 50)]) in (4.0, 5.0, 6.0)
