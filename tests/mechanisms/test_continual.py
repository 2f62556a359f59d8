"""make_continual_sum: exact maps against brute-force sensitivities of the integer map actually
released, exact error formulas against seeded empirical errors, causality, errors
(docs/proofs/continual.md)."""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpcert as dp
from dpcert.errors import DomainMismatch, InvalidParameter, MetricMismatch
from dpcert.mechanisms import _continual_tree as tree
from dpcert.mechanisms._continual_factor import (
    exact_toeplitz_apply,
    integer_factor,
    sqrt_coefficients,
)
from dpcert.mechanisms._continual_stream import StreamFactor, StreamState
from dpcert.mechanisms.continual import (
    ContinualPlan,
    continual_plan,
    continual_sum_errors,
    noise_variance,
)
from dpcert.samplers import InsecureSeededSource
from dpcert.testing import check_measurement_contract

COMBOS = list(itertools.product(("tree", "factorization", "streaming"), ("laplace", "gaussian")))
PROOF = Path(__file__).resolve().parents[2] / "docs" / "proofs" / "continual.md"


def _space(steps: int) -> tuple[Any, Any]:
    return dp.VectorDomain(dp.AtomDomain(int), size=steps), dp.L1Distance()


def _f(plan: ContinualPlan, x: np.ndarray) -> np.ndarray:
    """The integer vector each method adds noise to (the map's subject)."""
    if plan.method == "tree":
        return np.concatenate(tree.node_sums(x, plan.levels)).astype(object)
    if plan.method == "factorization":
        return np.asarray(exact_toeplitz_apply(plan.coef, x), dtype=object)
    state = StreamState(plan.factor, plan.unit_bits)
    return np.array([state.encode(int(c)) for c in x.tolist()], dtype=object)


def _measured_loss(plan: ContinualPlan, x: np.ndarray, x2: np.ndarray) -> Fraction:
    diff = _f(plan, x) - _f(plan, x2)
    if plan.noise == "laplace":
        return Fraction(int(np.abs(diff).sum())) / plan.param
    return Fraction(int((diff * diff).sum())) / (2 * plan.param**2)


def _wrong_map(plan: ContinualPlan, d: Fraction) -> Fraction:
    """A plausible wrong map: the sensitivity of the counts themselves (d), as if the running
    sums were a plain additive-noise release."""
    return d / plan.param if plan.noise == "laplace" else d * d / (2 * plan.param**2)


@pytest.mark.parametrize(("method", "noise"), COMBOS)
def test_map_covers_brute_force_and_wrong_map_is_caught(method: str, noise: str) -> None:
    steps = 12
    d_in = 3
    plan = continual_plan(*_space(steps), Fraction(3, 2), method, noise)
    m = dp.m.make_continual_sum(*_space(steps), Fraction(3, 2), method=method, noise=noise)
    rng = np.random.default_rng(7)
    worst = Fraction(0)
    base = rng.integers(0, 40, steps)
    pairs = [(base, base + d_in * np.eye(steps, dtype=np.int64)[j]) for j in range(steps)]
    for _ in range(30):  # the d_in units spread over random steps, either sign
        v = np.zeros(steps, dtype=np.int64)
        for j in rng.integers(0, steps, d_in):
            v[j] += rng.choice([-1, 1])
        pairs.append((base, base + v))
    for x, x2 in pairs:
        worst = max(worst, _measured_loss(plan, x, x2))
    assert worst <= m.map(d_in)
    assert worst > _wrong_map(plan, Fraction(d_in))  # the naive map is not private
    if method != "streaming":  # linear maps: the bound is attained at a vertex of the L1 ball
        assert worst == m.map(d_in)


