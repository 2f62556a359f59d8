"""A persistent privacy-budget ledger that cannot overspend (SQLite, standard library).

Every dataset has a total budget in one measure (``PureDP(ε)``, ``ApproxDP(ε, δ)`` or ``ZCDP(ρ)``).
A release is *charged before it is revealed*: `Ledger.spend` runs in one ``BEGIN IMMEDIATE``
transaction that re-reads every charge, checks the new total against the budget with exact
``Fraction`` arithmetic, and commits the charge; only then may the caller compute and reveal.
A crash after the charge loses budget, never privacy.  Concurrent processes serialise on the
SQLite write lock (WAL journal), so they can never overspend together.

Every charge records its privacy *event* (``dpcert.core.events``, as versioned JSON:
`dpcert.accounting.codec`) beside its basic amount, and the budget is kept by the privacy
filter of `dpcert.accounting.filters`: each charge (one release, or a batch declared
together) is costed by the tightest accountant valid inside it, and the charges — which may be
chosen adaptively — by a filter with a proof of fully adaptive composition.  `Ledger.status`
reports both totals (basic: the sum of amounts; tight: the filter's).  Ledgers of schema 1 (no
events) are migrated when opened: their charges keep their amounts and hashes, and their event
is the amount itself (``PureEvent``/``ApproxEvent``/``ZCDPEvent``).

Rows are stored as exact ``"num/den"`` text.  Each charge carries a SHA-256 hash chained over the
dataset row and all earlier charges; the chain is verified when the ledger is opened and on every
read or spend, and a mismatch raises `LedgerIntegrityError` (accidental edits and
truncations are caught; this is not a defence against a deliberate forger with write access).
The schema version is stored; a ledger written by a newer dpcert is refused.  Proof sketch:
``docs/proofs/ledger.md``.

Examples
--------
>>> import dpcert as dp, tempfile, os
>>> from dpcert.accounting.ledger import Ledger
>>> path = os.path.join(tempfile.mkdtemp(), "budget.sqlite")
>>> led = Ledger(path)
>>> led.create("census", dp.PureDP(1.0))
>>> for _ in range(4):
...     _ = led.spend("census", dp.PureDP(0.25), note="count")
>>> led.remaining("census")
Fraction(0, 1)
>>> led.spend("census", dp.PureDP(0.25))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.BudgetExceeded: dataset 'census': ... remaining ε = 0.0 (by the pure filter)
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dpcert._types import DistanceLike
from dpcert.accounting.codec import event_from_json, event_to_json
from dpcert.accounting.filters import (
    CLASSIC,
    FilterState,
    Quote,
    Release,
    Rule,
    Tally,
    basic_amount,
    check_choice,
    check_relation,
    make_release,
    quote_state,
    tally,
)
from dpcert.core.events import Event, event_from_distance
from dpcert.core.measurement import Measurement
from dpcert.core.measures import ZCDP, ApproxDP, Measure, PureDP, basic_loss, pair_loss, scalar_loss
from dpcert.errors import (
    BudgetExceeded,
    DPCertError,
    InvalidParameter,
    MeasureMismatch,
    UnsupportedEvent,
)

__all__ = ["RELATIONS", "SCHEMA_VERSION", "BudgetStatus", "Ledger", "LedgerIntegrityError",
           "Spend"]

#: Version of the on-disk schema written by this dpcert.
SCHEMA_VERSION = 4

_KINDS: dict[str, type[Measure]] = {"PureDP": PureDP, "ApproxDP": ApproxDP, "ZCDP": ZCDP}

Amount = Fraction | tuple[Fraction, Fraction]


class LedgerIntegrityError(DPCertError):
    """The ledger file is corrupt, was edited outside dpcert, or has a newer schema."""


@dataclass(frozen=True)
class Spend:
    """One charge recorded in the ledger: its basic ``amount``, its privacy ``event`` (for a
    charge written before events were recorded, the amount as an event; ``legacy`` is then
    True), and whether it was a declared ``batch``."""

    id: int
    dataset: str
    amount: Amount
    note: str | None
    time: float
    event: Event | None = None
    batch: bool = False
    legacy: bool = False
    stated: bool = True
    #: SHA-256 hashes of the charge bodies of the certificates this charge pays for (one per
    #: query of a batch, in order; empty when the caller bound none): chained with the charge.
    certificates: tuple[str, ...] = ()
    #: 1-based position of this charge in its dataset's chain, and its chain hash.
    position: int = 0
    hash: str = ""

    def release(self) -> Release:
        """This charge as the privacy filter sees it."""
        assert self.event is not None
        return Release(self.event, self.amount if self.stated else None, self.batch)


@dataclass(frozen=True)
class BudgetStatus:
    """Total, spent and remaining budget of one dataset (exact).

    ``spent``/``remaining`` are by the dataset's privacy filter ``rule`` (the tight totals, see
    `dpcert.accounting.filters`); ``basic_spent`` is the plain sum of the charges'
    amounts (basic composition), shown for comparison; ``spent_lower`` the optimistic end of
    the PLD interval of the spent ε (``None`` when the total is exact).
    """

    dataset: str
    measure: str
    total: Amount
    spent: Amount
    remaining: Amount
    basic_spent: Amount | None = None
    rule: Rule | None = None
    charges: int = 0
    spent_lower: Fraction | None = None
    #: The curator's rule choice, and the Rényi order under the "renyi" rule.
    choice: str = "auto"
    order: float | None = None


def _status(dataset: str, h: _Head, t: Tally) -> BudgetStatus:
    return BudgetStatus(dataset, h.kind, h.total, t.spent, t.remaining, h.basic, t.rule,
                        h.count, t.spent_lower, h.state.choice, h.state.order)


def _amount_of(m: Measure, what: str) -> tuple[str, Amount]:
    for name, cls in _KINDS.items():
        if type(m) is cls:
            return name, basic_loss(m.require_value(what), what)
    raise MeasureMismatch(
        f"{what}={m!r}: the ledger keeps budgets in PureDP, ApproxDP or ZCDP"
    )


def _enc(a: Amount) -> str:
    if isinstance(a, tuple):
        return json.dumps([str(a[0]), str(a[1])])
    return json.dumps(str(a))


def _dec(s: str) -> Amount:
    v = json.loads(s)
    if isinstance(v, list):
        return Fraction(v[0]), Fraction(v[1])
    return Fraction(v)


def _add(a: Amount, b: Amount) -> Amount:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return a[0] + b[0], a[1] + b[1]
    assert isinstance(a, Fraction) and isinstance(b, Fraction)
    return a + b


def _sub(a: Amount, b: Amount) -> Amount:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return a[0] - b[0], a[1] - b[1]
    assert isinstance(a, Fraction) and isinstance(b, Fraction)
    return a - b


def _zero(kind: str) -> Amount:
    return (Fraction(0), Fraction(0)) if kind == "ApproxDP" else Fraction(0)


def describe(kind: str, a: Amount) -> str:
    """A human rendering of an amount in a measure (floats rounded up)."""
    from dpcert._numbers import show_up

    if isinstance(a, tuple):
        return f"ε = {show_up(a[0])}, δ = {show_up(a[1])}"
    sym = "ρ" if kind == "ZCDP" else "ε"
    return f"{sym} = {show_up(a)}"


def _hash(*parts: object) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode("utf-8"))
        h.update(b"\x1f")
    return h.hexdigest()


def _dataset_hash(dataset: str, kind: str, total_s: str, created: float,
                  relation: str | None, rule: str | None = None) -> str:
    """The chain root: the budget row's hash (with its declared relation, when one was, and
    its rule, for datasets created since schema 4)."""
    if rule is not None:
        return _hash(dataset, kind, total_s, created, relation, rule)
    if relation is None:
        return _hash(dataset, kind, total_s, created)
    return _hash(dataset, kind, total_s, created, relation)


def _state_hash(dataset_hash: str, head: str, count: int, basic_s: str, state_s: str) -> str:
    """The hash of a dataset's filter state row, chained to its budget row and to the hash of
    its latest charge (``head``)."""
    return _hash("state", dataset_hash, head, count, basic_s, state_s)


@dataclass(frozen=True)
class _Head:
    """A dataset's budget row and the filter state after its latest charge."""

    kind: str
    total: Amount
    dhash: str
    state: FilterState
    basic: Amount
    last: str
    count: int


