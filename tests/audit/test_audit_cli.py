"""``dpcert audit`` on a user's callable and ``--self``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from dpcert.cli.main import main

MODULE = '''
import numpy as np
rng = np.random.default_rng(0)
H = 2.0 ** -20
def good(x, n):
    return float(x) + H * np.rint(rng.laplace(0.0, 1.0 / H, n))
def bad(x, n):
    return float(x) + H * np.rint(rng.laplace(0.0, 0.5 / H, n))
def hist(x, n):
    v = np.asarray(x, dtype=float)
    return v + H * np.rint(rng.laplace(0.0, 2.0 / H, (n, v.size)))
'''


def test_cli_audits_a_callable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cli_audit_subject.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["audit", "cli_audit_subject:good", "--claimed-epsilon", "1",
                 "--pair", "0", "1", "--samples", "100000", "--confidence", "0.999999"]) == 0
    assert "→ ok" in capsys.readouterr().out
    assert main(["audit", "cli_audit_subject:bad", "--claimed-epsilon", "1",
                 "--samples", "100000", "--seed", "1"]) == 1
    assert "VIOLATION" in capsys.readouterr().out
    sys.modules.pop("cli_audit_subject", None)


def test_cli_options_match_the_api_and_print_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cli_audit_subject2.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    # a noisy histogram of scale 2 on ℓ1 neighbours at distance 2 is 1.0-DP: ok
    assert main(["audit", "cli_audit_subject2:hist", "--claimed-epsilon", "1",
                 "--input-size", "3", "--adjacency", "l1", "--sensitivity", "2",
                 "--samples", "20000", "--confidence", "0.999999", "--candidates", "1",
                 "--ladder", "0", "--seed", "3", "--json"]) == 0
    captured = capsys.readouterr()
    d = json.loads(captured.out)
    assert d["verdict"] == "ok" and d["candidates"] == 1 and d["claimed_epsilon"] == 1.0
    assert "dpcert audit: search" in captured.err          # progress on stderr
    assert main(["audit", "cli_audit_subject2:good", "--claimed-rho", "0.5", "--samples",
                 "5000", "--quiet", "--seed", "2"]) == 0
    out = capsys.readouterr()
    assert "δ=1e-06" in out.out and out.err == ""
    sys.modules.pop("cli_audit_subject2", None)


def test_cli_workers_refuse_a_shared_stream_and_take_a_worker_init(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cli_audit_subject3.py").write_text(
        MODULE + "def reseed(w):\n    global rng\n    rng = np.random.default_rng([7, w])\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ["audit", "cli_audit_subject3:good", "--claimed-epsilon", "1", "--pair", "0", "1",
            "--samples", "100000", "--confidence", "0.999999", "--workers", "2", "--quiet"]
    assert main(args) == 1   # the module's one generator, forked: the same draws twice
    assert "share one random stream" in capsys.readouterr().err
    assert main([*args, "--worker-init", "cli_audit_subject3:reseed", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "ok" and d["estimate_draws"] == 100_000
    # a worker_init that is no MODULE:CALLABLE, or not callable, is refused by name
    for bad, why in (("no_colon", "worker_init='no_colon' must be MODULE:CALLABLE"),
                     ("cli_audit_subject3:missing", "has no attribute 'missing'"),
                     ("cli_audit_subject3:H", "worker_init=9.5367431640625e-07 must be")):
        assert main([*args, "--worker-init", bad]) == 2
        assert why in capsys.readouterr().err
    sys.modules.pop("cli_audit_subject3", None)


def test_cli_errors_name_the_problem(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "no_colon"]) == 2
    assert "MODULE:CALLABLE" in capsys.readouterr().err


def test_cli_self_quick_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--self", "--quick", "--only", "laplace",
                 "--only", "randomized response (bool)"]) == 0
    out = capsys.readouterr().out
    assert "laplace (int)" in out and "lower bound" in out and "0 violation(s)" in out
    assert main(["audit", "--self", "--quick", "--only", "laplace (int)", "--json",
                 "--seconds", "0.5"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["violations"] == 0 and d["targets"][0]["result"]["verdict"] == "ok"


def test_cli_writes_distribution_plots(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "plots"
    assert main(["audit", "--self", "--quick", "--only", "laplace (int)",
                 "--plot-dir", str(out)]) == 0
    pngs = list(out.glob("*.png"))
    assert len(pngs) == 1 and pngs[0].stat().st_size > 1000
