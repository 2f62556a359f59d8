"""make_sparse_vector: the noise scales for c > 1, sensitivity > 1, monotonic, numeric answers."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpcert as dp
from dpcert.errors import InvalidParameter
from dpcert.mechanisms.sparse_vector import svt_budget_split

SPACE = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())


@pytest.mark.parametrize("c", [1, 2, 5])
@pytest.mark.parametrize("monotonic", [False, True])
@pytest.mark.parametrize("sens", [1, 3])
def test_noise_scales_exact(c: int, monotonic: bool, sens: int) -> None:
    m = dp.m.make_sparse_vector(*SPACE, [len] * 6, 2, 1.5, c=c, sensitivity=sens,
                                monotonic=monotonic, numeric_epsilon=0.5)
    e1, e2 = svt_budget_split(Fraction(3, 2), c, monotonic)
    assert (m.params["epsilon_threshold"], m.params["epsilon_queries"]) == (e1, e2)
    assert e1 + e2 == Fraction(3, 2)
    assert m.params["scale_threshold"] == sens / e1
    assert m.params["scale_queries"] == (1 if monotonic else 2) * c * sens / e2
    assert m.params["scale_numeric"] == c * sens / Fraction(1, 2)
    assert m.map(1) == 2 and m.map(3) == 6


def _dlap_pmf(scale: Fraction, lim: int) -> tuple[np.ndarray, np.ndarray]:
    z = np.arange(-lim, lim + 1)
    q = math.exp(-1 / float(scale))
    return z, (1 - q) / (1 + q) * q ** np.abs(z)


def test_query_noise_distribution_matches_its_scale_for_c_above_one() -> None:
    # P(first answer is ⊤) = P(ν − ρ ≥ t − q) for ν ~ DLap(2cΔ/ε₂), ρ ~ DLap(Δ/ε₁); with c = 4
    # a query noise that forgot c would make this probability visibly smaller.
    c, thr, answer = 4, 10, 8
    m = dp.m.make_sparse_vector(*SPACE, [lambda xs: answer] * 3, thr, 1.0, c=c)
    z1, p1 = _dlap_pmf(m.params["scale_queries"], 400)
    z2, p2 = _dlap_pmf(m.params["scale_threshold"], 400)
    diff = np.subtract.outer(z1, z2)
    joint = np.multiply.outer(p1, p2)
    p_top = float(joint[diff >= thr - answer].sum())
    wrong_scale = m.params["scale_queries"] / c
    zw, pw = _dlap_pmf(wrong_scale, 400)
    p_wrong = float(np.multiply.outer(pw, p2)[np.subtract.outer(zw, z2) >= thr - answer].sum())
    n = 20000
    runs = m.batch_map([0], n)  # type: ignore[misc]
    hits = sum(1 for r in runs if r[0] is True)
    sd = math.sqrt(n * p_top * (1 - p_top))
    assert abs(hits - n * p_top) < 6 * sd  # fails w.p. < 2e-9
    assert abs(n * p_wrong - n * p_top) > 12 * sd  # and the wrong scale is far outside


# --- second tests (issue 20, item 4): the exact law of the output on neighbouring answers -----
#
# With integer answers q and discrete Laplace noise, a run's ⊤/⊥ pattern s has probability
# P(s) = Σ_ρ P(ρ) Π_i [s_i ? P(ν ≥ T + ρ − q_i) : P(ν ≤ T + ρ − q_i − 1)]  (the queries'
# noises are independent given ρ), a finite sum once ρ is truncated to |ρ| ≤ L: the mass left
# out is ≤ 2e^(−L/b_ρ) < 1e-100 here, far below the 1e-12 floor on the patterns compared.  The
# scales are the ones the mechanism hands to its sampler (a spy on ``discrete_laplace``), and
# the attained max log-ratio on answer vectors that differ by at most Δ per query must be
# ≤ map(1) (Lyu, Su & Li 2017, Alg. 7) and within a factor 1.5 of it.

L_RHO = 3000


def _scales_used(m: dp.Measurement, k: int, c: int, numeric: bool,
                 monkeypatch: pytest.MonkeyPatch) -> list[Fraction]:
    import dpcert.mechanisms.sparse_vector as svt_module

    seen: list[tuple[Fraction, int]] = []
    real = svt_module.discrete_laplace

    def spy(scale: Fraction, n: int) -> np.ndarray:
        seen.append((Fraction(scale), n))
        return real(scale, n)

    monkeypatch.setattr(svt_module, "discrete_laplace", spy)
    m([])
    monkeypatch.setattr(svt_module, "discrete_laplace", real)
    # threshold noise once, one noise per query, then fresh noise per positive (numeric)
    assert [n for _, n in seen] == [1, k] + ([c] if numeric else [])
    return [s for s, _ in seen]


def _pattern_law(qs: list[int], b_rho: Fraction, b_nu: Fraction,
                 c: int) -> dict[tuple[bool, ...], float]:
    z, p_rho = _dlap_pmf(b_rho, L_RHO)
    lim = 4 * L_RHO
    _, p_nu = _dlap_pmf(b_nu, lim)
    cdf = np.cumsum(p_nu)

    def below(x: np.ndarray) -> np.ndarray:  # P(ν ≤ x)
        i = x + lim
        return np.where(i < 0, 0.0, cdf[np.clip(i, 0, 2 * lim)])

    law: dict[tuple[bool, ...], float] = {}

    def walk(i: int, pat: tuple[bool, ...], pos: int, w: np.ndarray) -> None:
        if pos == c or i == len(qs):
            law[pat] = float((p_rho * w).sum())
            return
        f = below(z - qs[i] - 1)  # threshold T = 0
        walk(i + 1, (*pat, False), pos, w * f)
        walk(i + 1, (*pat, True), pos + 1, w * (1 - f))

    walk(0, (), 0, np.ones(z.size))
    assert sum(law.values()) == pytest.approx(1, abs=1e-12)
    return law


def _pairs(k: int, sens: int, tops: int) -> list[tuple[list[int], list[int]]]:
    """Answer vectors and neighbours (each answer moves by ≤ Δ): the first ``k − tops`` answers
    far above the threshold T = 0 move up (⊥ is harder), the last ``tops`` move down."""
    out = []
    for g in (10, 30, 60):
        for h in (-60, -20, 0, 20, 60):
            qs = [g] * (k - tops) + [h] * tops
            out.append((qs, [g + sens] * (k - tops) + [h - sens] * tops))
            out.append((qs, [x + sens for x in qs]))
    return out


@pytest.mark.parametrize("sens", [2, 4])
def test_above_threshold_exact_law_loss_is_covered_and_attained(
        sens: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """AboveThreshold (c = 1), six queries, ε = 1 split ½ : ½, Δ = 2 and 4: the attained loss
    is ε (1.0000, on ⊥⁵⊤ with answers (60, …, 60, −60) vs (60 + Δ, …, −60 − Δ)): the threshold
    noise pays ε₁ for the ⊥s, the last query's noise ε₂ for the ⊤.  A threshold noise of scale
    1/ε₁ instead of Δ/ε₁ attains 1.45-1.5 ε."""
    k = 6
    m = dp.m.make_sparse_vector(*SPACE, [len] * k, 0, 1, sensitivity=sens,
                                threshold_fraction=Fraction(1, 2))
    b_rho, b_nu = _scales_used(m, k, 1, False, monkeypatch)
    worst = 0.0
    for qs, qs2 in _pairs(k, sens, 1):
        p, q = _pattern_law(qs, b_rho, b_nu, 1), _pattern_law(qs2, b_rho, b_nu, 1)
        worst = max([worst] + [abs(math.log(p[s] / q[s])) for s in p
                               if p[s] > 1e-12 and q[s] > 1e-12])
    assert worst <= float(m.map(1)) * (1 + 1e-9)
    assert worst >= float(m.map(1)) / 1.5


def test_numeric_svt_exact_law_loss_is_covered_and_attained(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Numeric SVT, c = 2, ε = 1, ε₃ = 3, four queries: a run's output is its pattern and, per
    positive, ``q_i + DLap(b₃)``; the log-ratio of an output is the pattern's plus, per
    positive, that of the released value, which reaches ±|q_i − q'_i|/b₃ (a value beyond both
    answers).  Attained: 3 + the pattern's up to 1, so ≤ map(1) = 4; a map without ε₃ (1), or
    fresh noise of scale Δ/ε₃ instead of cΔ/ε₃ (6 from the values alone), fails."""
    k, c = 4, 2
    m = dp.m.make_sparse_vector(*SPACE, [len] * k, 0, 1, c=c, numeric_epsilon=3)
    b_rho, b_nu, b_num = _scales_used(m, k, c, True, monkeypatch)
    _, p_num = _dlap_pmf(b_num, 200)
    log_num = np.log(p_num)

    def value_loss(a: int, b: int, sign: int) -> float:  # max over v of ±log P(v−a)/P(v−b)
        # index 200 + z holds log P(z); for v − a = z in [−100, 100], v − b = z + a − b
        sa, sb = log_num[100:301], np.roll(log_num, b - a)[100:301]
        return float(np.max(sign * (sa - sb)))

    worst = 0.0
    for qs, qs2 in _pairs(k, 1, 2):
        p, q = _pattern_law(qs, b_rho, b_nu, c), _pattern_law(qs2, b_rho, b_nu, c)
        for s in p:
            if p[s] <= 1e-12 or q[s] <= 1e-12:
                continue
            lp = math.log(p[s] / q[s])
            pos = [i for i, top in enumerate(s) if top]
            for sign in (1, -1):
                worst = max(worst, sign * lp + sum(value_loss(qs[i], qs2[i], sign)
                                                   for i in pos))
    assert worst <= float(m.map(1)) * (1 + 1e-9)
    assert worst >= float(m.map(1)) / 1.5


@pytest.mark.parametrize("answer", [np.float32("nan"), np.float32(2.5), math.inf, "3"])
def test_a_non_integer_answer_is_refused_naming_it(answer: object) -> None:
    space = (dp.VectorDomain(dp.AtomDomain(int)), dp.SymmetricDistance())
    m = dp.m.make_sparse_vector(*space, [lambda xs: answer], threshold=1, epsilon=1.0)
    with pytest.raises(InvalidParameter, match="needs integer answers"):
        m([1, 2])