def _spend_hash(last: str, sid: int, dataset: str, amount_s: str, note: str | None, t: float,
                event_s: str | None, batch: int, stated: int, cert_s: str | None) -> str:
    """One charge's chain hash; a charge that binds certificates commits to their hashes."""
    if cert_s is None:
        return _hash(last, sid, dataset, amount_s, note, t, event_s, batch, stated)
    return _hash(last, sid, dataset, amount_s, note, t, event_s, batch, stated, cert_s)


def _certs_json(certificate: str | tuple[str, ...] | list[str] | None) -> str | None:
    """The ``cert`` column: a JSON list of SHA-256 hex digests, or ``None``."""
    if certificate is None:
        return None
    hashes = [certificate] if isinstance(certificate, str) else list(certificate)
    if not hashes or not all(isinstance(h, str) and len(h) == 64
                             and all(c in "0123456789abcdef" for c in h) for h in hashes):
        raise InvalidParameter(f"certificate={certificate!r} must be SHA-256 hex digests")
    return json.dumps(hashes)


#: Neighbouring relations a dataset may be kept for (``dpcert.core.events``).
RELATIONS = ("add_remove", "replace_one")


def _relation_name(relation: str | None) -> str | None:
    """Accept ``add_remove``/``replace_one`` and the CLI's ``add-remove``/``replace``."""
    if relation is None:
        return None
    r = {"add-remove": "add_remove", "replace": "replace_one"}.get(relation, relation)
    if r not in RELATIONS:
        raise InvalidParameter(f"relation={relation!r} must be one of {list(RELATIONS)} "
                               "(or the CLI's 'add-remove', 'replace')")
    return str(r)


