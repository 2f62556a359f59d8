"""The ledger's incremental filter state (``docs/proofs/ledger.md``): a charge reads O(1) rows,
the state is the replay of the chain, tampering is caught, schema 3 is migrated."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import dpcert as dp
from dpcert.accounting.filters import FilterState
from dpcert.accounting.ledger import Ledger, LedgerIntegrityError, _hash, _state_hash
from dpcert.core.events import GaussianEvent, LaplaceEvent


class _Counting(Ledger):
    """A ledger whose connections count SQLite VM steps (they grow with the rows read)."""

    steps = 0

    def _connect(self) -> sqlite3.Connection:
        con = super()._connect()

        def tick() -> int:
            _Counting.steps += 1
            return 0

        con.set_progress_handler(tick, 1)
        return con


def _steps_of_one_charge(led: _Counting) -> int:
    _Counting.steps = 0
    led.charge("d", LaplaceEvent(1000))
    return _Counting.steps


def test_a_charge_reads_the_same_rows_after_10_and_after_400_charges(tmp_path: Path) -> None:
    led = _Counting(str(tmp_path / "l.sqlite"))
    led.create("d", dp.ApproxDP(100, 1e-6))
    for _ in range(10):
        led.charge("d", LaplaceEvent(1000))
    early = _steps_of_one_charge(led)
    for _ in range(400):
        led.charge("d", LaplaceEvent(1000))
    late = _steps_of_one_charge(led)
    assert late <= early * 1.05 + 20
    _Counting.steps = 0
    assert led.verify("d") == 412  # verification of the whole chain reads every row
    assert _Counting.steps > 10 * early


def test_a_full_replay_that_every_charge_did_would_be_caught(tmp_path: Path) -> None:
    """The wrong variant: charging by re-reading the history (schema 3's way)."""
    led = _Counting(str(tmp_path / "l.sqlite"))
    led.create("d", dp.ApproxDP(100, 1e-6))

    def replaying_charge() -> int:
        _Counting.steps = 0
        with led._tx() as con:
            led._replay(con, "d")
        return _Counting.steps

    for _ in range(10):
        led.charge("d", LaplaceEvent(1000))
    early = replaying_charge()
    for _ in range(100):
        led.charge("d", LaplaceEvent(1000))
    assert replaying_charge() > early * 1.05 + 20


def _state_row(path: str) -> tuple[Any, ...]:
    con = sqlite3.connect(path)
    row = con.execute("SELECT count, head, basic, state, hash FROM filter_state").fetchone()
    con.close()
    return tuple(row)


def test_the_state_row_is_the_replay_and_an_edit_is_caught(tmp_path: Path) -> None:
    path = str(tmp_path / "l.sqlite")
    led = Ledger(path)
    led.create("d", dp.ApproxDP(5, 1e-6))
    for _ in range(3):
        led.charge("d", LaplaceEvent(10))
    assert led.verify() == 3 and led.status("d").rule == "renyi"
    spent = led.status("d").spent
    count, head, basic, state, _ = _state_row(path)
    con = sqlite3.connect(path)
    con.execute("UPDATE filter_state SET state = ?", (state.replace('"count":3', '"count":2'),))
    con.commit()
    with pytest.raises(LedgerIntegrityError, match="filter state was altered"):
        led.status("d")
    # re-hashed by hand: the row is self-consistent but not the replay of the chain
    forged = replace(FilterState.from_json(state), acc=0.0).to_json()
    dhash = con.execute("SELECT hash FROM datasets").fetchone()[0]
    con.execute("UPDATE filter_state SET state = ?, hash = ?",
                (forged, _state_hash(dhash, head, count, basic, forged)))
    con.commit()
    assert led.status("d").spent != spent  # an O(1) read trusts the row's hash...
    with pytest.raises(LedgerIntegrityError, match="differs from a replay"):
        led.verify("d")  # ...verification replays the chain
    with pytest.raises(LedgerIntegrityError, match="differs from a replay"):
        Ledger(path)  # opening verifies every dataset
    con.close()


def test_a_deleted_latest_charge_is_caught_by_the_next_charge(tmp_path: Path) -> None:
    path = str(tmp_path / "l.sqlite")
    led = Ledger(path)
    led.create("d", dp.PureDP(1))
    led.spend("d", dp.PureDP(Fraction(1, 4)))
    led.spend("d", dp.PureDP(Fraction(1, 4)))
    con = sqlite3.connect(path)
    con.execute("DELETE FROM spends WHERE id = (SELECT max(id) FROM spends)")
    con.commit()
    con.close()
    with pytest.raises(LedgerIntegrityError, match="latest charge"):
        led.spend("d", dp.PureDP(Fraction(1, 4)))


def _as_schema_3(path: str) -> None:
    """Rewrite a fresh ledger as a schema-3 dpcert wrote it (no rule, no state table)."""
    con = sqlite3.connect(path)
    con.execute("DROP TABLE filter_state")
    con.execute("DROP INDEX spends_by_dataset")
    con.execute("ALTER TABLE datasets DROP COLUMN rule")
    last = ""
    for name, kind, total, created in con.execute(
            "SELECT name, measure, total, created FROM datasets").fetchall():
        last = _hash(name, kind, total, created)
        con.execute("UPDATE datasets SET hash = ? WHERE name = ?", (last, name))
        for row in con.execute("SELECT id, amount, note, time, event, batch, stated FROM "
                               "spends WHERE dataset = ? ORDER BY id", (name,)).fetchall():
            last = _hash(last, row[0], name, *row[1:])
            con.execute("UPDATE spends SET hash = ? WHERE id = ?", (last, row[0]))
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.commit()
    con.close()


def test_a_schema_3_ledger_is_migrated_and_keeps_its_classic_rule(tmp_path: Path) -> None:
    path = str(tmp_path / "l.sqlite")
    led = Ledger(path)
    led.create("lap", dp.ApproxDP(5, 1e-6))
    led.create("gauss", dp.ApproxDP(5, 1e-6))
    for _ in range(3):
        led.charge("lap", LaplaceEvent(10))
        led.charge("gauss", GaussianEvent(10))
    _as_schema_3(path)
    old = Ledger(path, read_only=True)  # read as it is: replayed
    assert old.status("lap").rule == "approx" and old.status("lap").charges == 3
    new = Ledger(path)
    assert new.rule("lap") == "classic" and new.status("lap").rule == "approx"
    assert new.status("lap").spent == (Fraction(3, 10), Fraction(0))
    assert new.status("gauss").rule == "gdp"
    assert new.verify() == 6
    new.charge("lap", LaplaceEvent(10))
    assert new.status("lap").spent == (Fraction(2, 5), Fraction(0))
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM meta").fetchone()[0] == "4"
    con.close()


def test_the_rule_is_chosen_at_create_and_chained(tmp_path: Path) -> None:
    path = str(tmp_path / "l.sqlite")
    led = Ledger(path)
    led.create("d", dp.ApproxDP(5, 1e-6), rule="basic")
    assert led.rule("d") == "basic"
    for _ in range(50):
        led.charge("d", LaplaceEvent(10))
    with pytest.raises(dp.errors.BudgetExceeded):
        led.charge("d", LaplaceEvent(10))
    con = sqlite3.connect(path)
    con.execute("UPDATE datasets SET rule = 'renyi'")
    con.commit()
    con.close()
    with pytest.raises(LedgerIntegrityError, match="budget row was altered"):
        led.status("d")
