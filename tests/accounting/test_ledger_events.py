"""Ledger schema 2: events beside amounts, the filter's tight totals, migration of schema 1."""

from __future__ import annotations

import sqlite3
import time
from fractions import Fraction
from pathlib import Path

import pytest

import dpcert as dp
from dpcert.accounting.codec import event_to_json
from dpcert.accounting.ledger import (
    SCHEMA_VERSION,
    Ledger,
    LedgerIntegrityError,
    _hash,
    _state_hash,
)
from dpcert.core.events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PureEvent,
    SelfComposedEvent,
    ZCDPEvent,
)
from dpcert.errors import BudgetExceeded, InvalidParameter, MeasureMismatch, UnsupportedEvent


def _v1_ledger(path: str, n: int, kind: str = "ApproxDP") -> None:
    """Write a schema-1 ledger exactly as dpcert 1 did, with ``n`` charges."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("BEGIN")
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.execute("CREATE TABLE datasets (name TEXT PRIMARY KEY, measure TEXT NOT NULL, "
                "total TEXT NOT NULL, created REAL NOT NULL, hash TEXT NOT NULL)")
    con.execute("CREATE TABLE spends (id INTEGER PRIMARY KEY AUTOINCREMENT, dataset TEXT NOT "
                "NULL REFERENCES datasets(name), amount TEXT NOT NULL, note TEXT, time REAL NOT "
                "NULL, hash TEXT NOT NULL)")
    total = '["100", "1/10000"]' if kind == "ApproxDP" else '"100"'
    created = 1.0e9
    h = _hash("d", kind, total, created)
    con.execute("INSERT INTO datasets VALUES ('d', ?, ?, ?, ?)", (kind, total, created, h))
    rows = []
    for i in range(1, n + 1):
        amount = '["1/1000", "1/100000000"]' if kind == "ApproxDP" else '"1/1000"'
        note, t = f"q{i}", created + i
        h = _hash(h, i, "d", amount, note, t)
        rows.append((i, "d", amount, note, t, h))
    con.executemany("INSERT INTO spends VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.execute("COMMIT")
    con.close()


def test_migration_of_ten_thousand_charges_loses_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "v1.sqlite")
    _v1_ledger(path, 10_000)
    led = Ledger(path)  # migrates
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM meta").fetchone()[0] == str(SCHEMA_VERSION)
    con.close()
    hist = led.history("d")
    assert len(hist) == 10_000
    assert [s.note for s in hist[:2]] == ["q1", "q2"] and hist[-1].note == "q10000"
    assert all(s.legacy and s.amount == (Fraction(1, 1000), Fraction(1, 10**8)) for s in hist)
    st = led.status("d")
    assert st.basic_spent == (Fraction(10), Fraction(1, 10**4))
    assert st.spent == st.basic_spent and st.rule == "approx" and st.charges == 10_000
    # the chain still verifies, and new charges (with events) extend it
    led.charge("d", LaplaceEvent(1000))
    assert Ledger(path).status("d").charges == 10_001
    con = sqlite3.connect(path)
    con.execute("UPDATE spends SET note = 'edited' WHERE id = 5000")
    con.commit()
    con.close()
    with pytest.raises(LedgerIntegrityError, match="id=5000"):
        Ledger(path)


def test_every_charge_records_its_event(tmp_path: Path) -> None:
    led = Ledger(str(tmp_path / "l.sqlite"))
    led.create("d", dp.ApproxDP(10, 1e-6))
    batch = SelfComposedEvent(LaplaceEvent(10), 100)
    s = led.charge("d", batch, note="100 counts", batch=True)
    assert s.event == batch and s.batch and s.amount == (Fraction(10), Fraction(0))
    (h,) = led.history("d")
    assert h.event == batch and h.batch and not h.legacy
    con = sqlite3.connect(led.path)
    assert con.execute("SELECT event FROM spends").fetchone()[0] == event_to_json(batch)
    con.close()


def test_declared_batch_of_100_laplace_is_charged_by_the_pld(tmp_path: Path) -> None:
    led = Ledger(str(tmp_path / "l.sqlite"))
    led.create("d", dp.ApproxDP(10, 1e-6))
    led.charge("d", SelfComposedEvent(LaplaceEvent(10), 100), batch=True)
    st = led.status("d")
    assert st.basic_spent == (Fraction(10), Fraction(0))
    assert 4.6 < float(st.spent[0]) <= 4.8 and st.spent[1] == Fraction(1, 10**6)
    assert st.spent_lower is not None and 4.6 < st.spent_lower < st.spent[0]  # PLD interval


def test_adaptive_gaussians_are_charged_the_non_adaptive_optimum(tmp_path: Path) -> None:
    led = Ledger(str(tmp_path / "l.sqlite"))
    led.create("d", dp.ApproxDP(5, 1e-6))
    for _ in range(100):
        led.charge("d", GaussianEvent(10))
    st = led.status("d")
    optimum = dp.accounting.PLDAccountant().compose(GaussianEvent(10), 100).epsilon(1e-6)
    assert st.rule == "gdp"
    assert optimum * (1 - 1e-3) <= float(st.spent[0]) <= optimum * 1.05
    # the budget binds on the GDP total, not on the sum (which would be far over 5)
    with pytest.raises(BudgetExceeded, match="gdp filter"):
        led.charge("d", GaussianEvent(1))
    with pytest.raises(UnsupportedEvent, match="Gaussian-DP"):
        led.charge("d", PoissonSampledEvent(GaussianEvent(10), 0.01))
    assert led.status("d").charges == 100


def test_pure_and_zcdp_budgets(tmp_path: Path) -> None:
    led = Ledger(str(tmp_path / "l.sqlite"))
    led.create("p", dp.PureDP(1))
    led.charge("p", LaplaceEvent(4))
    with pytest.raises(UnsupportedEvent):
        led.charge("p", GaussianEvent(4))  # no pure-DP statement: nothing charged
    led.create("z", dp.ZCDP(1))
    led.charge("z", ComposedEvent([GaussianEvent(2), LaplaceEvent(2)]))
    assert led.remaining("z") == Fraction(3, 4)
    with pytest.raises(MeasureMismatch):
        led.spend("z", dp.PureDP(0.1), event=LaplaceEvent(10))
    with pytest.raises(UnsupportedEvent):
        led.charge("z", PoissonSampledEvent(GaussianEvent(2), 0.5))
    assert [s.charges for s in (led.status("p"), led.status("z"))] == [1, 1]


def test_bad_input_charges_nothing(tmp_path: Path) -> None:
    led = Ledger(str(tmp_path / "l.sqlite"))
    led.create("d", dp.ApproxDP(1, 0))  # δ = 0: pure rule, never a PLD at δ = 0
    with pytest.raises(UnsupportedEvent):
        led.charge("d", GaussianEvent(10))
    with pytest.raises(InvalidParameter):
        led.charge("d", LaplaceEvent(float("nan")))
    with pytest.raises(InvalidParameter):
        led.charge("d", "laplace")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter):
        dp.accounting.PLDAccountant().compose(LaplaceEvent(1)).epsilon(0)
    assert led.status("d").charges == 0
    led.charge("d", LaplaceEvent(2))
    assert led.remaining("d") == (Fraction(1, 2), Fraction(0))


def test_unknown_event_in_ledger_is_a_typed_error_and_changes_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "l.sqlite")
    led = Ledger(path)
    led.create("d", dp.ZCDP(1))
    led.charge("d", ZCDPEvent(Fraction(1, 10)))
    # a ledger written by a future dpcert with an event type this one does not know
    con = sqlite3.connect(path)
    (amount, note, t) = con.execute("SELECT amount, note, time FROM spends").fetchone()
    alien = ('{"format":"dpcert.event","version":1,"event":{"type":"FutureEvent","x":"1"}}')
    first = con.execute("SELECT hash FROM datasets").fetchone()[0]
    head = _hash(first, 1, "d", amount, note, t, alien, 0, 0)
    con.execute("UPDATE spends SET event = ?, hash = ?", (alien, head))
    (count, basic, state) = con.execute("SELECT count, basic, state FROM filter_state"
                                        ).fetchone()
    con.execute("UPDATE filter_state SET head = ?, hash = ?",  # the future dpcert's state row
                (head, _state_hash(first, head, count, basic, state)))
    con.commit()
    before = con.execute("SELECT * FROM spends").fetchall()
    with pytest.raises(UnsupportedEvent, match="FutureEvent"):
        led.verify("d")
    with pytest.raises(UnsupportedEvent, match="FutureEvent"):
        led.history("d")
    with pytest.raises(UnsupportedEvent):
        Ledger(path)  # opening verifies every chain
    assert con.execute("SELECT * FROM spends").fetchall() == before
    assert led.status("d").spent == Fraction(1, 10)  # the head state stays readable
    con.close()


def test_quote_shows_both_costs_and_charges_nothing(tmp_path: Path) -> None:
    led = Ledger(str(tmp_path / "l.sqlite"))
    led.create("d", dp.ApproxDP(10, 1e-6))
    q = led.quote("d", SelfComposedEvent(LaplaceEvent(10), 100), batch=True)
    assert q["basic"] == (Fraction(10), Fraction(0)) and q["fits"] and q["rule"] == "approx"
    assert float(q["tight"][0]) < 4.8
    assert led.status("d").charges == 0


def test_ledger_run_records_the_measurement_event(tmp_path: Path) -> None:
    led = Ledger(str(tmp_path / "l.sqlite"))
    led.create("d", dp.PureDP(1))
    space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
    m = space >> dp.t.then_count() >> dp.m.then_laplace(4.0)
    led.run("d", m, [1.0, 2.0])
    (s,) = led.history("d")
    assert s.event == m.event(1) and s.amount == Fraction(1, 4)
    assert isinstance(PureEvent(1), PureEvent) and s.time <= time.time()  # a timestamp


def test_cli_history_shows_events_and_both_totals(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dpcert.cli.main import main as cli_main

    path = str(tmp_path / "cli.sqlite")
    assert cli_main(["budget", "init", path, "census", "--unbound", "--epsilon", "10", "--delta",
                     "1e-6"]) == 0
    led = Ledger(path)
    led.charge("census", SelfComposedEvent(LaplaceEvent(10), 100), note="counts", batch=True)
    capsys.readouterr()
    assert cli_main(["budget", "history", path, "census"]) == 0
    out = capsys.readouterr().out
    assert "event: batch: 100 × Laplace(scale 10)" in out and "counts" in out
    assert "basic total: ε = 10.0, δ = 0.0" in out
    assert "tight total: ε = 4.69" in out and "approx filter; PLD interval of ε [4.69" in out
    assert cli_main(["budget", "show", path, "census"]) == 0
    out = capsys.readouterr().out
    assert "basic:     ε = 10.0" in out and "spent:     ε = 4.69" in out


def test_a_read_only_v1_ledger_is_read_without_migrating(tmp_path: Path) -> None:
    path = str(tmp_path / "v1.sqlite")
    _v1_ledger(path, 3, kind="PureDP")
    led = Ledger(path, read_only=True)
    st = led.status("d")
    assert st.charges == 3 and st.spent == Fraction(3, 1000) and st.rule == "pure"
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM meta").fetchone()[0] == "1"
    con.close()