@pytest.mark.parametrize("d_in", [1, 3, Fraction(7, 2)])
def test_maps_exact_closed_forms(d_in: Any) -> None:
    d = Fraction(d_in)
    steps = 4096
    space = _space(steps)
    t = dp.m.make_continual_sum(*space, 4, method="tree")
    assert t.map(d_in) == 12 * d / 4
    tg = dp.m.make_continual_sum(*space, 4, method="tree", noise="gaussian")
    assert tg.map(d_in) == 12 * d * d / 32
    c = sqrt_coefficients(16)
    f = dp.m.make_continual_sum(*_space(16), 1, method="factorization", noise="gaussian")
    ctilde = integer_factor(16)
    assert all(abs(Fraction(int(ci), 2**24) - cj) <= Fraction(1, 2**25)
               for ci, cj in zip(ctilde, c, strict=True))
    assert f.map(d_in) == d * d * sum(Fraction(int(v)) ** 2 for v in ctilde) / (2 * 4**24)
    fl = dp.m.make_continual_sum(*_space(16), 1, method="factorization")
    assert fl.map(d_in) == d * sum(Fraction(int(v)) for v in ctilde) / 2**24


def test_streaming_map_close_to_its_linear_part() -> None:
    f = StreamFactor.for_steps(4096)
    m = dp.m.make_continual_sum(*_space(4096), 1, method="streaming", noise="gaussian")
    linear = f.column_l2_bound() ** 2 / 2
    assert linear <= m.map(1) <= linear * (1 + Fraction(1, 10**6))
    c = f.coefficients()
    assert float(linear) == pytest.approx(float((c * c).sum()) / 2, rel=1e-9)


def test_contract_and_proof_note() -> None:
    for method, noise in COMBOS:
        m = dp.m.make_continual_sum(*_space(10), 2, method=method, noise=noise)
        check_measurement_contract(m, [0, 1, 2, Fraction(5, 2)])
        assert m.proof == "continual.md"
    text = PROOF.read_text()
    assert "make_continual_sum" in text and "Neighbour relation" in text
    for method in ("tree", "factorization", "streaming"):
        assert f'`method="{method}"`' in text


def _empirical(plan: ContinualPlan, x: np.ndarray, reps: int, seed: int) -> np.ndarray:
    src = InsecureSeededSource(seed)
    truth = np.cumsum(x)
    out = plan.release_batch(x, reps, src)
    return np.asarray(((out - truth) ** 2).mean(axis=0))


@pytest.mark.parametrize(("method", "noise"), COMBOS)
def test_error_formula_matches_seeded_empirical(method: str, noise: str) -> None:
    steps = 16
    plan = continual_plan(*_space(steps), 2, method, noise)
    x = np.arange(steps, dtype=np.int64) % 5
    emp = _empirical(plan, x, 20000, seed=11)
    exact = continual_sum_errors(steps, 2, method=method, noise=noise)  # type: ignore[arg-type]
    ratio = emp / exact
    tol = 0.04
    assert abs(ratio.mean() - 1) < tol
    assert np.abs(ratio - 1).max() < 3 * tol


def test_error_check_catches_the_plain_tree_formula() -> None:
    """The same empirical check rejects the plain (non-Honaker) tree's variances."""
    steps = 16
    plan = continual_plan(*_space(steps), 2, "tree", "gaussian")
    emp = _empirical(plan, np.zeros(steps, dtype=np.int64), 20000, seed=11)
    v = noise_variance("gaussian", Fraction(2))
    wrong = v * tree.prefix_variances(steps, honaker=False)
    assert np.abs(emp / wrong - 1).max() > 0.2


def test_noise_variance_exact_forms() -> None:
    q = np.exp(-1 / 3)
    assert noise_variance("laplace", Fraction(3)) == pytest.approx(2 * q / (1 - q) ** 2,
                                                                   rel=1e-12)
    assert noise_variance("gaussian", Fraction(20)) == 400
    z = np.arange(-60, 61)
    p = np.exp(-z * z / 2.0)
    assert noise_variance("gaussian", Fraction(1)) == pytest.approx((z * z * p).sum() / p.sum())


