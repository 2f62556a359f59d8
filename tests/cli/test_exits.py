"""Exit codes (0 success; 1 refused or check failed; 2 usage or invalid input; 3 partially
charged), documented in ``--help``; ``--json`` prints one JSON object, errors included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dpcert.cli.exits import EPILOG, exit_code
from dpcert.cli.main import build_parser, main
from dpcert.errors import (
    AuditFailed,
    BindingMismatch,
    BudgetExceeded,
    InvalidParameter,
    ReleaseFailed,
    UnsafeExpression,
)

PROGRAMS = Path(__file__).resolve().parents[2] / "examples" / "programs"


@pytest.mark.parametrize(("err", "code"), [
    (BudgetExceeded, 1), (BindingMismatch, 1), (AuditFailed, 1), (InvalidParameter, 2),
    (UnsafeExpression, 2), (ReleaseFailed, 3)])
def test_each_error_has_its_code(err: type[Exception], code: int) -> None:
    assert exit_code(err("x")) == code  # type: ignore[arg-type]


def test_a_ledger_altered_outside_dpcert_is_a_refusal() -> None:
    from dpcert.accounting.ledger import LedgerIntegrityError

    assert exit_code(LedgerIntegrityError("x")) == 1


@pytest.mark.parametrize("command", [[], ["release"], ["budget"], ["budget", "init"],
                                     ["certificate"], ["certificate", "check"], ["audit"],
                                     ["verify"]])
def test_help_documents_the_exit_codes(command: list[str]) -> None:
    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args([*command, "--help"])
    for action in [parser, *_subparsers(parser, command)]:
        assert action.epilog == EPILOG


def _subparsers(parser: Any, command: list[str]) -> list[Any]:
    out = []
    for name in command:
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        parser = sub.choices[name]
        out.append(parser)
    return out


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["release"])
    assert e.value.code == 2
    assert main([]) == 2


def test_json_on_every_release_outcome(curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert curator.release(curator.spec(eps=1.5), "--json") == 0
    ok = json.loads(capsys.readouterr().out)
    assert ok["ok"] and ok["exit_code"] == 0 and "by_region" in ok["queries"]
    assert ok["ledger"]["dataset"] == "people" and ok["spent"].startswith("ε = 1.5")
    assert curator.release(curator.spec(eps=1.5), "--json") == 1
    refused = json.loads(capsys.readouterr().out)
    assert refused["status"] == "refused" and refused["error"]["type"] == "BudgetExceeded"
    assert curator.release(curator.spec(col="salary"), "--json") == 2
    invalid = json.loads(capsys.readouterr().out)
    assert invalid["status"] == "invalid" and "salary" in invalid["error"]["message"]
    assert curator.release(curator.spec(eps=0.25), "--json", "--dry-run") == 0
    dry = json.loads(capsys.readouterr().out)
    assert dry["dry_run"] and dry["queries"][0]["would_spend"].startswith("ε = 0.25")
    assert "--engine = polars" in dry["defaults"]
    assert len(curator.history()) == 1


def test_json_on_budget(curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["budget", "show", curator.ledger, "people", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["binding"]["privacy_unit"] == "pid" and shown["charges"] == 0
    assert shown["binding"]["location"] == str((curator.root / "people.csv").resolve())
    assert shown["binding"]["fingerprint"].startswith("sha256:")
    assert main(["budget", "history", curator.ledger, "people", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["charges"] == []
    assert main(["budget", "init", curator.ledger, "z", "--unbound", "--rho", "0.5",
                 "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["binding"] is None and made["rule"] == "zcdp"
    assert main(["budget", "show", curator.ledger, "nope", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["status"] == "invalid"


def test_json_on_certificate(curator: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert curator.release(curator.spec()) == 0
    capsys.readouterr()
    cert = curator.out / "by_region.certificate.json"
    assert main(["certificate", "check", str(cert), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["ok"] and res["status"] == "OK" and res["exit_code"] == 0
    bad = curator.root / "bad.json"
    bad.write_text("{")
    assert main(["certificate", "check", str(bad), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["type"] == "CertificateError"


def test_json_on_verify_and_audit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(PROGRAMS / "histogram.dp"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "PROVED"
    assert main(["audit", "no_colon", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["status"] == "invalid"