def _migrate_v2(con: sqlite3.Connection) -> None:
    """Schema 2 → 3 in the caller's transaction: a dataset's declared neighbouring relation and
    a charge's certificate hashes (both NULL on old rows, whose hashes keep their formula)."""
    if "relation" not in {r[1] for r in con.execute("PRAGMA table_info(datasets)")}:
        con.execute("ALTER TABLE datasets ADD COLUMN relation TEXT")
    if "cert" not in {r[1] for r in con.execute("PRAGMA table_info(spends)")}:
        con.execute("ALTER TABLE spends ADD COLUMN cert TEXT")
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))


def _migrate_v3(con: sqlite3.Connection) -> None:
    """Schema 3 → 4 in the caller's transaction: a dataset's rule column (NULL on old rows: the
    ``classic`` rule they were kept by), the ``filter_state`` table and the charges' index.  The
    state rows are written by the caller (it replays each verified chain once)."""
    if "rule" not in {r[1] for r in con.execute("PRAGMA table_info(datasets)")}:
        con.execute("ALTER TABLE datasets ADD COLUMN rule TEXT")
    _create_v4(con)
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))


def _create_v4(con: sqlite3.Connection) -> None:
    con.execute("CREATE TABLE IF NOT EXISTS filter_state (dataset TEXT PRIMARY KEY REFERENCES "
                "datasets(name), count INTEGER NOT NULL, head TEXT NOT NULL, basic TEXT NOT "
                "NULL, state TEXT NOT NULL, hash TEXT NOT NULL)")
    con.execute("CREATE INDEX IF NOT EXISTS spends_by_dataset ON spends(dataset, id)")


def _write_state(con: sqlite3.Connection, dataset: str, h: _Head) -> None:
    basic_s, state_s = _enc(h.basic), h.state.to_json()
    con.execute("INSERT OR REPLACE INTO filter_state VALUES (?, ?, ?, ?, ?, ?)",
                (dataset, h.count, h.last, basic_s, state_s,
                 _state_hash(h.dhash, h.last, h.count, basic_s, state_s)))