@pytest.mark.parametrize(("method", "noise"), COMBOS)
def test_release_is_causal(method: str, noise: str) -> None:
    steps = 20
    plan = continual_plan(*_space(steps), 1, method, noise)
    x = np.ones(steps, dtype=np.int64)
    x2 = x.copy()
    x2[13] += 5
    a = plan.release(x, InsecureSeededSource(3))
    b = plan.release(x2, InsecureSeededSource(3))
    np.testing.assert_allclose(a[:13], b[:13], rtol=0, atol=1e-9)
    assert abs((b[13] - a[13]) - 5) < 1e-6


def test_tree_reads_exact_sums_without_noise() -> None:
    x = np.array([3, 1, 4, 1, 5, 9, 2, 6], dtype=np.int64)
    for steps in (5, 8):
        levels = tree.tree_levels(steps)
        sums = [s.astype(np.float64) for s in tree.node_sums(x[:steps], levels)]
        for honaker in (True, False):
            got = tree.honaker_prefix(sums, steps, honaker=honaker)
            np.testing.assert_allclose(got, np.cumsum(x[:steps]))


def test_large_counts_use_exact_integers() -> None:
    coef = integer_factor(3)
    x = np.array([2**40, 1, 2**45], dtype=np.int64)
    got = exact_toeplitz_apply(coef, x)
    want = [sum(int(coef[t - j]) * int(x[j]) for j in range(t + 1)) for t in range(3)]
    assert [int(v) for v in got] == want


@pytest.mark.parametrize(("kwargs", "err", "match"), [
    ({"scale": 0}, InvalidParameter, "scale=0"),
    ({"method": "matrix"}, InvalidParameter, "method='matrix'"),
    ({"noise": "normal"}, InvalidParameter, "noise='normal'"),
    ({"scale": 2**30, "method": "factorization"}, InvalidParameter, "too large"),
])
def test_bad_parameters(kwargs: dict[str, Any], err: type[Exception], match: str) -> None:
    args = {"scale": 1, **kwargs}
    scale = args.pop("scale")
    with pytest.raises(err, match=match):
        dp.m.make_continual_sum(*_space(8), scale, **args)


def test_bad_spaces() -> None:
    with pytest.raises(DomainMismatch, match="integer counts"):
        dp.m.make_continual_sum(dp.VectorDomain(dp.AtomDomain(float), size=4), dp.L1Distance(), 1)
    with pytest.raises(InvalidParameter, match="no size"):
        dp.m.make_continual_sum(dp.VectorDomain(dp.AtomDomain(int)), dp.L1Distance(), 1)
    with pytest.raises(MetricMismatch, match="L1Distance"):
        dp.m.make_continual_sum(dp.VectorDomain(dp.AtomDomain(int), size=4), dp.L2Distance(), 1)


def test_factorization_error_is_the_square_root_value_and_streaming_is_close() -> None:
    """The benchmark's claims at T = 1024 (benchmarks/bench_continual.py runs T = 4096)."""
    steps = 1024
    sq = float(sum(c * c for c in sqrt_coefficients(steps)))
    space = _space(steps)

    def at_half_rho(method: str) -> float:
        m = dp.m.make_continual_sum(*space, 1, method=method, noise="gaussian")  # type: ignore
        err = continual_sum_errors(steps, 1, method=method, noise="gaussian")  # type: ignore
        return float(err.max()) * float(m.map(1) / Fraction(1, 2))

    fac, stream, honaker = at_half_rho("factorization"), at_half_rho("streaming"), at_half_rho(
        "tree")
    assert fac == pytest.approx(sq * sq, rel=1e-6)
    assert fac < stream < 1.05 * fac
    assert 2 * fac < honaker < tree.tree_levels(steps) ** 2


def test_tree_sums_of_huge_counts_do_not_wrap() -> None:
    x = np.array([2**62, 2**62, -5], dtype=np.int64)
    sums = tree.node_sums(x, tree.tree_levels(3))
    assert int(sums[1][0]) == 2**63  # beyond int64: Python integers, exact


