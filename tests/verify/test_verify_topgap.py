"""The free-gap argmax rule: noisy max with gap proved for all sizes, its broken variants not."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("z3")
pytest.importorskip("lark")

from dpcert.verify import parse_program, verify
from dpcert.verify.induction import AllSizesProof, prove_all_sizes
from dpcert.verify.loopshape import loop_shape
from dpcert.verify.topgap import prove_top_gap

PROGRAMS = Path(__file__).resolve().parents[2] / "examples" / "programs"
GAP = (PROGRAMS / "noisy_max_gap.dp").read_text(encoding="utf-8")


def _prove(src: str, seconds: float = 30.0) -> AllSizesProof | str:
    try:
        return prove_all_sizes(parse_program(src), time.monotonic() + seconds)
    except TimeoutError:
        return "timeout"


def _rule(src: str) -> object:
    prog = parse_program(src)
    return prove_top_gap(prog, loop_shape(prog), time.monotonic() + 30)


def test_noisy_max_gap_proof_shows_the_invariants_and_the_rule() -> None:
    p = _prove(GAP)
    assert isinstance(p, AllSizesProof)
    assert "free-gap argmax" in p.text and "[all sizes]" in p.text
    assert any("sq = max_(j<i, j≠best) vⱼ" in t for t in p.invariant)  # runner-up
    assert any("m⟨2⟩ − m⟨1⟩ ∈ [-1, 1]" in t for t in p.invariant)  # |M' − M| ≤ 1
    assert "η⟨2⟩ = η⟨1⟩ − Δq[w] + D" in p.shifts[0]
    assert p.cost == "eps"  # 2 · eps/2
    assert "same gap" in p.text


def test_monotone_queries_need_only_lap_one_over_eps() -> None:
    p = _prove((PROGRAMS / "noisy_max_gap_monotone.dp").read_text(encoding="utf-8"))
    assert isinstance(p, AllSizesProof) and "m⟨2⟩ − m⟨1⟩ ∈ [0, 1]" in p.invariant[2]


def test_lap_one_over_eps_without_monotonicity_is_not_proved() -> None:
    r = _prove((PROGRAMS / "noisy_max_gap_bad.dp").read_text(encoding="utf-8"))
    assert isinstance(r, str) and "2·eps" in r and "may exceed the claim eps" in r


def test_one_changed_query_shifts_the_winner_by_at_most_one() -> None:
    one = GAP.replace("all in [-1, 1]", "one in [-1, 1]")
    assert isinstance(_prove(one.replace("lap(2 / eps)", "lap(1 / eps)")), AllSizesProof)
    assert isinstance(_prove(one.replace("lap(2 / eps)", "lap(1 / (2 * eps))")), str)


def test_equivalent_bodies_are_accepted() -> None:
    # non-strict comparisons (ties have probability 0) and a public offset of the scores
    ge = GAP.replace("x > bq", "x >= bq").replace("x > sq", "x >= sq")
    assert isinstance(_prove(ge), AllSizesProof)
    off = GAP.replace("q[i] + lap(2 / eps)", "q[i] + 3 + lap(2 / eps)")
    assert isinstance(_prove(off), AllSizesProof)


@pytest.mark.parametrize("src", [
    GAP.replace("return best, bq - sq;", "return best, bq - sq, bq;"),  # the max value too
    GAP.replace("sq := bq;\n", "sq := x;\n"),  # a new maximum forgets the old one
    GAP.replace("i == 1 || x > sq", "x > sq"),  # the runner-up misses v₁ < 0
    GAP.replace("  } else {\n    if (i == 1 || x > sq) {\n      sq := x;\n    }\n  }",
                "  }"),  # the gap to the previous maximum, not to the runner-up
    GAP.replace("q[i] + lap(2 / eps)", "q[i] + q[i] + lap(2 / eps)"),  # sensitivity 2
    GAP.replace("q[i] + lap(2 / eps)", "q[i] + lap(4 / eps) + lap(4 / eps)"),  # two samples
    GAP.replace("lap(2 / eps)", "expo(2 / eps)"),  # one-sided noise: not this rule
])
def test_the_rule_does_not_apply_to_other_programs(src: str) -> None:
    assert _rule(src) is None


def test_noisy_max_without_gap_keeps_its_own_proof() -> None:
    src = (PROGRAMS / "noisy_max.dp").read_text(encoding="utf-8")
    assert _rule(src) is None
    p = _prove(src)
    assert isinstance(p, AllSizesProof) and "[i > p]" in p.cost


def test_broken_gap_is_refuted_with_an_exact_witness() -> None:
    r = verify(PROGRAMS / "noisy_max_gap_bad.dp")
    assert r.verdict == "REFUTED" and r.witness is not None and r.witness.n == 2
    assert r.witness.loss > 1.5  # Lap(1/eps) gap with a shift of 2: loss up to 2·eps


def test_bounded_mode_uses_the_free_gap_rule() -> None:
    # the per-size templates cannot align a released gap at n = 3; the rule covers every n
    r = verify(PROGRAMS / "noisy_max_gap.dp", n=3)
    assert r.verdict == "PROVED" and r.sizes == "all" and r.bounded_n is None
    assert r.proof is not None and "free-gap argmax" in r.proof
    assert verify(PROGRAMS / "noisy_max_gap_bad.dp", n=2).verdict == "REFUTED"
