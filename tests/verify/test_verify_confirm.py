"""``--confirm``: a refutation re-checked by running the program with the exact samplers."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

pytest.importorskip("z3")
pytest.importorskip("lark")

from dpcert.cli.main import main
from dpcert.errors import InvalidParameter
from dpcert.samplers import InsecureSeededSource
from dpcert.verify import parse_program, verify
from dpcert.verify.confirm import confirm, measure, witness_event
from dpcert.verify.confirm_events import Candidate, Part
from dpcert.verify.refute import Witness
from dpcert.verify.symexec import unroll

PROGRAMS = Path(__file__).resolve().parents[2] / "examples" / "programs"


def _src(name: str) -> str:
    return (PROGRAMS / f"{name}.dp").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["noisy_max_value", "svt_no_query_noise", "histogram_bad_scale"])
def test_refutation_confirmed_by_sampling(name: str) -> None:
    r = verify(_src(name))
    assert r.verdict == "REFUTED" and r.witness is not None
    c = confirm(parse_program(_src(name)), r.witness, samples=50_000,
                source=InsecureSeededSource(7))
    assert c.confirmed and c.epsilon_lower > r.witness.claim and c.needed_draws is None
    # the chosen event's exact loss is below the witness's (the witness maximises the loss)
    assert c.epsilon_lower <= r.witness.loss + 1e-9


def test_rare_witness_event_replaced_by_a_confirmable_one() -> None:
    # dummysum_fresh_bad at n = 2: the refuter's event (both outputs ≥ 6) has P ≈ 3e-5, so
    # 20 000 runs see it about once; the chosen event (both outputs below the centres) has the
    # same loss 2ε but P = 1/4.  Wrong variant: measuring the refuter's own event fails.
    prog = parse_program(_src("dummysum_fresh_bad"))
    r = verify(_src("dummysum_fresh_bad"), n=2)
    w = r.witness
    assert w is not None and w.p < 1e-4
    c = confirm(prog, w, samples=20_000, source=InsecureSeededSource(1))
    assert c.confirmed and c.p > 0.1 and c.epsilon_lower > 1.8
    (k, _), bound, _ = measure(unroll(prog, 2), witness_event(w), w, 20_000, 0.05,
                             source=InsecureSeededSource(1))
    assert not bound > w.claim and k < 10


def test_budget_too_small_is_reported_with_the_draws_that_suffice() -> None:
    prog = parse_program(_src("noisy_max_value"))
    w = verify(_src("noisy_max_value"), n=3).witness
    assert w is not None
    c = confirm(prog, w, samples=100, source=InsecureSeededSource(2))
    assert not c.confirmed and c.needed_draws is not None and c.needed_draws > 100
    assert "draws per input would suffice" in c.describe()
    again = confirm(prog, w, samples=4 * c.needed_draws, source=InsecureSeededSource(2))
    assert again.confirmed


def _laplace_witness() -> tuple[object, Witness, Candidate]:
    # a CORRECT program: Laplace(1/eps), sensitivity 1, claim eps.  On "output ≥ 1" the ratio
    # of x = [1] to x' = [0] is exactly e^eps: the loss equals the claim, never exceeds it.
    prog = parse_program(_src("laplace"))
    u = unroll(prog, 1)
    x = {"q": (Fraction(1),)}
    y = {"q": (Fraction(0),)}
    w = Witness(1, {"eps": Fraction(1)}, x, y, "", 0.0, 0.0, 1.0, 1.0)
    ev = Candidate("output ≥ 1", (Part((0,), ((0, ">=", Fraction(1)),)),), 0.18, 0.068, False)
    return u, w, ev


def test_correct_program_is_never_confirmed_broken() -> None:
    # soundness: at confidence 1 - 1e-7 the bound exceeds the true loss (= the claim) with
    # probability < 1e-7 per seed.  Wrong variant: the point estimate ln(k/k') instead of the
    # Clopper–Pearson bound "confirms" the correct program on some of the same seeds.
    u, w, ev = _laplace_witness()
    estimates = []
    for seed in range(6):
        (k, k2), bound, how = measure(u, ev, w, 20_000, 1e-7, source=InsecureSeededSource(seed))
        assert how == "interpreter"
        assert not bound > w.claim, (seed, k, k2, bound)
        estimates.append(math.log(k / k2))
    assert any(e > w.claim for e in estimates)


def test_gaussian_refutation_confirmed_with_delta() -> None:
    src = _src("gaussian_bad_sigma")
    r = verify(src)
    assert r.verdict == "REFUTED" and r.witness is not None
    c = confirm(parse_program(src), r.witness, samples=20_000, source=InsecureSeededSource(3))
    assert c.delta == pytest.approx(1e-5) and c.confirmed and c.epsilon_lower > 1


def test_cli_confirm_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["verify", str(PROGRAMS / "svt_no_query_noise.dp"), "--json", "--confirm",
                 "--samples", "20000", "--seed", "3"])
    assert code == 1
    d = json.loads(capsys.readouterr().out)
    c = d["confirmation"]
    assert c["confirmed"] is True and c["budget"] == 20_000 and c["confidence"] == 0.95
    assert 1000 <= c["draws"] <= 20_000 and c["runner"] == "interpreter"
    assert c["epsilon_lower"] > c["claim"] and c["needed_draws"] is None
    assert d["witness"]["event"] and d["witness"]["x"] and d["sizes"] == 2


def test_bad_samples() -> None:
    r = verify(_src("svt_no_query_noise"))
    assert r.witness is not None
    with pytest.raises(InvalidParameter, match="samples=5"):
        confirm(parse_program(_src("svt_no_query_noise")), r.witness, samples=5)
    with pytest.raises(InvalidParameter, match=r"confidence=1\.5"):
        confirm(parse_program(_src("svt_no_query_noise")), r.witness, confidence=1.5)


def test_cli_rejects_bad_budget_before_verifying(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(PROGRAMS / "svt_no_query_noise.dp"), "--confirm",
                 "--samples", "5"]) == 2
    assert "--samples=5" in capsys.readouterr().err


def test_fallback_to_the_unrolled_paths() -> None:
    # indexing a list is not run by the interpreter: the confirmation says it used the paths
    src = ("input q : real[1]; adjacent q : all in [-1, 1]; param eps > 0; claim eps;"
           " r := [q[0] + lap(1/(2*eps))]; return r[0];")
    r = verify(src)
    assert r.witness is not None
    c = confirm(parse_program(src), r.witness, samples=20_000, source=InsecureSeededSource(4))
    assert c.confirmed and c.runner == "unrolled paths"
