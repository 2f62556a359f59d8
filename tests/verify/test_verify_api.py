"""The verifier's API: proofs, witnesses, UNKNOWN, SMT output and the optional extras."""

from __future__ import annotations

import dataclasses
import math
import re
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

pytest.importorskip("z3")
pytest.importorskip("lark")

from dpcert.verify import VerificationResult, parse_program, verify
from dpcert.verify._deps import MissingExtra, require_z3
from dpcert.verify.api import _bounded

LAPLACE = """
input q : real[1];
adjacent q : all in [-1, 1];
param eps > 0;
claim eps;
z := q[0] + lap(1 / eps);
return z;
"""


def test_laplace_proof_text() -> None:
    r = verify(LAPLACE)
    assert isinstance(r, VerificationResult)
    assert r.verdict == "PROVED" and r.claim == "eps" and r.bounded_n is None
    assert r.proof is not None
    assert "Lap" in r.proof and "+ (-Δq[0])" in r.proof and "Conseq eps ≤ eps" in r.proof
    with pytest.raises(AttributeError):
        r.verdict = "REFUTED"  # type: ignore[misc]


def test_group_privacy_claim() -> None:
    src = LAPLACE.replace("all in [-1, 1]", "all in [-2, 2]")
    assert verify(src).verdict == "REFUTED"
    assert verify(src.replace("claim eps;", "claim 2 * eps;")).verdict == "PROVED"


def test_noisy_max_shift_is_two() -> None:
    path = Path(__file__).resolve().parents[2] / "examples/programs/noisy_max.dp"
    prog = parse_program(path.read_text(encoding="utf-8"))
    r = _bounded(prog, 2, time.monotonic() + 60, None, "eps", 2)
    assert r.verdict == "PROVED" and r.bounded_n == 2
    assert r.proof is not None and re.search(r"\+ \(-?2\)   cost eps", r.proof)


def test_a_sized_run_reuses_the_all_sizes_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    # the bounded search "does not finish": the all-sizes proof gives the verdict of a run
    # without n; a bounded verdict is returned as it is
    import dpcert.verify.api as api

    path = Path(__file__).resolve().parents[2] / "examples/programs/noisy_max.dp"
    every = verify(path)
    assert verify(path, n=2).sizes == 2  # the bounded proof, when it finishes
    real = api._bounded

    def stalled(prog: object, n: int, *args: object) -> VerificationResult:
        res = real(prog, n, *args)  # type: ignore[arg-type]
        return dataclasses.replace(res, verdict="UNKNOWN", proof=None, reason="time limit")

    monkeypatch.setattr(api, "_bounded", stalled)
    r = verify(path, n=2)
    assert (r.verdict, r.sizes, r.bounded_n) == ("PROVED", "all", None)
    assert r.proof == every.proof and r.proof is not None and "η⟨2⟩ = η⟨1⟩ + 2" in r.proof


@pytest.mark.parametrize(("name", "n"), [("svt_never_halts", 3), ("bad_gap_svt", 2)])
def test_a_program_private_only_for_small_sizes_is_never_proved_for_all(name: str,
                                                                        n: int) -> None:
    # private for n ≤ 4, refuted at n = 5: the all-sizes attempt of a sized run must fail
    r = verify(Path(__file__).resolve().parents[2] / f"examples/programs/{name}.dp", n=n)
    assert r.sizes != "all" and r.verdict in ("PROVED", "UNKNOWN")


def test_refuted_when_the_noise_parameter_is_not_the_claimed_one() -> None:
    src = """
    input q : real[1];
    adjacent q : all in [-1, 1];
    param eps > 0;
    param eps2 > 0;
    claim eps;
    return q[0] + lap(1 / eps2);
    """
    r = verify(src)
    assert r.verdict == "REFUTED" and r.witness is not None
    assert r.witness.params["eps2"] != r.witness.params["eps"]  # the grid moves one parameter


def test_timeout_is_honoured_with_unknown() -> None:
    path = Path(__file__).resolve().parents[2] / "examples/programs/noisy_max.dp"
    r = verify(path, n=10, timeout=1.0)
    assert r.verdict == "UNKNOWN" and r.sizes == 10
    assert r.reason is not None and "time limit" in r.reason


def test_bad_timeout() -> None:
    from dpcert.errors import InvalidParameter

    with pytest.raises(InvalidParameter, match="timeout=0"):
        verify(LAPLACE, timeout=0)


def test_json_of_a_refutation() -> None:
    import json

    r = verify(LAPLACE.replace("lap(1 / eps)", "lap(1 / (2 * eps))"))
    d = json.loads(json.dumps(r.to_json()))
    assert d["verdict"] == "REFUTED" and d["sizes"] == "all"
    w = d["witness"]
    assert w["x"] and w["x_prime"] and w["event"] and w["loss"] == pytest.approx(2.0, rel=1e-9)


def test_output_without_noise_is_refuted() -> None:
    src = LAPLACE.replace("return z;", "return z, q[0];")
    r = verify(src)
    assert r.verdict == "REFUTED" and r.witness is not None
    assert r.witness.loss == float("inf")


def test_smt_out(tmp_path: Path) -> None:
    r = verify(LAPLACE, smt_out=tmp_path / "smt")
    assert r.verdict == "PROVED"
    files = sorted((tmp_path / "smt").glob("*.smt2"))
    assert files and "(check-sat)" in files[0].read_text(encoding="utf-8")


def test_bad_n() -> None:
    from dpcert.errors import InvalidParameter

    with pytest.raises(InvalidParameter, match="n=0"):
        verify(LAPLACE, n=0)


def test_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def fake(name: str, *a: object) -> object:
        if name == "z3":
            raise ImportError("no z3")
        return real(name)

    monkeypatch.setattr(importlib, "import_module", fake)
    with pytest.raises(MissingExtra, match=r"pip install dpcert\[verify\]"):
        require_z3()


def test_import_dpcert_does_not_import_z3_or_lark() -> None:
    code = "import sys, dpcert; print('z3' in sys.modules or 'lark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_witness_at_the_smallest_size() -> None:
    import time

    from dpcert.verify import parse_program
    from dpcert.verify.refute import refute

    # DummySumFreshBad loses n·eps: private at n = 1, broken from n = 2.  Started at n = 3 (as
    # after a failed bounded proof there), the search still reports n = 2.
    src = (Path(__file__).resolve().parents[2] / "examples" / "programs" /
           "dummysum_fresh_bad.dp").read_text(encoding="utf-8")
    w, _ = refute(parse_program(src), 3, time.monotonic() + 60, first=3, vary_params=False)
    assert w is not None and w.n == 2 and abs(w.loss - 2) < 1e-9


def test_delta_claim_of_a_pure_program_is_refuted() -> None:
    src = LAPLACE.replace("claim eps;", "claim eps, 0.01;").replace("1 / eps", "1 / (2 * eps)")
    r = verify(src)
    assert r.verdict == "REFUTED" and r.witness is not None
    w = r.witness
    assert w.claim_delta == Fraction(1, 100)
    assert w.p - math.exp(w.claim) * w.p_prime > 0.01 and w.loss > w.claim
    assert r.to_json()["witness"]["claim_delta"] == 0.01  # type: ignore[index]
    # the same (eps, 0.01) claim with the right scale is PROVED, not refuted
    assert verify(LAPLACE.replace("claim eps;", "claim eps, 0.01;")).verdict == "PROVED"
