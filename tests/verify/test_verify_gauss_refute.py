"""Refuting (ε, δ) claims of Gaussian programs: pair, optimal event, proven enclosure."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

pytest.importorskip("z3")
pytest.importorskip("lark")

from dpcert.accounting.gdp import gdp_delta
from dpcert.verify import parse_program, verify
from dpcert.verify.gauss_refute import refute_gaussian

PROGRAMS = Path(__file__).resolve().parents[2] / "examples" / "programs"

#: the √k is missing: 4 releases, each calibrated as if it were the only one (μ = 2/4, not 1/4)
MISSING_SQRT = """program MissingSqrt;
input q : real[4]; adjacent q : all in [-1, 1]; claim 1, 0.00001;
return q[0] + gauss(4), q[1] + gauss(4), q[2] + gauss(4), q[3] + gauss(4);"""


def test_too_little_noise_refuted_with_the_exact_profile() -> None:
    r = verify(PROGRAMS / "gaussian_bad_sigma.dp")
    assert r.verdict == "REFUTED" and r.witness is not None
    w = r.witness
    assert w.delta_enclosure is not None and w.claim_delta == Fraction(1, 100_000)
    lo, hi = w.delta_enclosure
    # the optimal event reaches the Gaussian profile δ_μ(ε) (Balle & Wang 2018), μ = 1, ε = 1
    assert lo <= Fraction(gdp_delta(1.0, 1.0)) * (1 + Fraction(1, 10**9)) and hi - lo < 1e-20
    assert float(lo) == pytest.approx(0.1269367, rel=1e-6)
    assert w.x != w.x_prime and "≥" in w.event and "proven enclosures" in w.describe()
    assert w.to_json()["exact"] == "proven enclosure"


def test_sensitivity_two_claimed_as_one() -> None:
    r = verify(PROGRAMS / "gaussian_sum_bad_sensitivity.dp")
    assert r.verdict == "REFUTED" and r.witness is not None and r.sizes == 1
    w = r.witness
    assert w.delta_enclosure is not None
    assert float(w.delta_enclosure[0]) == pytest.approx(gdp_delta(0.5, 1.0), rel=1e-6)
    assert {w.x["d"][0], w.x_prime["d"][0]} == {Fraction(-1), Fraction(1)}  # |Δ| = 2


def test_missing_sqrt_over_four_outputs() -> None:
    w, note = refute_gaussian(parse_program(MISSING_SQRT), [1])
    assert w is not None, note
    assert w.delta_enclosure is not None and w.event_lin is not None
    assert float(w.delta_enclosure[0]) == pytest.approx(gdp_delta(0.5, 1.0), rel=1e-6)
    weights, _ = w.event_lin
    assert len(weights) == 4  # the event is a half-space across all four outputs


def test_private_programs_are_not_refuted() -> None:
    # wrong variant guarded against: the same σ with sensitivity 1 is (1, 1e-5)-DP
    good = (PROGRAMS / "gaussian_sum_bad_sensitivity.dp").read_text(encoding="utf-8")
    good = good.replace("in [-1, 1];", "in [0, 1];").replace("one in [-2, 2]", "one in [-1, 1]")
    assert refute_gaussian(parse_program(good), [1, 2])[0] is None
    assert verify(good, n=2).verdict == "PROVED"
    src = (PROGRAMS / "gaussian.dp").read_text(encoding="utf-8")
    assert refute_gaussian(parse_program(src), [1])[0] is None


def test_claim_at_the_boundary_is_decided_by_the_enclosure() -> None:
    # δ claimed just above / just below the true δ_μ(ε): only a proven enclosure separates them
    base = (PROGRAMS / "gaussian_bad_sigma.dp").read_text(encoding="utf-8")
    true = 0.12693673750664395  # δ_1(1) to ~17 digits; the enclosure is ~1e-29 wide
    above = base.replace("claim 1, 0.00001;", f"claim 1, {true + 1e-13:.17f};")
    below = base.replace("claim 1, 0.00001;", f"claim 1, {true - 1e-13:.17f};")
    assert refute_gaussian(parse_program(above), [1])[0] is None
    assert refute_gaussian(parse_program(below), [1])[0] is not None
