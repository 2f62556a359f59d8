"""The budget ledger: exact spends, refusal, integrity checks, concurrency and crashes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

import dpcert as dp
from dpcert.accounting.ledger import SCHEMA_VERSION, Ledger, LedgerIntegrityError
from dpcert.cli.main import main as cli_main
from dpcert.errors import BudgetExceeded, DPCertError, InvalidParameter, MeasureMismatch

SRC = str(Path(dp.__file__).resolve().parents[1])


def _ledger(tmp_path: Path) -> Ledger:
    return Ledger(str(tmp_path / "ledger.sqlite"))


def test_exact_spends_fill_the_budget(tmp_path: Path) -> None:
    led = _ledger(tmp_path)
    led.create("d", dp.PureDP(1.0))
    for _ in range(5):
        led.spend("d", dp.PureDP(0.2))
    assert led.remaining("d") == 0
    with pytest.raises(BudgetExceeded, match=r"remaining ε = 0"):
        led.spend("d", dp.PureDP(1e-9))
    assert len(led.history("d")) == 5


def test_overspend_names_remaining_and_records_nothing(tmp_path: Path) -> None:
    led = _ledger(tmp_path)
    led.create("d", dp.ApproxDP(1.0, 1e-6))
    led.spend("d", dp.ApproxDP(0.75, 1e-7), note="first")
    with pytest.raises(BudgetExceeded, match=r"remaining ε = 0\.25, δ = 9(\.0*\d*)?e-07"):
        led.spend("d", dp.ApproxDP(0.5, 1e-7))
    with pytest.raises(BudgetExceeded):
        led.spend("d", dp.ApproxDP(0.1, 1e-6))  # δ does not fit
    assert led.remaining("d") == (Fraction(1, 4), Fraction(9, 10**7))
    assert [s.note for s in led.history("d")] == ["first"]


def test_zcdp_budget_and_mismatch(tmp_path: Path) -> None:
    led = _ledger(tmp_path)
    led.create("z", dp.ZCDP(0.5))
    led.spend("z", dp.ZCDP(0.125))
    assert led.remaining("z") == Fraction(3, 8)
    with pytest.raises(MeasureMismatch):
        led.spend("z", dp.PureDP(0.1))
    with pytest.raises(InvalidParameter, match="already"):
        led.create("z", dp.ZCDP(1))
    with pytest.raises(InvalidParameter, match="nope"):
        led.remaining("nope")
    with pytest.raises(InvalidParameter):
        led.create("bare", dp.PureDP())


def test_run_charges_before_revealing(tmp_path: Path) -> None:
    led = _ledger(tmp_path)
    led.create("d", dp.PureDP(0.3))
    space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
    m = space >> dp.t.then_count() >> dp.m.then_laplace(5.0)
    led.run("d", m, [1.0, 2.0])
    calls = []

    def spy(x: object) -> int:
        calls.append(x)
        return 0

    with pytest.raises(BudgetExceeded):
        led.run("d", m >> spy, [1.0, 2.0])
    assert calls == []  # refused before the measurement ran


def test_tampering_is_detected(tmp_path: Path) -> None:
    led = _ledger(tmp_path)
    led.create("d", dp.PureDP(1.0))
    led.spend("d", dp.PureDP(0.5))
    con = sqlite3.connect(led.path)
    con.execute("UPDATE spends SET amount = '\"1/100\"'")
    con.commit()
    con.close()
    with pytest.raises(LedgerIntegrityError, match="checksum"):
        Ledger(led.path)
    con = sqlite3.connect(led.path)
    con.execute("DELETE FROM spends")
    con.execute("UPDATE datasets SET total = '\"100\"'")
    con.commit()
    con.close()
    with pytest.raises(DPCertError, match="altered"):
        Ledger(led.path)


def test_newer_schema_and_foreign_files_are_refused(tmp_path: Path) -> None:
    led = _ledger(tmp_path)
    con = sqlite3.connect(led.path)
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                (str(SCHEMA_VERSION + 1),))
    con.commit()
    con.close()
    with pytest.raises(LedgerIntegrityError, match="newer"):
        Ledger(led.path)
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(LedgerIntegrityError, match="not a dpcert ledger"):
        Ledger(str(other))
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(LedgerIntegrityError):
        Ledger(str(junk))


_RACER = """
import os, sys, time
sys.path.insert(0, {src!r})
import dpcert as dp
from dpcert.accounting.ledger import Ledger
from dpcert.errors import BudgetExceeded
led = Ledger({path!r})
open({go!r} + "." + str(os.getpid()), "w").close()
while not os.path.exists({go!r}):
    time.sleep(0.001)
