"""Bounded proof search: the cost check over the declared parameter ranges (issue 46)."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("z3")
pytest.importorskip("lark")

from dpcert.verify import parse_program, verify
from dpcert.verify.api import _bounded, _prove_all
from dpcert.verify.search import STAGES

#: a histogram with noise scale ``eps / k``: cost k/eps ≤ eps holds iff eps ≥ √k
HIST = """
input h : int[n];
adjacent h : one in [-1, 1];
param eps {rng};
claim eps;
r := [];
for i in 0 .. n {{
  r := r ++ [h[i] + lap({scale})];
}}
return r;
"""


def _search(rng: str, scale: str, n: int = 3) -> str:
    prog = parse_program(HIST.format(rng=rng, scale=scale))
    res = _prove_all(prog, list(range(n, 0, -1)), n, time.monotonic() + 60, None, STAGES)
    return res if isinstance(res, str) else res.verdict


@pytest.mark.parametrize("rng", ["in (1, 10)", "> 1", "in (2, 3)"])
def test_histogram_with_eps_above_one_is_proved_at_every_size(rng: str) -> None:
    # Lap(eps) costs 1/eps, a monomial the claim eps lacks: the total is checked over the range
    assert _search(rng, "eps") == "PROVED"
    prog = parse_program(HIST.format(rng=rng, scale="eps"))
    r = _bounded(prog, 3, time.monotonic() + 60, None, "eps", 3)
    assert (r.verdict, r.sizes) == ("PROVED", 3)
    assert r.proof is not None and "eps^-1" in r.proof


@pytest.mark.parametrize(("rng", "scale"), [("in (1, 10)", "eps / 2"),  # needs eps ≥ √2
                                            ("in (0.5, 10)", "eps"),
                                            ("> 0", "eps")])
def test_wrong_ranges_are_not_proved_and_are_refuted(rng: str, scale: str) -> None:
    # the synthesis sees one parameter point (inside the range, where the cost holds for
    # "eps / 2"); the nonlinear check over the whole range must reject the alignment
    assert _search(rng, scale).startswith("n = 3: no alignment")
    r = verify(HIST.format(rng=rng, scale=scale), n=3)
    assert r.verdict == "REFUTED"
    assert r.witness is not None and r.witness.loss > r.witness.claim
