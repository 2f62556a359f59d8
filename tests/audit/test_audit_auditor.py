"""The auditor end to end: claims, validity on correct mechanisms, and classic bugs caught."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import audit_subjects as subjects  # registered by tests/audit/conftest.py
import numpy as np
import pytest

import dpcert as dp
from dpcert._numbers import round_up
from dpcert.audit import audit, one_at_a_time, resolve_claim
from dpcert.combinators.conversions import zcdp_epsilon
from dpcert.errors import InvalidParameter


def _run(name: str, seed: int, samples: int, **kw):  # type: ignore[no-untyped-def]
    s = subjects.BY_NAME[name]
    return audit(s.make(np.random.default_rng(seed)), s.pairs, claimed=dp.PureDP(s.claimed),
                 samples=samples, input_size=s.input_size, adjacency=s.adjacency, name=name,
                 seed=seed, **kw)


def _gaussian(seed: int, sigma: float = 1.0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    h = subjects.H
    return lambda x, n: float(x) + h * np.rint(rng.normal(0.0, sigma / h, n))


def test_claims_from_measures_and_measurements() -> None:
    assert resolve_claim(0.5, None, 1e-6).epsilon == 0.5
    c = resolve_claim(dp.ApproxDP(1.0, 1e-5), None, 1e-6)
    assert (c.epsilon, c.delta) == (1.0, 1e-5)
    z = resolve_claim(dp.ZCDP(0.5), None, 1e-6)
    # the tight conversion (CKS20), never the loose ρ + 2√(ρ ln 1/δ)
    tight = float(round_up(zcdp_epsilon(Fraction(1, 2), Fraction(1, 10**6))))
    assert z.epsilon == tight < 0.5 + 2 * math.sqrt(0.5 * math.log(1e6))
    m = dp.m.make_laplace(dp.AtomDomain(int), dp.AbsoluteDistance(), scale=2)
    assert resolve_claim(None, m, 1e-6).epsilon == 0.5
    assert resolve_claim(None, lambda x, n: x, 1e-6) is None
    with pytest.raises(InvalidParameter, match="claimed='one'"):
        resolve_claim("one", None, 1e-6)
    with pytest.raises(InvalidParameter, match="carries no amount"):
        resolve_claim(dp.PureDP(), None, 1e-6)


def test_bad_arguments() -> None:
    f = lambda x, n: [0] * n  # noqa: E731
    with pytest.raises(InvalidParameter, match=r"confidence=1\.5"):
        audit(f, confidence=1.5)
    with pytest.raises(InvalidParameter, match="samples=5 must be >= 100"):
        audit(f, samples=5)
    with pytest.raises(InvalidParameter, match=r"pairs\[0\]=3"):
        audit(f, [3])
    with pytest.raises(InvalidParameter, match="mechanism=3"):
        audit(3)


def test_leak_is_caught_with_a_witness() -> None:
    r = audit(lambda x, n: ["yes" if x > 0 else "no"] * n, claimed=5.0, samples=1_000)
    assert r.violated and r.witness is not None and r.epsilon_lower > 5
    assert "witness" in str(r) and r.verdict == "VIOLATION"


def test_a_measurement_is_audited_through_real_calls() -> None:
    rr = dp.m.make_randomized_response_bool(1.0)
    r = audit(rr, samples=4_000, confidence=1 - 1e-6)
    assert r.claimed_epsilon == pytest.approx(1.0) and not r.violated
    assert 0.5 < r.epsilon_lower <= 1.0


def test_scalar_adapter() -> None:
    rng = np.random.default_rng(3)
    g = one_at_a_time(lambda x: x + subjects.H * np.rint(rng.laplace(0.0, 1.0 / subjects.H)))
    r = audit(g, claimed=1.0, samples=3_000, confidence=1 - 1e-6, seed=3)
    assert not r.violated and r.epsilon_lower > 0.1


def test_seconds_is_a_deadline_checked_between_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    # a fake clock: every call of the mechanism takes 0.5 s; the audit has 20 s in all
    from dpcert.audit import auditor
    from dpcert.audit.kernel import estimate

    clock = [0.0]

    def now() -> float:
        return clock[0]

    def slow(x: float, n: int) -> np.ndarray:
        clock[0] += 0.5
        return np.full(n, float(x > 0))   # reveals x: any event works

    monkeypatch.setattr(auditor.time, "perf_counter", now)
    monkeypatch.setattr(estimate.time, "perf_counter", now)
    r = audit(slow, claimed=1.0, seconds=20.0, seed=1)
    assert r.violated
    assert 18.0 <= clock[0] <= 20.0   # no chunk started that would end past the deadline
    assert r.samples < auditor.MAX_SAMPLES


def test_zero_bound_is_explained() -> None:
    r = audit(lambda x, n: np.zeros(n), claimed=0.5, samples=1_000, seed=2)
    assert r.epsilon_lower == 0.0 and not r.violated
    assert "draws per input" in r.explanation and "halve" in r.explanation
    assert "note:" in str(r)


def test_result_as_json() -> None:
    r = audit(lambda x, n: ["yes" if x > 0 else "no"] * n, claimed=5.0, samples=1_000, seed=4)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["verdict"] == "VIOLATION" and d["witness"]["event"]
    assert d["curve"][0][0] == 0.0


def test_understated_zcdp_is_caught_by_the_tight_conversion() -> None:
    # σ = 1 on sensitivity 1 is 0.5-zCDP; it claims 0.125 (4× too small).  At δ = 1e-6 the
    # claim is ε ≤ 2.419 (CKS20); the loose conversion said 2.753, about what 100 000 draws can
    # show (the true ε at δ = 1e-6 is 4.887), so an auditor reading the claim through the
    # loose conversion could let it pass.
    loose = 0.125 + 2 * math.sqrt(0.125 * math.log(1e6))
    for seed in (1, 2):
        r = audit(_gaussian(seed), claimed=dp.ZCDP(0.125), samples=100_000, seed=seed)
        assert r.claimed_epsilon < 2.42 < loose
        assert r.violated, str(r)
        assert r.claimed_epsilon < r.epsilon_lower < 4.887


def test_approx_dp_curve_for_a_gaussian() -> None:
    # σ = 2: ε(δ = 1e-5) ≈ 2.0 exactly (Balle & Wang 2018), so the claim (2.5, 1e-5) holds
    r = audit(_gaussian(7, 2.0), claimed=dp.ApproxDP(2.5, 1e-5), samples=200_000, seed=7,
              confidence=1 - 1e-6)
    deltas = [d for d, _ in r.curve]
    eps = [e for _, e in r.curve]
    assert deltas == sorted(deltas) and 1e-5 in deltas and 0.1 in deltas
    assert eps == sorted(eps, reverse=True)   # ε(δ) decreases
    assert eps[0] > 1.0 and not r.violated


def test_float_lattice_holes_of_naive_numpy_laplace_are_found() -> None:
    # numpy's x + Laplace(10): outputs of x = 0 near 0 have bits x = 1 cannot produce
    r = _run("NaiveFloatLaplace", 1, 50_000)
    assert r.violated and r.epsilon_lower > 2.0
    assert r.witness is not None and "bit" in r.witness.event.describe()
    # the same noise kept on a lattice is not flagged (true ε = 0.1)
    s = subjects.BY_NAME["Laplace"]
    r2 = audit(s.make(np.random.default_rng(1)), claimed=dp.PureDP(0.1), samples=50_000,
               confidence=1 - 1e-7, seed=1)
    assert not r2.violated, str(r2)


def test_approx_dp_reports_a_delta_lower_bound() -> None:
    rng = np.random.default_rng(4)

    def leaky(x: float, n: int) -> np.ndarray:   # Laplace(1), but reveals x w.p. 0.05
        out = x + rng.laplace(0.0, 1.0, n)
        out[rng.random(n) < 0.05] = 100.0 + x
        return out

    r = audit(leaky, claimed=dp.ApproxDP(1.0, 1e-3), samples=200_000, seed=4)
    assert r.violated and r.delta_lower is not None and r.delta_lower > 0.04


#: Subjects whose true ε on the audited pairs equals the claim (the tightest test of soundness).
TIGHT = ["Laplace", "TruncatedGeometric", "OneTimeRappor"]


@pytest.mark.parametrize("name", TIGHT)
def test_sound_on_tight_mechanisms_over_seeds(name: str) -> None:
    # no bound above the true ε (= the claim) on any seed, at confidence 1 − 1e-7 each
    for seed in range(4):
        r = _run(name, 100 + seed, 20_000, confidence=1 - 1e-7)
        assert r.epsilon_lower <= subjects.BY_NAME[name].claimed, str(r)


@pytest.mark.slow
@pytest.mark.parametrize("name", TIGHT)
def test_sound_on_tight_mechanisms_over_many_seeds(name: str) -> None:
    for seed in range(20):
        r = _run(name, 200 + seed, 50_000, confidence=1 - 1e-7)
        assert r.epsilon_lower <= subjects.BY_NAME[name].claimed, str(r)


CORRECT = ["Laplace", "TruncatedGeometric", "NoisyHist1", "ReportNoisyMax1", "ReportNoisyMax2",
           "SVT1", "SVT2", "OneTimeRappor", "Rappor", "LaplaceParallel", "PrefixSum",
           "NumericalSVT"]
BUGGY = ["LaplaceWrongScale", "NoisyHist2", "ReportNoisyMax3", "ReportNoisyMax4", "SVT3", "SVT4",
         "SVT5", "SVT6", "SVT34Parallel", "NaiveFloatLaplace"]


@pytest.mark.slow
@pytest.mark.parametrize("name", CORRECT)
def test_no_false_alarm_on_correct_mechanisms(name: str) -> None:
    for seed in (11, 12):
        r = _run(name, seed, 100_000, confidence=1 - 1e-7)
        assert not r.violated, str(r)


@pytest.mark.slow
@pytest.mark.parametrize("name", BUGGY)
def test_classic_bugs_are_flagged_with_a_witness(name: str) -> None:
    big = name in ("SVT3", "SVT4", "SVT34Parallel", "LaplaceWrongScale")
    r = _run(name, 21, 1_000_000 if big else 300_000)
    assert r.violated and r.witness is not None, str(r)
    assert r.witness.ratio_lower is not None
    assert r.witness.ratio_lower > math.exp(r.claimed_epsilon or 0)


def test_mirrored_pairs_are_searched_once() -> None:
    from dpcert.audit.auditor import _resolve_pairs

    pairs = [(1, 0), (0, 1), (1, 2), (2, 1), ([0.0, 1.0], [1.0, 1.0]), ([1.0, 1.0], [0.0, 1.0])]
    got = _resolve_pairs(None, pairs, None, 1.0, "linf")
    assert got == [(1, 0), (1, 2), ([0.0, 1.0], [1.0, 1.0])]
    # bit for bit: -0.0 is not 0.0 (a float mechanism may tell them apart), 1 is not 1.0,
    # and inputs that are not numeric arrays never match
    kept = [(0.0, 1.0), (1.0, -0.0), (1, 0.0), ("a", "b"), ("b", "a")]
    assert _resolve_pairs(None, kept, None, 1.0, "linf") == kept


def test_rappor_pairs_in_both_orders_cost_no_search_time() -> None:
    # DP-Sniper lists RAPPOR's two pairs in both orders: the audit searches two pairs
    s = subjects.BY_NAME["Rappor"]
    assert s.pairs is not None and len(s.pairs) == 4
    r = audit(s.make(np.random.default_rng(0)), s.pairs, claimed=dp.PureDP(s.claimed),
              samples=20_000, seed=0)
    assert r.pairs_searched == 2


def test_inputs_that_refuse_to_be_arrays_are_never_mirrors() -> None:
    from dpcert.audit.auditor import _resolve_pairs

    class Hostile:
        def __array__(self, *args: object, **kwargs: object) -> np.ndarray:
            raise RuntimeError("secret row 42")

    h = Hostile()
    pairs = [(h, 1.0), (1.0, h), ([1.0, 2.0], [1.0, 2.0, 3.0])]
    assert _resolve_pairs(None, pairs, None, 1.0, "linf") == pairs
