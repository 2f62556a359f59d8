"""``dpcert audit`` on a user's callable and ``--self``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dpcert.cli.main import main

MODULE = '''
import numpy as np
rng = np.random.default_rng(0)
def good(x, n):
    return float(x) + rng.laplace(0.0, 1.0, n)
def bad(x, n):
    return float(x) + rng.laplace(0.0, 0.5, n)
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
                 "--samples", "100000"]) == 1
    assert "VIOLATION" in capsys.readouterr().out
    sys.modules.pop("cli_audit_subject", None)


def test_cli_errors_name_the_problem(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "no_colon"]) == 3
    assert "MODULE:CALLABLE" in capsys.readouterr().err


def test_cli_self_quick_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--self", "--quick", "--only", "laplace",
                 "--only", "randomized response (bool)"]) == 0
    out = capsys.readouterr().out
    assert "laplace (int)" in out and "lower bound" in out and "0 violation(s)" in out


def test_cli_writes_distribution_plots(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "plots"
    assert main(["audit", "--self", "--quick", "--only", "laplace (int)",
                 "--plot-dir", str(out)]) == 0
    pngs = list(out.glob("*.png"))
    assert len(pngs) == 1 and pngs[0].stat().st_size > 1000