try:
    led.spend("d", dp.PureDP(0.25), note=str(os.getpid()))
except BudgetExceeded:
    sys.exit(1)
sys.exit(0)
"""


def test_eight_processes_race_exactly_four_succeed(tmp_path: Path) -> None:
    path = str(tmp_path / "race.sqlite")
    Ledger(path).create("d", dp.PureDP(1.0))
    go = str(tmp_path / "go")
    code = _RACER.format(src=SRC, path=path, go=go)
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(8)]
    deadline = time.time() + 120
    while len(list(tmp_path.glob("go.*"))) < 8 and time.time() < deadline:
        time.sleep(0.01)  # wait until every process has imported and opened the ledger
    Path(go).touch()
    codes = [p.wait(timeout=120) for p in procs]
    assert sorted(codes) == [0, 0, 0, 0, 1, 1, 1, 1]
    led = Ledger(path)
    assert led.remaining("d") == 0
    assert len(led.history("d")) == 4


_KILLED = """
import sys, time
sys.path.insert(0, {src!r})
import dpcert as dp
import dpcert.accounting.ledger as L
real = L._hash
def slow(*args):
    if len(args) == 9:  # the charge row's hash: called after the INSERT, before COMMIT
        print("inside", flush=True)
        time.sleep(600)
    return real(*args)
