"""Symbolic execution of loop blocks: values the all-sizes prover cannot use are refused with a
reason (the program is outside its fragment), never a crash inside z3."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("z3")
pytest.importorskip("lark")

from dpcert.verify import parse_program
from dpcert.verify.induction import prove_all_sizes

MEAN = Path(__file__).resolve().parents[2] / "examples" / "programs" / "mean.dp"


def _reason(old: str, new: str) -> object:
    src = MEAN.read_text(encoding="utf-8")
    assert old in src
    return prove_all_sizes(parse_program(src.replace(old, new)), time.monotonic() + 30)


def test_clamp_of_a_truth_value_is_outside_the_fragment() -> None:
    r = _reason("s := s + clamp(d[i], 0, 1);", "s := s + clamp(true, 0, 1);")
    assert r == "outside the all-sizes fragment: True is used as a number"


def test_an_input_read_before_the_loop_is_outside_the_fragment() -> None:
    r = _reason("s := 0;", "s := d[i];")
    assert r == "outside the all-sizes fragment: line 9: d is read outside the loop"
