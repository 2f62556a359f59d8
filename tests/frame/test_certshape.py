"""``dpcert.frame.certshape`` and ``dpcert certificate check`` on hostile files: not JSON,
wrong types, huge numbers, deep nesting, missing and extra fields all give a typed
``CertificateError`` (CLI exit code 2, one ``dpcert: error:`` line), never a traceback."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from _bound import edit, released
from dpcert.cli.main import main
from dpcert.errors import InvalidParameter
from dpcert.frame.certify import check_certificate
from dpcert.frame.certshape import MAX_DEPTH, CertificateError, load_certificates


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return released(tmp_path_factory.mktemp("certshape"))[0]


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def apply(c: dict[str, Any]) -> None:
        *head, last = path.split(".")
        d: Any = c
        for k in head:
            d = d[k]
        del d[last]
    return apply


HOSTILE: dict[str, Callable[[dict[str, Any]], None]] = {
    "plan as a list": edit("plan", []),
    "max_groups as a string": edit("plan.max_groups", "2"),
    "max_groups huge": edit("plan.max_groups", 10**30),
    "max_groups boolean": edit("plan.max_groups", True),
    "steps as an object": edit("steps", {}),
    "a step as a number": edit("steps.0", 3),
    "an aggregate with an unknown argument": edit("plan.aggregates.0.evil", 1),
    "an unknown aggregate": edit("plan.aggregates.0.kind", "Exec"),
    "bounds of strings": edit("plan.aggregates.1.bounds", ["a", "b"]),
    "budget value nonsense": edit("budget.value", "1/0"),
    "budget measure unknown": edit("budget.measure", "RenyiDP"),
    "schema type as a list": edit("schema.x", ["float"]),
    "missing charge": _drop("charge"),
    "missing binding.dataset": _drop("binding.dataset"),
    "missing plan": _drop("plan"),
    "extra top-level field": edit("verified", True),
    "extra binding field": edit("binding.trusted", True),
    "charge.ledger position as a string": edit("charge.ledger.position", "1"),
    "a filter record of two kinds": edit("filters.0", {"sql": "x > 1", "polars_json": "{}"}),
    "deep nesting": edit("versions.deep", json.loads("[" * (MAX_DEPTH + 5)
                                                     + "]" * (MAX_DEPTH + 5))),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_certificate_is_a_typed_error(cert: dict[str, Any], name: str,
                                                tmp_path: Path, capsys: Any) -> None:
    bad = copy.deepcopy(cert)
    HOSTILE[name](bad)
    text = json.dumps(bad)
    with pytest.raises(CertificateError):
        certs = load_certificates(text)
        check_certificate(certs[""])
    f = tmp_path / "bad.json"
    f.write_text(text)
    assert main(["certificate", "check", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpcert: error: CertificateError") and "Traceback" not in err


@pytest.mark.parametrize("text", [
    "not json", "", "[1, 2]", "3", '"a string"', '{"format": NaN}', '{"a": Infinity}',
    "[" * 100_000 + "]" * 100_000, '{"x": 1' + "0" * 5000 + "}", "\udcff", "{}",
    '{"a": {"format": 1}}',
])
def test_files_that_are_not_certificates(text: str, tmp_path: Path, capsys: Any) -> None:
    with pytest.raises(CertificateError):
        load_certificates(text)
    f = tmp_path / "x.json"
    f.write_bytes(text.encode("utf-8", "surrogateescape"))
    assert main(["certificate", "check", str(f)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_an_unknown_column_type_fails_the_check(cert: dict[str, Any]) -> None:
    bad = copy.deepcopy(cert)
    bad["schema"]["x"] = "complex"
    res = check_certificate(bad)
    assert not res.ok and any("allow-list" in m for m in res.messages)


def test_a_certificate_error_is_an_invalid_parameter() -> None:
    assert issubclass(CertificateError, InvalidParameter)


def test_a_missing_file_or_ledger_is_invalid_input(cert: dict[str, Any], tmp_path: Path,
                                                   capsys: Any) -> None:
    assert main(["certificate", "check", str(tmp_path / "none.json")]) == 2
    f = tmp_path / "c.json"
    f.write_text(json.dumps(cert))
    assert main(["certificate", "check", str(f), "--ledger", str(tmp_path / "no.sqlite")]) == 2
    assert "is not a ledger file" in capsys.readouterr().err


def test_a_release_certificate_from_before_the_binding_is_named(cert: dict[str, Any]) -> None:
    old = {k: v for k, v in cert.items() if k not in ("charge", "binding", "filters")}
    with pytest.raises(CertificateError, match="before dpcert bound certificates"):
        load_certificates(json.dumps(old))
