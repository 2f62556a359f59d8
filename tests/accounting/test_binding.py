"""The curator's binding of a source to a ledger dataset: written with the dataset, read back
intact, an edit outside dpcert detected, a different source refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import dpcert as dp
from dpcert.accounting.binding import (
    Binding,
    accounting_rule,
    binding_of,
    check_binding,
    create_bound,
)
from dpcert.accounting.ledger import Ledger, LedgerIntegrityError
from dpcert.errors import BindingMismatch, InvalidParameter

B = Binding("/data/p.csv", "sha256:00", "pure", privacy_unit="pid", types={"age": "int"})


def test_round_trip_and_unbound(tmp_path: Path) -> None:
    led = Ledger(str(tmp_path / "l.sqlite"))
    led.create("free", dp.PureDP(1))
    assert binding_of(led, "free") is None  # no bindings table yet
    create_bound(led, "p", dp.PureDP(1), B)
    assert binding_of(Ledger(led.path, read_only=True), "p") == B
    assert binding_of(led, "free") is None
    assert led.remaining("p") == 1 and led.datasets() == ["free", "p"]


def test_create_bound_is_all_or_nothing(tmp_path: Path) -> None:
    led = Ledger(str(tmp_path / "l.sqlite"))
    create_bound(led, "p", dp.PureDP(1), B)
    with pytest.raises(InvalidParameter, match="already has a budget"):
        create_bound(led, "p", dp.PureDP(5), B)
    assert led.status("p").total == 1
    with pytest.raises(InvalidParameter):
        create_bound(led, "q", dp.PureDP(1), "not a binding")  # type: ignore[arg-type]
    assert "q" not in led.datasets()


def test_an_edited_binding_is_detected(tmp_path: Path) -> None:
    path = str(tmp_path / "l.sqlite")
    create_bound(Ledger(path), "p", dp.PureDP(1), B)
    con = sqlite3.connect(path)
    con.execute("UPDATE bindings SET binding = replace(binding, '/data/p.csv', '/x.csv')")
    con.commit()
    con.close()
    with pytest.raises(LedgerIntegrityError, match="binding was altered"):
        binding_of(Ledger(path), "p")


def test_check_binding_names_what_differs() -> None:
    check_binding(B, "/data/p.csv", "sha256:00")
    with pytest.raises(BindingMismatch, match="is not the source bound"):
        check_binding(B, "/data/q.csv", "sha256:00", "p")
    with pytest.raises(BindingMismatch, match="schema fingerprint sha256:01 differs"):
        check_binding(B, "/data/p.csv", "sha256:01", "p")


def test_accounting_rule_names_the_filter() -> None:
    assert accounting_rule(dp.PureDP(1)) == "pure"
    assert accounting_rule(dp.ZCDP(1)) == "zcdp"
    assert accounting_rule(dp.ApproxDP(1, 0)) == "pure"
    assert accounting_rule(dp.ApproxDP(1, 1e-6)).startswith("renyi")
    assert accounting_rule(dp.ApproxDP(1, 1e-6), "basic") == "approx"
    assert accounting_rule(dp.ApproxDP(1, 1e-6), "gdp") == "gdp"
