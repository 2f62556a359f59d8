"""The auditor end to end: claims, validity on correct mechanisms, and classic bugs caught."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import dpcert as dp
from dpcert.audit import audit, one_at_a_time, resolve_claim
from dpcert.errors import InvalidParameter

_spec = importlib.util.spec_from_file_location("audit_subjects", Path(__file__).with_name(
    "subjects.py"))
assert _spec is not None and _spec.loader is not None
subjects = importlib.util.module_from_spec(_spec)
sys.modules["audit_subjects"] = subjects
_spec.loader.exec_module(subjects)


def _run(name: str, seed: int, samples: int, **kw):  # type: ignore[no-untyped-def]
    s = subjects.BY_NAME[name]
    pairs = [(0, 1)] if "Rappor" in name else None
    return audit(s.make(np.random.default_rng(seed)), pairs, claimed=dp.PureDP(s.claimed),
                 samples=samples, input_size=s.input_size, adjacency=s.adjacency, name=name,
                 **kw)


def test_claims_from_measures_and_measurements() -> None:
    assert resolve_claim(0.5, None, 1e-6).epsilon == 0.5
    c = resolve_claim(dp.ApproxDP(1.0, 1e-5), None, 1e-6)
    assert (c.epsilon, c.delta) == (1.0, 1e-5)
    z = resolve_claim(dp.ZCDP(0.5), None, 1e-6)
    assert z.epsilon >= 0.5 + 2 * math.sqrt(0.5 * math.log(1e6))
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


def test_scalar_adapter_and_time_budget() -> None:
    rng = np.random.default_rng(3)
    g = one_at_a_time(lambda x: x + rng.laplace(0.0, 1.0))
    r = audit(g, claimed=1.0, seconds=2.0, confidence=1 - 1e-6)  # no duration asserted
    assert not r.violated and r.epsilon_lower > 0.3


def test_approx_dp_reports_a_delta_lower_bound() -> None:
    rng = np.random.default_rng(4)

    def leaky(x: float, n: int) -> np.ndarray:   # Laplace(1), but reveals x w.p. 0.05
        out = x + rng.laplace(0.0, 1.0, n)
        out[rng.random(n) < 0.05] = 100.0 + x
        return out

    r = audit(leaky, claimed=dp.ApproxDP(1.0, 1e-3), samples=200_000)
    assert r.violated and r.delta_lower is not None and r.delta_lower > 0.04


@pytest.mark.slow
def test_laplace_epsilon_1_bound_is_tight_and_fast() -> None:
    rng = np.random.default_rng(5)
    r = audit(lambda x, n: x + rng.laplace(0.0, 1.0, n), claimed=dp.PureDP(1.0))
    assert r.epsilon_lower >= 0.9 and not r.violated


CORRECT = ["Laplace", "NoisyHist1", "ReportNoisyMax1", "ReportNoisyMax2", "SVT1",
           "OneTimeRappor", "PrefixSum"]
BUGGY = ["LaplaceWrongScale", "NoisyHist2", "ReportNoisyMax3", "ReportNoisyMax4", "SVT4",
         "SVT5", "SVT6"]


@pytest.mark.slow
@pytest.mark.parametrize("name", CORRECT)
def test_no_false_alarm_on_correct_mechanisms(name: str) -> None:
    for seed in (11, 12):
        r = _run(name, seed, 100_000)
        assert not r.violated, str(r)


@pytest.mark.slow
@pytest.mark.parametrize("name", BUGGY)
def test_classic_bugs_are_flagged_with_a_witness(name: str) -> None:
    r = _run(name, 21, 1_000_000 if name in ("SVT4", "LaplaceWrongScale") else 300_000)
    assert r.violated and r.witness is not None, str(r)
    assert r.witness.p_x_lower > math.exp(r.claimed_epsilon or 0) * r.witness.p_x_prime_upper
