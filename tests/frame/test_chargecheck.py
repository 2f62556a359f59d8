"""``dpcert.frame.chargecheck`` and ``dpcert certificate check --ledger``: the ledger confirms a
real certificate's charge (hash in the chain at its position, event, budget, remaining, head),
and refuses every forgery, even with the charge body's hash recomputed."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from _bound import EDITS, lowered_budget, released
from dpcert.accounting.ledger import Ledger
from dpcert.cli.main import main
from dpcert.frame.binding import charge_body_hash
from dpcert.frame.certify import _recompile
from dpcert.frame.chargecheck import charge_mismatches


@pytest.fixture(scope="module")
def bound(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str,
                                                              list[dict[str, Any]]]:
    return released(tmp_path_factory.mktemp("chargecheck"))


def confirm(cert: dict[str, Any], ledger: str) -> list[str]:
    _, budget, m = _recompile(cert)
    return charge_mismatches(cert, ledger, m, budget)


def test_the_ledger_confirms_a_release_and_each_query_of_a_batch(bound: Any) -> None:
    cert, ledger, batch = bound
    assert confirm(cert, ledger) == []
    for c in batch:
        assert confirm(c, ledger) == []
    history = Ledger(ledger, read_only=True).history("people")
    assert [len(s.certificates) for s in history] == [1, 2]
    assert history[0].certificates[0] == cert["charge"]["body_sha256"]
    assert cert["charge"]["ledger"] == {"charge_id": history[0].id, "position": 1, "index": 0}


def test_the_cli_confirms_the_combined_certificate(bound: Any, tmp_path: Path,
                                                   capsys: Any) -> None:
    _, ledger, batch = bound
    f = tmp_path / "certificate.json"
    f.write_text(json.dumps({"a": batch[0], "b": batch[1]}))
    assert main(["certificate", "check", str(f), "--ledger", ledger]) == 0
    out = capsys.readouterr().out
    assert "a: OK" in out and "b: OK" in out and "confirmed in the ledger" in out
    assert main(["certificate", "check", str(f)]) == 0
    assert "internal consistency only" in capsys.readouterr().out
    swapped = tmp_path / "swapped.json"  # a's certificate claims b's place in the batch
    a = copy.deepcopy(batch[0])
    a["charge"]["ledger"]["index"] = 1
    swapped.write_text(json.dumps({"a": a, "b": batch[1]}))
    assert main(["certificate", "check", str(swapped), "--ledger", ledger]) == 1


@pytest.mark.parametrize("name", sorted(EDITS))
def test_every_forgery_is_refused_even_with_its_hash_recomputed(bound: Any,
                                                                 name: str) -> None:
    cert, ledger, _ = bound
    forged = copy.deepcopy(cert)
    EDITS[name](forged)
    forged["charge"]["body_sha256"] = charge_body_hash(forged)
    assert confirm(forged, ledger) != [], name


def test_the_budget_lowered_1000_times_is_refused(bound: Any, tmp_path: Path,
                                                  capsys: Any) -> None:
    cert, ledger, _ = bound
    forged = lowered_budget(cert)
    forged["charge"]["body_sha256"] = charge_body_hash(forged)
    problems = confirm(forged, ledger)
    assert any("does not hold this certificate's charge body hash" in p for p in problems)
    assert any("the ledger charged" in p for p in problems)  # the event differs too
    f = tmp_path / "forged.json"
    f.write_text(json.dumps(forged))
    assert main(["certificate", "check", str(f), "--ledger", ledger]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_a_wrong_position_or_another_ledger_is_refused(bound: Any, tmp_path: Path) -> None:
    cert, ledger, _ = bound
    moved = copy.deepcopy(cert)
    moved["charge"]["ledger"]["position"] = 2
    assert confirm(moved, ledger) != []
    moved["charge"]["ledger"]["position"] = 9
    assert "has 2 charges" in confirm(moved, ledger)[0]
    other, other_ledger, _ = released(tmp_path)  # the same release charged elsewhere
    assert confirm(cert, other_ledger) != []
    assert confirm(other, ledger) != []


def test_an_altered_chain_is_refused(bound: Any, tmp_path: Path) -> None:
    cert, ledger, _ = bound
    copy_path = tmp_path / "copy.sqlite"
    copy_path.write_bytes(Path(ledger).read_bytes())
    con = sqlite3.connect(copy_path)
    con.execute("UPDATE spends SET cert = ? WHERE id = (SELECT MIN(id) FROM spends)",
                (json.dumps(["0" * 64]),))
    con.commit()
    con.close()
    assert any("hash chain does not verify" in p for p in confirm(cert, str(copy_path)))


def test_a_release_without_ledger_has_nothing_to_confirm(bound: Any) -> None:
    cert = copy.deepcopy(bound[0])
    cert["binding"]["dataset"] = None
    assert confirm(cert, bound[1]) == [
        "binding.dataset: the certificate names no ledger dataset (released without a ledger)"]
