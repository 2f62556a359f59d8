"""The curator's binding of a data source to a ledger dataset.

``dpcert budget init LEDGER DATASET --data SOURCE`` records, next to the dataset's budget, *which*
data that budget protects: the source's resolved location (absolute real path), a fingerprint of
its schema (column names and types as dpcert reads them; no rows), the privacy unit when the
curator names one, the column types the curator declared for reading it, and the accounting rule
the dataset's privacy filter uses.  A release then spends that budget only on that source: a
different path or schema is refused before anything is charged (`check_binding`).

The binding lives in its own table ``bindings`` of the ledger file (created when the first
binding is written; ledgers without one read as unbound), one row per dataset, written once, with
a checksum chained to the dataset's budget row so that an edit outside dpcert is detected.

Examples
--------
>>> import os, tempfile
>>> from dpcert.core.measures import PureDP
>>> from dpcert.accounting.ledger import Ledger
>>> path = os.path.join(tempfile.mkdtemp(), "budget.sqlite")
>>> led = Ledger(path)
>>> b = Binding("/data/people.csv", "sha256:ab12", "pure", privacy_unit="pid")
>>> create_bound(led, "people", PureDP(1), b)
>>> binding_of(led, "people").location
'/data/people.csv'
>>> check_binding(b, "/data/other.csv", "sha256:ab12")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.BindingMismatch: data='/data/other.csv' is not the source bound to ...
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from dpcert._types import JSON
from dpcert.core.measures import Measure, basic_loss
from dpcert.errors import BindingMismatch, InvalidParameter

if TYPE_CHECKING:
    from dpcert.accounting.ledger import Ledger

__all__ = ["Binding", "accounting_rule", "binding_of", "check_binding", "create_bound"]


@dataclass(frozen=True)
class Binding:
    """What a ledger dataset's budget protects: one source, read one way.

    ``location`` is the absolute real path of the source, ``fingerprint`` the hash of its
    schema (``sha256:...``), ``rule`` the name of the accounting rule, ``privacy_unit`` the
    column identifying a person (``None``: not fixed by the curator), ``types`` the column types
    the curator declared for reading a CSV file.
    """

    location: str
    fingerprint: str
    rule: str
    privacy_unit: str | None = None
    types: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        """The binding as a JSON object."""
        return asdict(self)


def accounting_rule(total: Measure, choice: str = "auto") -> str:
    """The name of the privacy-filter rule that accounts for a budget ``total`` under the
    curator's ``choice`` (`dpcert.accounting.filters.choose_rule`;
    ``docs/proofs/filters.md``).

    >>> from dpcert.core.measures import ApproxDP
    >>> accounting_rule(ApproxDP(1, 1e-6))[:46]
    'renyi (gdp when the first release is Gaussian '
    >>> accounting_rule(ApproxDP(1, 1e-6), "basic")
    'approx'
    """
    from dpcert.accounting.filters import check_choice, choose_rule

    value = basic_loss(total.require_value("total"), "total")
    kind = type(total).__name__
    check_choice(kind, value, choice)
    rule = choose_rule(kind, value, None, choice)
    if choice == "auto" and rule == "renyi":
        return ("renyi (gdp when the first release is Gaussian only; approx when it is a "
                "declared batch or approx admits as many releases like it)")
    return str(rule)


def _row_hash(dataset_hash: str, dataset: str, payload: str, created: float) -> str:
    from dpcert.accounting.ledger import _hash

    return _hash("binding", dataset_hash, dataset, payload, created)


def _ensure_table(con: sqlite3.Connection) -> None:
    con.execute("CREATE TABLE IF NOT EXISTS bindings (dataset TEXT PRIMARY KEY REFERENCES "
                "datasets(name), binding TEXT NOT NULL, created REAL NOT NULL, "
                "hash TEXT NOT NULL)")


def create_bound(ledger: Ledger, dataset: str, total: Measure, binding: Binding, *,
                 relation: str | None = None, rule: str = "auto") -> None:
    """Create ``dataset`` with the budget ``total`` (and neighbouring ``relation``) in ``ledger``
    and bind it to ``binding``, in one transaction (both or neither are written)."""
    if not isinstance(binding, Binding):
        raise InvalidParameter(f"binding={binding!r} must be a Binding")
    payload = json.dumps(binding.to_json(), sort_keys=True)

    def bind(con: sqlite3.Connection, dhash: str, created: float) -> None:
        _ensure_table(con)
        con.execute("INSERT INTO bindings VALUES (?, ?, ?, ?)",
                    (dataset, payload, created, _row_hash(dhash, dataset, payload, created)))

    ledger.create(dataset, total, relation=relation, rule=rule, then=bind)


def binding_of(ledger: Ledger, dataset: str) -> Binding | None:
    """The binding of ``dataset`` (``None`` when the curator bound no source to it); a binding
    row edited outside dpcert raises `LedgerIntegrityError`."""
    from dpcert.accounting.ledger import LedgerIntegrityError

    ledger.status(dataset)  # the dataset exists and its budget row is intact
    with ledger._tx() as con:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "bindings" not in tables:
            return None
        row = con.execute("SELECT b.binding, b.created, b.hash, d.hash FROM bindings b JOIN "
                          "datasets d ON d.name = b.dataset WHERE b.dataset = ?",
                          (dataset,)).fetchone()
    if row is None:
        return None
    payload, created, h, dhash = row
    if h != _row_hash(dhash, dataset, payload, created):
        raise LedgerIntegrityError(f"dataset={dataset!r}: its data binding was altered")
    return Binding(**json.loads(payload))


def check_binding(binding: Binding, location: str, fingerprint: str,
                  dataset: str | None = None) -> None:
    """Refuse a source other than the bound one: ``location`` (absolute real path) and
    ``fingerprint`` must both equal the binding's.  Raises
    `BindingMismatch` naming what differs."""
    where = f"ledger dataset {dataset!r}" if dataset else "the ledger dataset"
    if location != binding.location:
        raise BindingMismatch(
            f"data={location!r} is not the source bound to {where} ({binding.location!r}); "
            "nothing was charged")
    if fingerprint != binding.fingerprint:
        raise BindingMismatch(
            f"data={location!r}: its schema fingerprint {fingerprint} differs from the one bound "
            f"to {where} ({binding.fingerprint}): the columns or their types changed; nothing "
            "was charged")