@pytest.mark.parametrize(("method", "noise"), COMBOS)
def test_half_widths_cover_and_one_standard_error_does_not(method: str, noise: str) -> None:
    steps, alpha = 16, 0.05
    plan = continual_plan(*_space(steps), 2, method, noise)
    x = np.arange(steps, dtype=np.int64) % 3
    out = plan.release_batch(x, 20000, InsecureSeededSource(21))
    err = np.abs(out - np.cumsum(x))
    assert (err > plan.half_widths(alpha)).mean(axis=0).max() <= alpha
    one_se = np.sqrt(plan.errors())
    assert (err > one_se).mean(axis=0).min() > 0.2  # a 1-se "interval" is caught


def test_smoothed_tree_error_formula_and_privacy_unchanged() -> None:
    steps = 13
    plan = continual_plan(*_space(steps), 2, "tree", "gaussian", True)
    online = continual_plan(*_space(steps), 2, "tree", "gaussian")
    assert plan.rho(Fraction(3)) == online.rho(Fraction(3))  # same noisy nodes, other read-out
    x = np.arange(steps, dtype=np.int64) % 4
    emp = _empirical(plan, x, 20000, seed=13)
    exact = continual_sum_errors(steps, 2, method="tree", noise="gaussian", smooth=True)
    assert np.abs(emp / exact - 1).max() < 0.12 and abs((emp / exact).mean() - 1) < 0.04
    assert (exact <= online.errors() + 1e-12).all() and exact.max() < online.errors().max()
    sums = [s.astype(np.float64) for s in tree.node_sums(x, plan.levels)]
    np.testing.assert_allclose(tree.smoothed_prefix(sums, steps), np.cumsum(x))
    with pytest.raises(InvalidParameter, match="smooth=True applies to method='tree'"):
        continual_plan(*_space(steps), 2, "factorization", "gaussian", True)


def test_online_stream_matches_the_streaming_measurement(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """Same noise, same outputs: the online stream is the measurement run step by step."""
    steps = 40
    stream = dp.m.open_continual_sum(steps, 3, noise="laplace")
    plan = continual_plan(*_space(steps), 3, "streaming", "laplace")
    noise = plan.draw_all(InsecureSeededSource(8))
    feed = iter(noise[0].tolist())
    monkeypatch.setattr(stream._plan, "draw", lambda size, source: np.array([next(feed)]))
    x = (np.arange(steps) * 7 % 5).astype(np.int64)
    online = [stream.step(int(c)) for c in x]
    np.testing.assert_allclose(online, plan.release_with(x, noise), rtol=1e-12, atol=1e-9)
    assert stream.measurement.map(2) == plan.epsilon(Fraction(2)) and stream.buffers == 15
    with pytest.raises(InvalidParameter, match="all 40 steps"):
        stream.step(1)
    with pytest.raises(InvalidParameter, match=r"count=1\.5"):
        dp.m.open_continual_sum(4, 1).step(1.5)


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_streaming_blocks_bound_covers_a_unit_split_over_groups(noise: str) -> None:
    """Two groups (blocks) run independently; a unit putting d_1 + d_2 = 3 into them costs at
    most the map with blocks=2 (the rounding term is paid once per touched block)."""
    steps = 12
    plan = continual_plan(*_space(steps), Fraction(1, 10**6), "streaming", noise)
    rng = np.random.default_rng(3)
    worst = Fraction(0)
    for _ in range(40):
        x1, x2 = rng.integers(0, 50, steps), rng.integers(0, 50, steps)
        j1, j2 = rng.integers(0, steps, 2)
        y1, y2 = x1.copy(), x2.copy()
        y1[j1] += 1
        y2[j2] += 2
        worst = max(worst, _measured_loss(plan, x1, y1) + _measured_loss(plan, x2, y2))
    loss2 = plan.epsilon(Fraction(3), 2) if noise == "laplace" else plan.rho(Fraction(3), 2)
    loss1 = plan.epsilon(Fraction(3)) if noise == "laplace" else plan.rho(Fraction(3))
    assert worst <= loss2 and loss1 < loss2