def _migrate_v1(con: sqlite3.Connection) -> None:
    """Schema 1 → 2 in the caller's transaction: add the event, batch and stated columns.

    Old rows keep their amounts, notes, times and hashes (their hash formula is the v1 one,
    recognised by ``event IS NULL AND batch = 0``); nothing is rewritten, so the chain stays
    valid and a failed migration rolls back whole.
    """
    cols = {r[1] for r in con.execute("PRAGMA table_info(spends)")}
    if "event" not in cols:
        con.execute("ALTER TABLE spends ADD COLUMN event TEXT")
    if "batch" not in cols:
        con.execute("ALTER TABLE spends ADD COLUMN batch INTEGER NOT NULL DEFAULT 0")
    if "stated" not in cols:
        con.execute("ALTER TABLE spends ADD COLUMN stated INTEGER NOT NULL DEFAULT 1")
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))


class Ledger:
    """A budget ledger stored in the SQLite file at ``path`` (created if missing).

    Not a frozen dataclass: it is a handle on a file.  Each call opens its own connection, so a
    ``Ledger`` may be shared across threads and many processes may use the same file.
    """

    def __init__(self, path: str, *, timeout: float = 60.0,
                 read_only: bool | None = None) -> None:
        import os

        self.path = str(path)
        self.timeout = float(timeout)
        if read_only is None:  # a ledger file we may not write is opened for reading
            read_only = os.path.exists(self.path) and not os.access(self.path, os.W_OK)
        #: Opened for reading only: every read works, ``create`` and ``spend`` are refused.
        self.read_only = bool(read_only)
        if self.read_only and not os.path.exists(self.path):
            raise InvalidParameter(f"path={self.path!r}: no ledger to open read-only")
        with self._tx() as con:
            self._init_schema(con)
            for (name,) in con.execute("SELECT name FROM datasets").fetchall():
                self._verify(con, name)

    # -- plumbing ---------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if not self.read_only:
            return sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        from pathlib import Path

        uri = Path(self.path).resolve().as_uri()
        try:
            con = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=self.timeout,
                                  isolation_level=None)
            con.execute("SELECT 1 FROM sqlite_master LIMIT 1")
            return con
        except sqlite3.Error:  # a WAL ledger in a folder we cannot write: read a snapshot
            return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True,
                                   timeout=self.timeout, isolation_level=None)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        try:
            con = self._connect()
        except sqlite3.Error as e:
            raise LedgerIntegrityError(f"cannot open ledger path={self.path!r}: {e}") from e
        try:
            if self.read_only:
                con.execute("BEGIN")
            else:
                con.execute("PRAGMA journal_mode=WAL")
                con.execute("PRAGMA synchronous=FULL")
                con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        except sqlite3.DatabaseError as e:
            ro = " (opened read-only: create and spend are refused)" if self.read_only else ""
            raise LedgerIntegrityError(f"ledger path={self.path!r} is not usable{ro}: {e}"
                                       ) from e
        finally:
            con.close()

    def _init_schema(self, con: sqlite3.Connection) -> None:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            con.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            con.execute(
                "CREATE TABLE datasets (name TEXT PRIMARY KEY, measure TEXT NOT NULL, "
                "total TEXT NOT NULL, created REAL NOT NULL, hash TEXT NOT NULL, relation TEXT, "
                "rule TEXT)"
            )
            con.execute(
                "CREATE TABLE spends (id INTEGER PRIMARY KEY AUTOINCREMENT, dataset TEXT NOT "
                "NULL REFERENCES datasets(name), amount TEXT NOT NULL, note TEXT, time REAL NOT "
                "NULL, hash TEXT NOT NULL, event TEXT, batch INTEGER NOT NULL DEFAULT 0, "
                "stated INTEGER NOT NULL DEFAULT 1, cert TEXT)"
            )
            _create_v4(con)
            self._version = SCHEMA_VERSION
            return
        if "meta" not in tables:
            raise LedgerIntegrityError(f"path={self.path!r} is not a dpcert ledger")
        row = con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            raise LedgerIntegrityError(f"ledger path={self.path!r} has no schema version")
        version = int(row[0])
        if version > SCHEMA_VERSION:
            raise LedgerIntegrityError(
                f"ledger path={self.path!r} has schema version {version}, newer than this "
                f"dpcert understands ({SCHEMA_VERSION}); upgrade dpcert"
            )
        #: A schema-1 ledger opened read-only is read as it is (no event columns).
        self._v1_view = version == 1 and self.read_only
        #: The schema read: a read-only ledger is read as it is, a writable one is migrated.
        self._version = version if self.read_only else SCHEMA_VERSION
        if version == 1 and not self.read_only:
            _migrate_v1(con)
        if version < 3 and not self.read_only:
            _migrate_v2(con)
        if version < 4 and not self.read_only:
            _migrate_v3(con)
            for (name,) in con.execute("SELECT name FROM datasets").fetchall():
                _write_state(con, name, self._replay(con, name))

    def _budget_row(self, con: sqlite3.Connection, dataset: str
                    ) -> tuple[str, Amount, str, str | None, str]:
        """Read and verify a dataset's budget row: (kind, total, hash, relation, rule choice)."""
        version = getattr(self, "_version", SCHEMA_VERSION)
        cols = f"{'relation' if version >= 3 else 'NULL'}, {'rule' if version >= 4 else 'NULL'}"
        row = con.execute(
            f"SELECT measure, total, created, hash, {cols} FROM "  # cols: constants
            "datasets WHERE name = ?", (dataset,)
        ).fetchone()
        if row is None:
            raise InvalidParameter(f"dataset={dataset!r} is not in the ledger {self.path!r}")
        kind, total_s, created, h, relation, rule = row
        if kind not in _KINDS or h != _dataset_hash(dataset, kind, total_s, created, relation,
                                                    rule):
            raise LedgerIntegrityError(f"dataset={dataset!r}: its budget row was altered")
        return kind, _dec(total_s), h, relation, rule if rule is not None else CLASSIC

    def _replay(self, con: sqlite3.Connection, dataset: str) -> _Head:
        """The head of ``dataset`` computed from its whole verified chain (O(history))."""
        kind, total, spends, last = self._load(con, dataset)
        _, _, dhash, relation, choice = self._budget_row(con, dataset)
        state = FilterState.start(kind, total, choice, relation)
        basic = _zero(kind)
        for s in spends:
            state = state.step(s.release())[1]
            basic = _add(basic, s.amount)
        return _Head(kind, total, dhash, state, basic, last, len(spends))

    def _head(self, con: sqlite3.Connection, dataset: str) -> _Head:
        """The head of ``dataset`` from its state row: reads the budget row, the state row and
        the latest charge's hash (O(1) in the history); checks that they chain together.  A
        ledger without state rows (schema ≤ 3 opened read-only) is replayed."""
        kind, total, dhash, _, _ = self._budget_row(con, dataset)
        if getattr(self, "_version", SCHEMA_VERSION) < 4:
            return self._replay(con, dataset)
        row = con.execute("SELECT count, head, basic, state, hash FROM filter_state WHERE "
                          "dataset = ?", (dataset,)).fetchone()
        if row is None:
            raise LedgerIntegrityError(f"dataset={dataset!r}: its filter state is missing")
        count, head, basic_s, state_s, sh = row
        if sh != _state_hash(dhash, head, count, basic_s, state_s):
            raise LedgerIntegrityError(f"dataset={dataset!r}: its filter state was altered")
        last = con.execute("SELECT hash FROM spends WHERE dataset = ? ORDER BY id DESC LIMIT 1",
                           (dataset,)).fetchone()
        if (last[0] if last else dhash) != head:
            raise LedgerIntegrityError(
                f"dataset={dataset!r}: its latest charge is not the one its filter state "
                "records (ledger altered)")
        state = FilterState.from_json(state_s)
        if state.kind != kind or state.total != total or state.count != count:
            raise LedgerIntegrityError(f"dataset={dataset!r}: its filter state does not match "
                                       "its budget")
        return _Head(kind, total, dhash, state, _dec(basic_s), head, count)

    def verify(self, dataset: str | None = None) -> int:
        """Verify the whole chain of ``dataset`` (every dataset when ``None``): every charge's
        hash, and the stored filter state against a replay of every charge (done when the
        ledger is opened).  Returns the number of charges verified; raises
        [`LedgerIntegrityError`][dpcert.accounting.ledger.LedgerIntegrityError] on any mismatch."""
        with self._tx() as con:
            names = ([dataset] if dataset is not None else
                     [r[0] for r in con.execute("SELECT name FROM datasets ORDER BY name")])
            return sum(self._verify(con, name) for name in names)

    def _verify(self, con: sqlite3.Connection, name: str) -> int:
        replayed = self._replay(con, name)
        if getattr(self, "_version", SCHEMA_VERSION) < 4:
            return replayed.count
        stored = self._head(con, name)
        if (stored.state, stored.basic, stored.last, stored.count) != (
                replayed.state, replayed.basic, replayed.last, replayed.count):
            raise LedgerIntegrityError(
                f"dataset={name!r}: its filter state differs from a replay of its charges "
                "(ledger altered)")
        return replayed.count

    def _load(self, con: sqlite3.Connection,
              dataset: str) -> tuple[str, Amount, list[Spend], str]:
        """Read and verify one dataset: (kind, total, spends, last hash)."""
        kind, total, h, _, _ = self._budget_row(con, dataset)
        spends: list[Spend] = []
        cols = ("NULL, 0, 1" if getattr(self, "_v1_view", False) else "event, batch, stated")
        cols += ", cert" if getattr(self, "_version", SCHEMA_VERSION) >= 3 else ", NULL"
        for sid, amount_s, note, t, sh, event_s, batch, stated, cert_s in con.execute(
            f"SELECT id, amount, note, time, hash, {cols} FROM spends "  # cols: a constant
            "WHERE dataset = ? ORDER BY id",
            (dataset,),
        ):
            legacy = event_s is None and batch == 0 and stated == 1 and cert_s is None
            expect = (_hash(h, sid, dataset, amount_s, note, t) if legacy
                      else _spend_hash(h, sid, dataset, amount_s, note, t, event_s, batch,
                                       stated, cert_s))
            if sh != expect:
                raise LedgerIntegrityError(
                    f"dataset={dataset!r}: charge id={sid} fails its checksum (ledger altered)"
                )
            h = sh
            amount = _dec(amount_s)
            if legacy:
                event = event_from_distance(_KINDS[kind](), amount)
            else:
                try:
                    event = event_from_json(event_s)
                except DPCertError as e:
                    raise UnsupportedEvent(
                        f"dataset={dataset!r}: charge id={sid} records an event this dpcert "
                        f"cannot read ({e}); nothing was changed — upgrade dpcert"
                    ) from e
            certs = tuple(json.loads(cert_s)) if cert_s is not None else ()
            spends.append(Spend(sid, dataset, amount, note, t, event, bool(batch), legacy,
                                bool(stated), certs, len(spends) + 1, sh))
        return kind, total, spends, h

    # -- public API -------------------------------------------------------------------------
    def create(self, dataset: str, total: Measure, *, relation: str | None = None,
               rule: str = "auto",
               then: Callable[[sqlite3.Connection, str, float], None] | None = None) -> None:
        """Register ``dataset`` with the budget ``total`` (e.g. ``PureDP(1.0)``).

        ``relation`` declares the neighbouring relation every charge must be stated for
        (``"add_remove"`` or ``"replace_one"``); ``None`` lets the first charge stated for a
        relation fix it.  Charges stated for another relation are refused (``docs/proofs/
        ledger.md``).  ``then(connection, dataset_hash, created)`` runs in the same transaction
        (a source binding is written with its dataset, or neither is).  ``rule`` is the
        curator's choice of privacy filter (`dpcert.accounting.filters.CHOICES`; ``docs/
        proofs/filters.md``), fixed for the dataset's life.
        """
        if not isinstance(dataset, str) or not dataset:
            raise InvalidParameter(f"dataset={dataset!r} must be a non-empty string")
        kind, amount = _amount_of(total, "total")
        rel = _relation_name(relation)
        choice = check_choice(kind, amount, rule)
        with self._tx() as con:
            if con.execute("SELECT 1 FROM datasets WHERE name = ?", (dataset,)).fetchone():
                raise InvalidParameter(f"dataset={dataset!r} already has a budget")
            created = time.time()
            enc = _enc(amount)
            dhash = _dataset_hash(dataset, kind, enc, created, rel, choice)
            con.execute(
                "INSERT INTO datasets (name, measure, total, created, hash, relation, rule) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (dataset, kind, enc, created, dhash, rel, choice),
            )
            _write_state(con, dataset, _Head(kind, amount, dhash,
                                             FilterState.start(kind, amount, choice, rel),
                                             _zero(kind), dhash, 0))
            if then is not None:
                then(con, dhash, created)

    def spend(self, dataset: str, amount: Measure | None, note: str | None = None, *,
              event: Event | None = None, batch: bool = False,
              certificate: str | tuple[str, ...] | list[str] | None = None) -> Spend:
        """Charge a release to ``dataset`` atomically; raise `BudgetExceeded` if the
        dataset's privacy filter does not admit it (nothing is recorded then).  Reveal results
        only after this returns.

        Parameters
        ----------
        amount
            The release's stated cost in the budget's measure (e.g. ``ApproxDP(0.5, 1e-7)``),
            or ``None`` to derive it from ``event`` by basic composition.
        event
            What the release runs (``Measurement.event(d_in)``; a ``ComposedEvent`` for a batch);
            when omitted, the amount itself (``PureEvent``/``ApproxEvent``/``ZCDPEvent``).
        batch
            Whether the event is a batch declared in advance (recorded; the charge's cost is
            computed by the tightest accountant valid inside it either way).
        certificate
            The SHA-256 hex digest of the charge body of the certificate this charge pays for
            (a list for a batch, one per query): stored in the chain with the charge
            (`dpcert.frame.binding.charge_body_hash`).
        """
        if note is not None and not isinstance(note, str):
            raise InvalidParameter(f"note={note!r} must be a string")
        kind_a = _amount_of(amount, "amount")[0] if amount is not None else None
        cert_s = _certs_json(certificate)
        with self._tx() as con:
            head = self._head(con, dataset)
            kind, total, last = head.kind, head.total, head.last
            if kind_a is not None and kind != kind_a:
                raise MeasureMismatch(
                    f"dataset={dataset!r} has a {kind} budget; amount={amount!r} is {kind_a}"
                )
            release = make_release(kind, event, amount, batch)
            check_relation(head.state.relation, release.event, f"dataset {dataset!r}")
            before = head.state.tally()
            point, state = head.state.step(release)
            after = state.tally((point,))
            value = release.amount
            if value is None:
                try:
                    value = basic_amount(kind, release.event)
                except UnsupportedEvent:
                    value = tally(kind, total, [release], head.state.choice).spent
            if not after.fits:
                raise BudgetExceeded(
                    f"dataset {dataset!r}: spending {describe(kind, value)} would exceed the "
                    f"budget {describe(kind, total)}; remaining {describe(kind, before.remaining)}"
                    f" (by the {after.rule} filter)"
                )
            t = time.time()
            enc = _enc(value)
            ev_s = event_to_json(release.event)
            b, st = int(release.batch), int(release.amount is not None)
            cur = con.execute(
                "INSERT INTO spends (dataset, amount, note, time, hash, event, batch, stated, "
                "cert) VALUES (?, ?, ?, ?, '', ?, ?, ?, ?)",
                (dataset, enc, note, t, ev_s, b, st, cert_s),
            )
            sid = int(cur.lastrowid or 0)
            sh = _spend_hash(last, sid, dataset, enc, note, t, ev_s, b, st, cert_s)
            con.execute("UPDATE spends SET hash = ? WHERE id = ?", (sh, sid))
            _write_state(con, dataset, _Head(kind, total, head.dhash, state,
                                             _add(head.basic, value), sh, head.count + 1))
        certs = tuple(json.loads(cert_s)) if cert_s is not None else ()
        return Spend(sid, dataset, value, note, t, release.event, release.batch, False,
                     bool(st), certs, head.count + 1, sh)

    def charge(self, dataset: str, event: Event, note: str | None = None, *,
               batch: bool = False) -> Spend:
        """Charge ``event`` (its amount derived by basic composition); see `spend`."""
        return self.spend(dataset, None, note, event=event, batch=batch)

    def quote(self, dataset: str, event: Event, amount: Measure | None = None, *,
              batch: bool = False) -> Quote:
        """What ``event`` would cost next, without charging: ``{"basic": ..., "tight": ...,
        "fits": ..., "rule": ..., "spent_after": ...}`` (basic: ``None`` when the event has no
        basic statement in the budget's measure; tight: its cost under the filter)."""
        with self._tx() as con:
            head = self._head(con, dataset)
        release = make_release(head.kind, event, amount, batch)
        check_relation(head.state.relation, release.event, f"dataset {dataset!r}")
        return quote_state(head.state, release)

    def status(self, dataset: str) -> BudgetStatus:
        """Total, spent and remaining budget of ``dataset`` (from its verified head state;
        [`verify`][dpcert.verify] checks the whole chain)."""
        with self._tx() as con:
            h = self._head(con, dataset)
        return _status(dataset, h, h.state.tally())

    def status_at(self, dataset: str, position: int) -> BudgetStatus:
        """The status of ``dataset`` right after its ``position``-th charge (1-based; 0: none):
        what a certificate of that charge recorded as remaining (verified chain)."""
        with self._tx() as con:
            h = self._head(con, dataset)
            if isinstance(position, bool) or not isinstance(position, int) or not (
                    0 <= position <= h.count):
                raise InvalidParameter(f"position={position!r} must be an integer in "
                                       f"[0, {h.count}] (the charges of {dataset!r})")
            if position == h.count:  # the head: O(1)
                return _status(dataset, h, h.state.tally())
            kind, total, spends, _ = self._load(con, dataset)
            choice = self._budget_row(con, dataset)[4]
        done = spends[:position]
        basic = _zero(kind)
        for s in done:
            basic = _add(basic, s.amount)
        t = tally(kind, total, [s.release() for s in done], choice)
        return BudgetStatus(dataset, kind, total, t.spent, t.remaining, basic, t.rule,
                            len(done), t.spent_lower)

    def remaining(self, dataset: str) -> Amount:
        """The exact budget left: ``Fraction`` (ε or ρ) or ``(ε, δ)``."""
        return self.status(dataset).remaining

    def history(self, dataset: str) -> list[Spend]:
        """Every charge to ``dataset``, oldest first (verified)."""
        with self._tx() as con:
            return self._load(con, dataset)[2]

    def head(self, dataset: str) -> tuple[str, int]:
        """The verified chain head of ``dataset`` (the hash of its latest charge, or of its
        budget row) and its number of charges.  Recorded in every release certificate: a ledger
        rolled back to an earlier state shows a shorter chain than an artifact already has."""
        with self._tx() as con:
            h = self._head(con, dataset)
        return h.last, h.count

    def relation(self, dataset: str) -> str | None:
        """The neighbouring relation ``dataset`` is kept for: declared at `create`, else
        that of its first charge stated for one, else ``None`` (not fixed yet)."""
        with self._tx() as con:
            return self._head(con, dataset).state.relation

    def rule(self, dataset: str) -> str:
        """The curator's rule choice for ``dataset`` (``"classic"`` for a dataset created
        before rules were chosen)."""
        with self._tx() as con:
            return self._head(con, dataset).state.choice

    def datasets(self) -> list[str]:
        """Names of the datasets with a budget."""
        with self._tx() as con:
            return [r[0] for r in con.execute("SELECT name FROM datasets ORDER BY name")]

    def run(self, dataset: str, measurement: Measurement, data: object, d_in: DistanceLike = 1,
            note: str | None = None) -> Any:
        """Charge ``measurement.map(d_in)`` to ``dataset``, then run it on ``data``.

        The charge commits before the measurement runs (charge before reveal).
        """
        d_out = measurement.map(d_in)
        measure = measurement.output_measure
        if isinstance(measure, ApproxDP):
            amount: Measure = ApproxDP(*pair_loss(d_out))
        elif isinstance(measure, (PureDP, ZCDP)):
            amount = type(measure)(scalar_loss(d_out))
        else:
            raise MeasureMismatch(f"measurement in {type(measure).__name__} cannot be charged")
        self.spend(dataset, amount, note=note if note is not None else measurement.name,
                   event=measurement.event(d_in))
        return measurement(data)

    def __repr__(self) -> str:
        return f"Ledger({self.path!r})"
