"""All-sizes proofs: invariants and rules in the proof text, and no all-sizes proof of a bug."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("z3")
pytest.importorskip("lark")

from dpcert.verify import parse_program
from dpcert.verify.induction import AllSizesProof, prove_all_sizes

PROGRAMS = Path(__file__).resolve().parents[2] / "examples" / "programs"


def _prove(name: str, seconds: float = 60.0) -> AllSizesProof | str:
    prog = parse_program((PROGRAMS / f"{name}.dp").read_text(encoding="utf-8"), name=name)
    try:
        return prove_all_sizes(prog, time.monotonic() + seconds)
    except TimeoutError:
        return "timeout"


def test_svt_invariant_counts_positive_answers() -> None:
    p = _prove("svt")
    assert isinstance(p, AllSizesProof)
    assert "count⟨1⟩ ≤ 1" in p.invariant  # at most c positive answers so far
    assert any("rho⟨2⟩ − rho⟨1⟩" in t for t in p.invariant)  # the threshold shift
    assert "count" in p.cost  # cost ≤ eps/2 + count·eps/2
    assert "Lap" in p.text and "While" in p.text and "Conseq" in p.text


def test_noisy_max_splits_at_the_released_index() -> None:
    p = _prove("noisy_max")
    assert isinstance(p, AllSizesProof)
    assert "[i > p]" in p.cost  # only the winner's noise is shifted
    assert "i > p ⇒ best⟨2⟩ = best⟨1⟩" in p.invariant


def test_changed_index_is_symbolic_for_one_adjacency() -> None:
    p = _prove("dummysum_fresh")
    assert isinstance(p, AllSizesProof)
    assert "symbolic index p" in p.text


def test_lyu_alg2_redraw_after_every_positive_answer() -> None:
    p = _prove("svt_alg2")
    assert isinstance(p, AllSizesProof)
    # the draw after the last ⊤ is dead: shifted only while the loop goes on ...
    assert any("if the loop goes on" in t for t in p.shifts)
    assert "[count < c] ⇒ rho⟨2⟩ − rho⟨1⟩ ≥ 1" in p.invariant
    # ... and paid by the indicator of the loop guard in the potential
    assert "[count < c]" in p.cost and "potential" in p.cost


def test_lyu_alg2_with_a_cheaper_redraw_is_not_proved() -> None:
    src = (PROGRAMS / "svt_alg2.dp").read_text(encoding="utf-8")
    bad = src.replace("    rho := lap(2 * c / eps);", "    rho := lap(c / eps);")
    assert bad != src  # costs eps/4 + (eps/4 + eps/2) + eps/4 = 1.25 eps
    try:
        r = prove_all_sizes(parse_program(bad), time.monotonic() + 5.0)
    except TimeoutError:
        r = "timeout"
    assert not isinstance(r, AllSizesProof)


def test_smart_sum_pays_the_block_noise_later() -> None:
    p = _prove("smart_sum")
    assert isinstance(p, AllSizesProof)
    # 2·[i > p] − |s⟨2⟩ − s⟨1⟩|: the block's pending difference is paid when the block closes
    assert "2·[i > p]" in p.cost and "|s⟨2⟩ − s⟨1⟩|" in p.cost
    assert "i ≤ p ⇒ s⟨2⟩ = s⟨1⟩" in p.invariant


def test_gaussian_sum_bounds_mu_squared_by_induction() -> None:
    p = _prove("gaussian_sum")
    assert isinstance(p, AllSizesProof)
    assert "μ² = Σ s²/σ²" in p.cost and "ρ = 1/50" in p.cost and "Balle & Wang" in p.cost
    assert "s⟨2⟩ − s⟨1⟩ ≤ 1" in p.invariant
    assert "(1, 1/1000000)-DP for every size" in p.text


def test_gaussian_sum_clipped_by_data_branches() -> None:
    # branches on the data only: each run's path and state are functions of its input, so the
    # shift of the final sample is a function of (x, x'); the clip bounds it by 1, not 2
    p = _prove("gaussian_sum_clip")
    assert isinstance(p, AllSizesProof) and "≤ 1/25 at exit" in p.cost
    assert "s⟨2⟩ − s⟨1⟩ ≤ 1" in p.invariant
    bad = _prove("gaussian_sum_clip_bad")
    assert isinstance(bad, str) and "μ² ≤ 4/25" in bad


@pytest.mark.parametrize("name", ["dummysum_fresh_bad", "noisy_max_value", "svt_no_query_noise",
                                  "histogram_bad_scale", "svt_never_halts", "bad_gap_svt",
                                  "smart_sum_bad", "gaussian_vector_bad"])
def test_broken_programs_have_no_all_sizes_proof(name: str) -> None:
    assert not isinstance(_prove(name, seconds=8.0), AllSizesProof)


def test_mean_divides_by_the_size_for_sizes_from_one() -> None:
    p = _prove("mean")
    assert isinstance(p, AllSizesProof)
    assert "every size n ≥ 1" in p.text  # s / n is undefined at n = 0
    assert "i ≤ p ⇒ s⟨2⟩ = s⟨1⟩" in p.invariant


def test_mean_with_the_noise_not_scaled_is_not_proved() -> None:
    src = (PROGRAMS / "mean.dp").read_text(encoding="utf-8")
    for bad in ("s + lap(1 / (n * eps))", "s / n + lap(1 / (2 * n * eps))"):
        prog = parse_program(src.replace("s / n + lap(1 / (n * eps))", bad))
        assert isinstance(prove_all_sizes(prog, time.monotonic() + 30), str), bad


def test_outside_the_fragment_says_why() -> None:
    r = _prove("laplace")
    assert isinstance(r, str) and "no input of unknown size" in r
