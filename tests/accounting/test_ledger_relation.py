"""One neighbouring relation per ledger dataset, declared at ``create``/``budget init
--relation`` or fixed by its first stated charge; charges stated for the other relation are
refused before anything is recorded; engine releases are add/remove statements, so sampling
without replacement cannot wrap them (proof audit: 0.159 charged where the truth is 0.494)."""

from __future__ import annotations

import math
import sqlite3
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

import dpcert as dp
from dpcert.accounting.ledger import Ledger, LedgerIntegrityError, _dataset_hash, _spend_hash
from dpcert.accounting.pure import epsilon_of
from dpcert.cli.main import main
from dpcert.core.events import (
    ComposedEvent,
    PoissonSampledEvent,
    PureEvent,
    SampledWithoutReplacementEvent,
    relation_of,
)
from dpcert.errors import InvalidParameter, MetricMismatch

POISSON = PoissonSampledEvent(PureEvent(1), Fraction(1, 10))
SWOR = SampledWithoutReplacementEvent(PureEvent(1), 10, 100)


def _ledger(tmp: Path, relation: str | None = None) -> Ledger:
    led = Ledger(str(tmp / "l.sqlite"))
    led.create("d", dp.PureDP(1), relation=relation)
    return led


def test_the_first_stated_charge_fixes_the_relation(tmp_path: Path) -> None:
    led = _ledger(tmp_path)
    assert led.relation("d") is None
    led.charge("d", POISSON)
    assert led.relation("d") == "add_remove"
    before = (led.remaining("d"), len(led.history("d")), led.head("d"))
    with pytest.raises(MetricMismatch, match="nothing was charged"):
        led.quote("d", SWOR)
    with pytest.raises(MetricMismatch, match="replace-one"):
        led.charge("d", SWOR)  # the audit's 0.317-for-0.382 history
    assert (led.remaining("d"), len(led.history("d")), led.head("d")) == before


def test_a_declared_relation_is_kept_from_the_first_charge(tmp_path: Path) -> None:
    led = _ledger(tmp_path, "replace_one")
    with pytest.raises(MetricMismatch):
        led.charge("d", POISSON)
    assert led.history("d") == [] and led.remaining("d") == 1
    led.charge("d", SWOR)
    led.spend("d", dp.PureDP(Fraction(1, 10)))  # unstated amount: the caller's statement
    assert led.relation("d") == "replace_one" and len(led.history("d")) == 2
    with pytest.raises(InvalidParameter, match="relation"):
        led.create("e", dp.PureDP(1), relation="swap")


def test_the_declared_relation_is_chained(tmp_path: Path) -> None:
    led = _ledger(tmp_path, "replace_one")
    con = sqlite3.connect(led.path)
    con.execute("UPDATE datasets SET relation = 'add_remove'")
    con.commit()
    con.close()
    with pytest.raises(LedgerIntegrityError, match="altered"):
        Ledger(led.path)


def test_a_schema_2_ledger_is_migrated_and_keeps_its_chain(tmp_path: Path) -> None:
    led = _ledger(tmp_path)
    led.spend("d", dp.PureDP(Fraction(1, 4)), note="old")
    con = sqlite3.connect(led.path)
    con.execute("DROP TABLE filter_state")
    con.execute("DROP INDEX spends_by_dataset")
    con.execute("ALTER TABLE datasets DROP COLUMN rule")
    con.execute("ALTER TABLE datasets DROP COLUMN relation")
    con.execute("ALTER TABLE spends DROP COLUMN cert")
    name, kind, total, created = con.execute("SELECT name, measure, total, created FROM "
                                             "datasets").fetchone()
    con.execute("UPDATE datasets SET hash = ?", (_dataset_hash(name, kind, total, created, None),))
    old = con.execute("SELECT id, amount, note, time, event, batch, stated FROM spends").fetchone()
    con.execute("UPDATE spends SET hash = ?",  # the chain as a schema-2 dpcert wrote it
                (_spend_hash(_dataset_hash(name, kind, total, created, None), old[0], name,
                             *old[1:], None),))
    con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    assert Ledger(led.path, read_only=True).remaining("d") == Fraction(3, 4)
    again = Ledger(led.path)
    assert again.remaining("d") == Fraction(3, 4) and again.relation("d") is None
    again.charge("d", SWOR)
    assert again.relation("d") == "replace_one"


def test_cli_budget_init_declares_the_relation(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                               ) -> None:
    path = str(tmp_path / "l.sqlite")
    assert main(["budget", "init", path, "d", "--unbound", "--epsilon", "1",
                 "--relation", "replace"]) == 0
    assert Ledger(path).relation("d") == "replace_one"
    assert main(["budget", "show", path, "d"]) == 0
    assert "relation:  replace_one" in capsys.readouterr().out


def _session(tmp: Path, relation: str | None) -> tuple[dp.Session, Ledger]:
    led = Ledger(str(tmp / "s.sqlite"))
    led.create("people", dp.PureDP(2), relation=relation)
    df = pl.DataFrame({"pid": [1, 2, 3, 4], "x": [1.0, 2.0, 3.0, 4.0]})
    return dp.Session(df, "pid", budget=dp.PureDP(2), ledger=led.path, dataset="people"), led


def test_engine_events_are_add_remove_and_swor_cannot_wrap_them(tmp_path: Path) -> None:
    sess, _ = _session(tmp_path, None)
    q = sess.query().agg(dp.count()).bound_contributions(1, 1)
    event = q.measurement(dp.PureDP(1), key=bytes(16)).event(1)
    assert relation_of(event) == "add_remove"
    with pytest.raises(InvalidParameter, match="add/remove"):
        SampledWithoutReplacementEvent(event, 10, 100)
    # the audit's figures: the wrapper would charge log(1 + γ(e^ε − 1)) = 0.159 for γ = 0.1,
    # while an add/remove ε = 1 is a replace-one ε = 2, whose amplified truth is 0.494
    charged = float(epsilon_of(ComposedEvent([SWOR])))
    truth = math.log(1 + 0.1 * (math.exp(2) - 1))
    assert round(charged, 3) == 0.159 and round(truth, 3) == 0.494
    assert float(epsilon_of(ComposedEvent([
        SampledWithoutReplacementEvent(PureEvent(2), 10, 100)]))) == pytest.approx(truth)


def test_a_replace_one_ledger_refuses_an_engine_release_before_any_charge(
        tmp_path: Path) -> None:
    sess, led = _session(tmp_path, "replace_one")
    q = sess.query().agg(dp.count()).bound_contributions(1, 1)
    with pytest.raises(MetricMismatch, match="nothing was charged"):
        q.release(dp.PureDP(1))
    assert led.history("people") == [] and sess.spent == 0 and led.remaining("people") == 2
    (tmp_path / "b").mkdir()
    ok, led2 = _session(tmp_path / "b", "add_remove")
    ok.query().agg(dp.count()).bound_contributions(1, 1).release(dp.PureDP(1))
    assert len(led2.history("people")) == 1
