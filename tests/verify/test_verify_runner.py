"""The vectorised interpreter behind ``--confirm``, against the exact output probabilities."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("lark")

from dpcert.samplers import InsecureSeededSource
from dpcert.verify import parse_program
from dpcert.verify.runner import RunnerUnsupported, run_batch

PROGRAMS = Path(__file__).resolve().parents[2] / "examples" / "programs"


def _prog(name: str) -> object:
    return parse_program((PROGRAMS / f"{name}.dp").read_text(encoding="utf-8"))


def _close(freq: float, p: float, n: int) -> bool:
    # 6 standard deviations (+ 1/n): a correct sampler fails with probability < 1e-8
    return abs(freq - p) <= 6 * math.sqrt(p * (1 - p) / n) + 1 / n


def test_noisy_max_value_lower_tail() -> None:
    # max of q[i] + Lap(2) over q = [0, 0, 0] is <= 0 with probability (1/2)^3
    prog = _prog("noisy_max_value")
    n = 40_000
    out = run_batch(prog, 3, {"q": (Fraction(0),) * 3}, {"eps": Fraction(1)}, n,  # type: ignore[arg-type]
                    InsecureSeededSource(5))
    assert (out.length == 1).all() and not out.is_bool[0].any()
    assert _close(float(np.mean(out.values[0] <= 0)), 0.125, n)


def test_svt_halts_after_one_positive_answer() -> None:
    # BadGapSVT: lists grow under masks; after the first release the run leaves the loop
    prog = _prog("bad_gap_svt")
    n = 40_000
    out = run_batch(prog, 5, {"q": (Fraction(-1),) * 5},  # type: ignore[arg-type]
                    {"eps": Fraction(1), "T": Fraction(0)}, n, InsecureSeededSource(6))
    assert set(out.length.tolist()) <= {1, 2, 3, 4, 5}
    for j in range(len(out.values)):
        released = (out.length == j + 1) & ~out.is_bool[j]
        earlier_false = np.ones(n, dtype=bool)
        for i in range(j):
            earlier_false &= out.is_bool[i] & (out.values[i] == 0)
        assert (released <= earlier_false).all()  # a release only after ⊥ answers
    # P(first answer is ⊥) on q = -1, T = 0: P(ν < ρ + 1) for ν ~ Lap(4), ρ ~ Lap(2)
    # = ∫ f_ρ(r) F_ν(r + 1) dr, computed exactly by the refuter's semantics
    from dpcert.verify.semantics import Lin, region_probability
    from dpcert.verify.symexec import unroll

    u = unroll(prog, 1)  # type: ignore[arg-type]
    rho, nu = sorted(u.noises, key=lambda k: u.noises[k].line)
    p = region_probability(u, [Lin(((nu, 1.0), (rho, -1.0)), -1.0, "<")],
                           {rho: 2.0, nu: 4.0})
    assert p is not None
    assert _close(float(np.mean(out.is_bool[0])), p, n)


def test_list_indexing_is_not_run() -> None:
    prog = parse_program("input q : real[1]; adjacent q : all in [-1, 1]; param eps > 0;"
                         " claim eps; r := [q[0] + lap(1/eps)]; return r[0];")
    with pytest.raises(RunnerUnsupported, match="indexing a list"):
        run_batch(prog, 1, {"q": (Fraction(0),)}, {"eps": Fraction(1)}, 10)
