"""``dpcert verify``: output and exit codes 0 PROVED / 1 REFUTED / 2 UNKNOWN / 3 error."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("z3")
pytest.importorskip("lark")

from dpcert.cli.main import main

PROGRAMS = Path(__file__).resolve().parents[2] / "examples" / "programs"


def test_proved_exit_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["verify", str(PROGRAMS / "laplace.dp"), "--smt-out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("PROVED: Laplace") and "Conseq" in out
    assert list(tmp_path.glob("*.smt2"))


def test_refuted_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["verify", str(PROGRAMS / "dummysum_fresh_bad.dp"), "--n", "2"])
    assert code == 1
    out = capsys.readouterr().out
    assert "REFUTED" in out and "x' :" in out and "privacy loss" in out


def test_unknown_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    """Not proved (REFUTED or UNKNOWN) is a failed check: 1; --json tells them apart."""
    assert main(["verify", str(PROGRAMS / "noisy_max.dp"), "--n", "10", "--timeout", "1"]) == 1
    out = capsys.readouterr().out
    assert "UNKNOWN" in out and "time limit" in out


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["verify", str(PROGRAMS / "svt_no_query_noise.dp"), "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "REFUTED" and isinstance(d["sizes"], int)
    assert d["witness"]["loss"] == "inf" and "event" in d["witness"]
    assert main(["verify", str(PROGRAMS / "histogram.dp"), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "PROVED" and d["sizes"] == "all" and "proof" in d


def test_invalid_input_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prog = tmp_path / "bad.dp"
    prog.write_text("input q : real[1];\nadjacent q : one any;\nclaim 1;\nreturn q[0] +;\n",
                    encoding="utf-8")
    assert main(["verify", str(prog)]) == 2
    assert "line 4" in capsys.readouterr().err
    assert main(["verify", str(tmp_path / "missing.dp")]) == 2


def test_json_grows_sizes_to_the_smallest_broken_one(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    # BadGapSVT is (n/4)·eps-DP: private for n ≤ 4, refuted at n = 5 with loss exactly 1.25·eps
    assert main(["verify", str(PROGRAMS / "bad_gap_svt.dp"), "--json", "--timeout", "100"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "REFUTED" and d["sizes"] == 5
    w = d["witness"]
    assert w["n"] == 5 and abs(w["loss"] - 1.25) < 1e-6 and w["event"]
    assert len(w["x"]["q"]) == 5 and w["x"] != w["x_prime"]