L._hash = slow
L.Ledger({path!r}).spend("d", dp.PureDP(0.5))
"""


def test_process_killed_mid_transaction_leaves_ledger_consistent(tmp_path: Path) -> None:
    path = str(tmp_path / "crash.sqlite")
    led = Ledger(path)
    led.create("d", dp.PureDP(1.0))
    led.spend("d", dp.PureDP(0.25))
    p = subprocess.Popen([sys.executable, "-c", _KILLED.format(src=SRC, path=path)],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "inside"
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    led = Ledger(path)  # verifies every checksum
    assert led.remaining("d") == Fraction(3, 4)
    assert len(led.history("d")) == 1
    led.spend("d", dp.PureDP(0.75))
    assert led.remaining("d") == 0


def test_cli_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "cli.sqlite")
    assert cli_main(["budget", "init", path, "census", "--unbound", "--epsilon", "1", "--delta",
                     "1e-6"]) == 0
    Ledger(path).spend("census", dp.ApproxDP(0.25, 1e-7), note="count")
    assert cli_main(["budget", "show", path, "census"]) == 0
    out = capsys.readouterr().out
    assert "remaining: ε = 0.75" in out
    assert cli_main(["budget", "history", path, "census"]) == 0
    assert "count" in capsys.readouterr().out
    assert cli_main(["budget", "init", path, "z", "--unbound", "--rho", "0.5"]) == 0
    assert cli_main(["budget", "show", path, "missing"]) == 2  # invalid input
    assert cli_main(["budget", "init", path, "bad", "--unbound", "--epsilon", "x"]) == 2


def test_a_deleted_middle_charge_breaks_the_chain(tmp_path: Path) -> None:
    """Each charge's hash covers the previous one: removing a charge from the middle (to free
    budget) is detected on read even though every remaining row is intact by itself."""
    led = _ledger(tmp_path)
    led.create("d", dp.PureDP(1.0))
    for note in ("a", "b", "c"):
        led.spend("d", dp.PureDP(0.25), note=note)
    con = sqlite3.connect(led.path)
    con.execute("DELETE FROM spends WHERE note = 'b'")
    con.commit()
    con.close()
    with pytest.raises(LedgerIntegrityError, match="checksum"):
        Ledger(led.path).remaining("d")


def test_a_raised_budget_row_is_detected(tmp_path: Path) -> None:
    led = _ledger(tmp_path)
    led.create("d", dp.PureDP(1.0))
    led.spend("d", dp.PureDP(0.5))
    con = sqlite3.connect(led.path)
    con.execute("UPDATE datasets SET total = '\"100\"'")
    con.commit()
    con.close()
    with pytest.raises(LedgerIntegrityError, match="budget row was altered"):
        Ledger(led.path).remaining("d")


@pytest.mark.parametrize(("budget", "parts", "one_more"), [
    (dp.ZCDP(1), [dp.ZCDP(Fraction(1, 2))] * 2, dp.ZCDP(Fraction(1, 1000))),
    (dp.PureDP(1), [dp.PureDP(Fraction(1, 4))] * 4, dp.PureDP(Fraction(1, 10**6))),
    (dp.ApproxDP(1, Fraction(1, 10**6)), [dp.ApproxDP(Fraction(1, 10), Fraction(1, 10**6))],
     dp.ApproxDP(Fraction(1, 10), Fraction(1, 10**9))),
])
def test_a_filled_ledger_refuses_the_smallest_further_charge(
        tmp_path: Path, budget: dp.Measure, parts: list[dp.Measure], one_more: dp.Measure) -> None:
    """The ledger's filter (a second route to accounting/filters.py): charges that fill the
    budget exactly are admitted, and the smallest further charge is refused, recording
    nothing."""
    led = _ledger(tmp_path)
    led.create("d", budget)
    for p in parts:
        led.spend("d", p)
    with pytest.raises(BudgetExceeded):
        led.spend("d", one_more)
    assert len(led.history("d")) == len(parts)


def test_a_gaussian_ledger_counts_k_fold_gaussians_k_times(tmp_path: Path) -> None:
    """Under an (ε, δ) budget kept by the Gaussian-DP filter, 100 Gaussians of σ = 10 declared
    as one k-fold event cost what 100 separate ones do: μ² = 100/100 = 1, and μ = 1 fits
    (ε, δ) = (3, 1e-2) only once (δ_1(3) ≈ 1.5e-3; δ_√2(3) ≈ 3.2e-2)."""
    from dpcert.core.events import GaussianEvent, SelfComposedEvent

    led = _ledger(tmp_path)
    led.create("d", dp.ApproxDP(3, Fraction(1, 100)))
    led.charge("d", SelfComposedEvent(GaussianEvent(10), 100))
    with pytest.raises(BudgetExceeded):
        led.charge("d", SelfComposedEvent(GaussianEvent(10), 100))


def test_an_epsilon_only_approx_ledger_refuses_the_smallest_further_charge(tmp_path: Path) -> None:
    """ApproxDP(ε, 0) is kept by the pure rule: two ε/2 releases fill it."""
    from dpcert.core.events import PureEvent

    led = _ledger(tmp_path)
    led.create("d", dp.ApproxDP(1, 0))
    led.charge("d", PureEvent(Fraction(1, 2)))
    led.charge("d", PureEvent(Fraction(1, 2)))
    with pytest.raises(BudgetExceeded):
        led.charge("d", PureEvent(Fraction(1, 10**6)))


def test_an_independent_replay_of_the_hash_chain_matches_every_row_and_the_head(
        tmp_path: Path) -> None:
    """Replay the chain of ``docs/proofs/ledger.md`` from the raw SQLite rows with hashlib
    (h₀ = the budget row's hash, h_i = SHA256(h_{i−1}, id, name, amount, note, time, event,
    batch, stated), each part as its repr followed by 0x1F): every stored hash must be the
    replayed one, and :meth:`Ledger.head` the last of them -- so each charge's hash commits to
    the whole history before it, not only to the budget row."""
    import hashlib

    def sha(*parts: object) -> str:
        h = hashlib.sha256()
        for p in parts:
            h.update(repr(p).encode("utf-8") + b"\x1f")
        return h.hexdigest()

    led = _ledger(tmp_path)
    led.create("d", dp.ZCDP(1))
    for i in range(4):
        led.spend("d", dp.ZCDP(Fraction(1, 10 + i)), note=f"q{i}")
    con = sqlite3.connect(led.path)
    name, measure, total, created, h = con.execute(
        "SELECT name, measure, total, created, hash FROM datasets").fetchone()
    assert h == sha(name, measure, total, created, None, "auto")  # relation, rule
    rows = con.execute("SELECT id, dataset, amount, note, time, hash, event, batch, stated "
                       "FROM spends ORDER BY id").fetchall()
    con.close()
    assert len(rows) == 4
    heads = []
    for sid, ds, amount, note, t, stored, event, batch, stated in rows:
        h = sha(h, sid, ds, amount, note, t, event, batch, stated)
        assert stored == h, f"charge id={sid} is not chained to the charge before it"
        heads.append(h)
    assert len(set(heads)) == 4
    assert led.head("d") == (heads[-1], 4)
