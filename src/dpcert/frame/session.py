"""The user-facing Session: declare the privacy unit and budget once, then release queries.

Examples
--------
>>> import polars as pl
>>> import dpcert as dp
>>> df = pl.DataFrame({"pid": [1, 1, 2, 3, 4], "region": ["n", "s", "n", "s", "n"],
...                    "income": [10.0, 20.0, 30.0, 40.0, 50.0]})
>>> sess = dp.Session(df, privacy_unit="pid", budget=dp.ZCDP(1.0))
>>> q = (sess.query().group_by("region", keys=["n", "s"])
...          .agg(dp.count(), dp.sum("income", bounds=(0, 100)))
...          .bound_contributions(max_groups=1, max_rows_per_group=1))
>>> res = q.release(budget=dp.ZCDP(0.5))
>>> res.to_polars().columns[:4]
['region', 'count', 'count_ci_low', 'count_ci_high']
>>> float(sess.spent) <= 0.5
True
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, TypedDict, cast

import polars as pl

from dpcert._validate import check_int, check_probability
from dpcert.accounting.filters import PrivacyFilter, Quote
from dpcert.core.events import ComposedEvent
from dpcert.core.measurement import Measurement
from dpcert.core.measures import Measure, basic_loss
from dpcert.errors import BackendUnavailable, BudgetExceeded, InvalidParameter, ReleaseFailed
from dpcert.frame.admit import admit_plan
from dpcert.frame.certificate import release_certificate
from dpcert.frame.checks import check_quantile_cells, check_schema
from dpcert.frame.io import to_lazy
from dpcert.frame.ledger import BudgetMismatchWarning, open_ledger, release_failed
from dpcert.frame.plan import DEFAULT_AUTO_SHARE, Aggregate, Quantile, QueryPlan
from dpcert.frame.result import ReleaseMixin
from dpcert.frame.source import check_bound_source
from dpcert.operator import UNKNOWN, FailureClass, report_failure
from dpcert.samplers import EntropySource

if TYPE_CHECKING:
    from os import PathLike

    from pyspark.sql import DataFrame as SparkDataFrame

    from dpcert._numbers import Number
    from dpcert._types import JSON
    from dpcert.accounting.filters import Amount
    from dpcert.accounting.ledger import Ledger
    from dpcert.backends.base import FrameOps
    from dpcert.core.events import Event
    from dpcert.frame.aliases import (
        Bounds,
        EngineFrame,
        FrameLike,
        KeyList,
        Keys,
        KeyValue,
        PolarsType,
        Predicate,
        PublicKey,
    )
    from dpcert.frame.continual import ContinualQuery
    from dpcert.frame.metadata import TableMetadata
    from dpcert.frame.public_join import PublicJoin
    from dpcert.frame.sql_post import SqlPost

__all__ = ["Cost", "Query", "Release", "Session", "require_budget"]

#: This module's logger (``dpcert.frame.session``): INFO on each charge, DEBUG on compiling.
#: It never logs data; dpcert adds no handlers (configure ``logging`` to see it).
LOG = logging.getLogger(__name__)

#: ``bodies(session_spent_after, ledger_total)``: the charge bodies a charge pays for.
Bodies = Callable[["Amount", "Amount | None"], list[dict[str, "JSON"]]]


class Cost(TypedDict):
    """What `Query.cost` quotes: the release's amount, and per privacy filter (the session's,
    the ledger's or None) its tight cost, whether it fits, and the filter's rule."""

    basic: Amount
    session: Quote
    ledger: Quote | None


def require_budget(budget: object, what: str = "budget") -> Measure:
    """``budget`` if it is a privacy measure with a value; a bare number is refused with the
    fix, since it could mean ε, ρ or ε with a δ.

    >>> require_budget(0.1)
    Traceback (most recent call last):
    ...
    dpcert.errors.InvalidParameter: budget=0.1 is a bare number: say what it measures, \
dp.PureDP(0.1) (ε), dp.ZCDP(0.1) (ρ) or dp.ApproxDP(0.1, delta) (ε, δ)
    """
    if isinstance(budget, Measure):
        budget.require_value(what)
        return budget
    if isinstance(budget, (int, float, Fraction)) and not isinstance(budget, bool):
        raise InvalidParameter(
            f"{what}={budget!r} is a bare number: say what it measures, dp.PureDP({budget!r}) "
            f"(ε), dp.ZCDP({budget!r}) (ρ) or dp.ApproxDP({budget!r}, delta) (ε, δ)")
    raise InvalidParameter(f"{what}={budget!r} must be PureDP(ε), ApproxDP(ε, δ) or ZCDP(ρ)")


@dataclass(frozen=True)
class Release(ReleaseMixin):
    """The result of `Query.release`: a table of estimates with intervals, and a
    certificate (a JSON-serialisable dict)."""

    table: pl.DataFrame
    certificate: dict[str, JSON]

    def __repr__(self) -> str:
        t = self.table
        cert = self.certificate
        budget = cert.get("budget")
        measure = budget.get("measure", "") if isinstance(budget, dict) else ""
        spent = _charged_text(cert.get("charged"))  # rounded up: never understates
        level = cert.get("confidence_level")
        lvl = (f", {100 * float(level):g}% intervals"
               if isinstance(level, (int, float, str)) else "")
        return (f"Release({t.height} rows x {t.width} columns {t.columns[:6]}"
                f"{' ...' if t.width > 6 else ''}; cost {measure} {spent}{lvl})")


def _with_metadata(metadata: str | PathLike[str] | TableMetadata, privacy_unit: str | None,
                   name: str | None) -> tuple[TableMetadata, str | None, str | None]:
    """The loaded metadata, and the privacy unit and table name it implies (an explicit
    privacy unit must agree with it; an explicit name wins)."""
    from dpcert.frame.metadata import load_metadata

    meta = load_metadata(metadata)
    if privacy_unit is None:
        privacy_unit = meta.unit
    elif privacy_unit != meta.unit:
        raise InvalidParameter(f"privacy_unit={privacy_unit!r} but the metadata's "
                               f"privacy_unit is {meta.unit!r}")
    return meta, privacy_unit, meta.name if name is None else name


def _engine_frame(backend: FrameOps, data: FrameLike, schema: Mapping[str, PolarsType] | None
                  ) -> EngineFrame:
    """``data`` as the backend's frame: a Polars LazyFrame (pandas, Arrow, paths), a DuckDB
    relation, or the Spark DataFrame itself; ``schema`` applies to file paths only."""
    if backend.name == "polars":
        return to_lazy(data, schema)
    if schema is not None:
        raise InvalidParameter(f"schema={schema!r} applies to .csv/.parquet paths only, "
                               f"not to {backend.name} data")
    if backend.name == "duckdb":
        from dpcert.backends.duckdb import to_duck

        return to_duck(data)
    return cast("SparkDataFrame", data)  # Spark: the session's DataFrame itself


class Session:
    """A private dataset with a privacy unit and a total budget.

    Parameters
    ----------
    data
        Polars LazyFrame/DataFrame, or a ``.csv``/``.parquet`` path; a pyspark DataFrame
        (`dpcert.backends.spark`); a DuckDB relation, or a ``(connection, "table")`` pair
        (`dpcert.backends.duckdb`).
    privacy_unit
        Column identifying a person; ``None`` when every row is a different person.
    budget
        Total budget: ``PureDP(ε)``, ``ApproxDP(ε, δ)`` or ``ZCDP(ρ)``.
    ledger
        Optional path of a persistent budget ledger (`dpcert.accounting.ledger.Ledger`);
        every release is charged there before it is computed.
    dataset
        The dataset's name in ``ledger`` (required with it).
    name
        The table's name in SQL queries (`sql`); default the metadata's, else ``data``.
    metadata
        A table metadata file (``.toml``/``.yaml``) or `TableMetadata`: the privacy unit, column
        types, bounds, public key sets and
        contribution bounds, admitted against the schema here (`dpcert.frame.metadata`).
    public
        Public tables (no privacy unit in them) that SQL queries may ``JOIN`` on a key unique
        in them, by table name (`dpcert.frame.public_join`).
    rule
        The session's privacy filter across its releases (``"auto"``, ``"basic"``,
        ``"renyi"`` or ``"gdp"``; `dpcert.accounting.filters`, ``docs/proofs/filters.md``).
        ``"auto"`` keeps an ``ApproxDP`` budget by the Gaussian-DP filter when the first release
        is Gaussian only, by basic composition of PLD points when it is a declared batch or
        when that admits as many releases like it, else by the Rényi filter.  A ledger dataset
        keeps its own rule (``budget init --rule``).
    """

    def __init__(self, data: FrameLike, privacy_unit: str | None = None, *, budget: Measure,
                 ledger: str | None = None, dataset: str | None = None,
                 schema: Mapping[str, PolarsType] | None = None, name: str | None = None,
                 rule: str = "auto", metadata: str | PathLike[str] | TableMetadata | None = None,
                 public: Mapping[str, FrameLike] | None = None,
                 _source: EntropySource | None = None) -> None:
        budget = require_budget(budget)
        #: The table's metadata (`dpcert.frame.metadata`), or None.
        self.metadata: TableMetadata | None = None
        if metadata is not None:
            self.metadata, privacy_unit, name = _with_metadata(metadata, privacy_unit, name)
        name = "data" if name is None else name
        if not isinstance(name, str) or not name:
            raise InvalidParameter(f"name={name!r} must be a non-empty table name")
        #: The table's name in SQL queries.
        self.name = name
        if privacy_unit is not None and (not isinstance(privacy_unit, str) or not privacy_unit):
            raise InvalidParameter(f"privacy_unit={privacy_unit!r} must be a column name")
        from dpcert.backends import backend_for

        #: The backend running this session's data work (Polars; Spark for a pyspark
        #: DataFrame, DuckDB for a DuckDB relation: the data stays in its engine,
        #: `dpcert.backends`).
        self._backend = backend_for(data)
        self._lf: EngineFrame = _engine_frame(self._backend, data, schema)
        self._admit_unit(privacy_unit)
        if self.metadata is not None:  # admitted against the schema before any charge
            self.metadata.check_schema(self._backend.schema(self._lf))
        #: Public tables a SQL query may join (:mod:`dpcert.frame.public_join`), by name.
        self.public: dict[str, pl.DataFrame] = {}
        if public is not None:
            from dpcert.frame.public_join import check_public_tables

            self.public = check_public_tables(public, self, privacy_unit)
        self.privacy_unit = privacy_unit
        self.budget = budget
        self._spent: Amount = basic_loss(budget.zero(), "budget")
        #: The session's privacy filter: tight totals over its releases (docs/guide/accounting.md)
        self._filter = PrivacyFilter(budget, rule=rule)
        self._lock = threading.Lock()
        self._releases = 0
        self._source = _source
        self.dataset = dataset or "default"
        self._ledger: Ledger | None = None
        #: Differences between this session's budget and the ledger's (reported, not fatal).
        self.ledger_notes: tuple[str, ...] = ()
        self._ledger_total: Amount | None = None
        if ledger is not None:
            self._ledger, self.ledger_notes = open_ledger(ledger, dataset, budget)
            check_bound_source(self._ledger, self.dataset, data, self._lf, privacy_unit)
            self._ledger_total = self._ledger.status(self.dataset).total
            for note in self.ledger_notes:
                warnings.warn(note, BudgetMismatchWarning, stacklevel=2)
        LOG.debug("session opened: %s, budget %r, backend %s", self.dataset, budget,
                  self._backend.name)

    def __repr__(self) -> str:
        unit = self.privacy_unit or "row"
        ledger = f", ledger dataset {self.dataset!r}" if self._ledger is not None else ""
        return (f"Session(privacy_unit={unit!r}, budget={self.budget!r}, "
                f"{self.spent_summary}, releases={self._releases}{ledger})")

    @property
    def spent_summary(self) -> str:
        """What is spent and left, as rounded-up decimals (``spent``/``remaining`` are exact):
        ``"spent ε = 0.4, left ε = 0.6"``."""
        m = self.budget
        return (f"spent {_charged_text(m.to_json(self.spent))}, "
                f"left {_charged_text(m.to_json(self.remaining))}")

    @property
    def spent(self) -> Amount:
        """What this session has spent so far (exact), by its privacy filter: a batch declared
        with `release_all` is charged by the PLD (``docs/proofs/filters.md``)."""
        return self._filter.spent

    @property
    def basic_spent(self) -> Amount:
        """The sum of the releases' amounts (basic composition), for comparison."""
        return self._spent

    @property
    def remaining(self) -> Amount:
        """What this session may still spend (exact; ledger limits apply on top)."""
        return self._filter.remaining

    def query(self) -> Query:
        """Start a query on this session's data."""
        return Query(self)

    def _admit_unit(self, privacy_unit: str | None) -> None:
        """The privacy unit is a column, admitted as a unit (compared exactly), or refused."""
        if privacy_unit is None:
            return
        names = sorted(self._backend.schema(self._lf))
        if privacy_unit not in names:
            raise InvalidParameter(
                f"privacy_unit={privacy_unit!r} is not a column; the data has {names}"
            )
        native = self._backend.native_schema(self._lf)
        self._backend.admitted_type(privacy_unit, native[privacy_unit], "unit")

    def sql(self, text: str, *, keys: Keys | None = None,
            bounds: Mapping[str, Bounds] | None = None,
            dialect: str | None = None) -> Query:
        """The query of a SQL ``SELECT`` over this session's table (`dpcert.frame.sql`,
        ``docs/guide/sql.md``); refused with `UnsupportedSQL` naming the
        clause when it leaves the subset.  ``keys``: the public keys of its ``GROUP BY`` (as
        `Query.group_by`; when omitted, the metadata's key sets if every ``GROUP BY``
        column has one, else private keys); ``bounds``: ``{column: (lo, hi)}`` for aggregates
        without ``contribution_bounds_per_group`` (over the metadata's bounds); ``dialect``:
        sqlglot's dialect (BigQuery's for a ``WITH DIFFERENTIAL_PRIVACY`` query, standard SQL
        otherwise).  ``release()`` then uses the budget of the query's ``OPTIONS`` unless given
        one."""
        try:
            from dpcert.frame.sql import parse_sql
        except ImportError:
            raise BackendUnavailable("Session.sql needs sqlglot: pip install 'dpcert[sql]'"
                                     ) from None
        if self.metadata is not None:  # the metadata's bounds, under the ones given here
            bounds = {**self.metadata.bounds(), **(bounds or {})}
        return parse_sql(self.query(), text, keys=keys, bounds=bounds, dialect=dialect)

    def continual(self, time: str, periods: Sequence[KeyValue], *,
                  by: str | Sequence[str] | None = None, keys: KeyList | None = None,
                  max_contributions: int = 1, method: str = "tree", value: str | None = None,
                  bounds: tuple[int, int] | None = None) -> ContinualQuery:
        """A continual release (running totals per period) over the column ``time``:
        `dpcert.frame.continual.ContinualQuery` (``by``, ``keys``,
        ``max_contributions``, ``method``, ``value``, ``bounds``)."""
        from dpcert.frame.continual import ContinualQuery

        return ContinualQuery.create(self, time, periods, by=by, keys=keys,
                                     max_contributions=max_contributions, method=method,
                                     value=value, bounds=bounds)

    def release_all(self, queries: Iterable[tuple[Query, Measure] | tuple[Query, Measure, str]],
                    *, alpha: Number = 0.05) -> list[Release]:
        """Release several queries declared together: one charge for the whole batch, costed by
        the PLD accountant (tighter than charging them one by one), then each is computed.

        ``queries``: ``(query, budget)`` or ``(query, budget, name)`` items.  Everything is
        checked before the charge.  A failure after the charge raises
        `ReleaseFailed` (data-free); its ``partial`` attribute holds the
        releases computed before it (they are paid for).
        """
        items = [tuple(it) for it in queries]
        if not items or any(len(it) not in (2, 3) for it in items):
            raise InvalidParameter(
                f"queries={queries!r} must be a non-empty list of (query, budget[, name])")
        a = check_probability(alpha, "alpha", open_low=True, open_high=True)
        prepared = []
        checked: list[tuple[Query, Measure]] = []
        for it in items:
            q, b = it[0], require_budget(it[1], "budget")
            if not isinstance(q, Query) or q.session is not self:
                raise InvalidParameter(f"{q!r} is not a query of this session")
            name = it[2] if len(it) == 3 else None
            if name is not None and not isinstance(name, str):
                raise InvalidParameter(f"name={name!r} must be a string")
            prepared.append(q._prepare(b, a, name))
            checked.append((q, b))
        for _, meas, _ in prepared:
            self.budget.check_same_kind(meas.output_measure, "release budget")
        total = basic_loss(self.budget.compose([meas.map(1) for _, meas, _ in prepared]))
        event = ComposedEvent([meas.event(1) for _, meas, _ in prepared])
        label = "; ".join(lbl for _, _, lbl in prepared)
        n = len(prepared)

        def bodies(spent: Amount, ledger_total: Amount | None) -> list[dict[str, JSON]]:
            return [q._body(plan, meas, b, a, lbl, spent, ledger_total, (i, n))
                    for i, ((plan, meas, lbl), (q, b)) in enumerate(
                        zip(prepared, checked, strict=True))]

        ledger_info, made, charges = self._charge(self.budget, total, event,
                                                  note=f"release batch: {label}", batch=True,
                                                  bodies=bodies)
        out: list[Release] = []
        for (plan, meas, _), (q, b), body, charge in zip(prepared, checked, made, charges,
                                                         strict=True):
            try:
                out.append(q._compute(plan, meas, a, ledger_info, b, body, charge))
            except ReleaseFailed as e:
                e.partial = list(out)  # type: ignore[attr-defined]
                raise
        return out

    def _charge(self, measure: Measure, total: Amount, event: Event, *, note: str,
                batch: bool = False, bodies: Bodies | None = None
                ) -> tuple[dict[str, JSON] | None, list[dict[str, JSON]],
                           list[dict[str, JSON] | None]]:
        """Charge exactly ``total`` (a compiled ``m.map(1)``, with its event ``m.event(1)``)
        to the session's filter and the ledger, or raise before anything is charged.

        ``bodies(session_spent_after, ledger_total)`` gives the charge bodies of the
        certificates this charge pays for (`dpcert.frame.binding`); their hashes are
        chained with the ledger's charge.  Returns the ledger's state after the charge, the
        bodies, and per body where the ledger stores its hash (``None`` without a ledger).
        """
        from dpcert.frame.binding import charge_body_hash

        m = self.budget
        m.check_same_kind(measure, "release budget")
        amount = _as_amount(m, total) if total != m.zero() else None
        with self._lock:
            quote = self._filter.quote(event, amount, batch=batch)
            if not quote["fits"]:
                raise BudgetExceeded(
                    f"release would spend {m.describe(total)} but the session has "
                    f"{m.describe(self.remaining)} left (by its {quote['rule']} filter)"
                )
            after = quote["spent_after"]
            made = list(bodies(after, self._ledger_total)) if bodies is not None else []
            hashes = [charge_body_hash(b) for b in made]
            new_total = basic_loss(m.compose([self._spent, total]))
            info: dict[str, JSON] | None = None
            charges: list[dict[str, JSON] | None] = [None] * len(made)
            if self._ledger is not None:  # raises before revealing
                spend = self._ledger.spend(self.dataset, amount, note=note, event=event,
                                           batch=batch, certificate=hashes or None)
                left = self._ledger.status_at(self.dataset, spend.position).remaining
                info = {"path": str(self._ledger.path), "dataset": self.dataset,
                        "remaining": m.to_json(left), "chain_head": spend.hash,
                        "charges": spend.position, "budget_notes": list(self.ledger_notes)}
                charges = [{"charge_id": spend.id, "position": spend.position, "index": i}
                           for i in range(len(made))]
            self._filter.charge(event, amount, batch=batch)
            self._spent = new_total
            self._releases += len(made) or 1
        LOG.info("charged %s for %s; %s", m.describe(total), note, self.spent_summary)
        return info, made, charges


def _as_amount(m: Measure, total: Amount) -> Measure:
    t = type(m)
    if isinstance(total, tuple):
        return t(total[0], total[1])  # type: ignore[call-arg]
    return t(total)  # type: ignore[call-arg]


@dataclass(frozen=True)
class Query:
    """An immutable query description; each method returns a new query."""

    session: Session
    filters: tuple[Predicate, ...] = ()
    group_keys: tuple[str, ...] = ()
    public_keys: tuple[PublicKey, ...] | None = ((),)
    aggregates: tuple[Aggregate, ...] = ()
    max_groups: int | None = None
    max_rows_per_group: int | None = None
    _bounded: bool = field(default=False, repr=False)
    _keys_given: bool = field(default=False, repr=False)
    #: Share of a release's budget spent choosing omitted bounds (:meth:`auto_share`).
    _auto_share: Fraction = DEFAULT_AUTO_SHARE
    #: The SQL text this query was parsed from (:meth:`Session.sql`), shown in the certificate.
    sql: str | None = None
    #: Post-processing of the released table (a SQL query's HAVING, ORDER BY, LIMIT, ...).
    post: SqlPost | None = field(default=None, repr=False)
    #: The budget :meth:`release` uses when given none (a SQL query's OPTIONS).
    default_budget: Measure | None = None
    #: A join with a public table (a SQL query's ``JOIN``, :mod:`dpcert.frame.public_join`).
    join: PublicJoin | None = field(default=None, repr=False)

    def _frame(self) -> EngineFrame:
        """The frame the plan reads: the session's data, joined with the public table."""
        if self.join is None:
            return self.session._lf
        from dpcert.frame.public_join import join_frame

        return join_frame(self.session._backend.name, self.session._lf, self.join)

    def filter(self, predicate: Predicate) -> Query:
        """Keep rows matching a Polars expression or SQL predicate string (data-independent)."""
        return replace(self, filters=(*self.filters, predicate))

    def group_by(self, *columns: str | list[str] | tuple[str, ...],
                 keys: Keys | None = None) -> Query:
        """Group by ``columns`` (names, or lists of names: ``group_by("a", "b")`` and
        ``group_by(["a", "b"])`` are the same); ``keys`` is the list of public keys (key
        tuples for several columns), a mapping column → public values (their cross product,
        [`keys_product`][dpcert.frame.keys.keys_product]), or ``"private"``."""
        from dpcert.frame.keys import keys_product

        flat: list[str] = []
        for c in columns:
            flat.extend(c if isinstance(c, (list, tuple)) else [c])
        for c in flat:
            if not isinstance(c, str) or not c:
                raise InvalidParameter(f"group_by({c!r}): a column is a non-empty string")
        if not flat:
            raise InvalidParameter("group_by needs at least one column")
        if isinstance(keys, Mapping):
            if list(keys) != flat:
                raise InvalidParameter(f"keys={dict(keys)!r}: the mapping's columns "
                                       f"{list(keys)} must be the group_by columns {flat}")
            keys = keys_product(keys)
        if keys is None:
            raise InvalidParameter(
                "group_by(..., keys=...) is required: the list of public keys, or 'private' "
                "for DP partition selection"
            )
        if isinstance(keys, str):
            if keys != "private":
                raise InvalidParameter(f"keys={keys!r} must be a list or 'private'")
            pk = None
        else:
            pk = tuple(tuple(k) if isinstance(k, (tuple, list)) else (k,) for k in keys)
        return replace(self, group_keys=tuple(flat), public_keys=pk, _keys_given=True)

    def agg(self, *aggregates: Aggregate) -> Query:
        """The aggregates to release per group."""
        return replace(self, aggregates=(*self.aggregates, *aggregates))

    def bound_contributions(self, max_groups: int | None = None,
                            max_rows_per_group: int | None = None) -> Query:
        """At most ``max_groups`` groups and ``max_rows_per_group`` rows per group per unit.
        A bound left out is chosen privately at release time from the query's
        `auto_share` of the budget (`dpcert.frame.autobounds`)."""
        for v, n in ((max_groups, "max_groups"), (max_rows_per_group, "max_rows_per_group")):
            if v is not None:
                check_int(v, n, minimum=1)
        return replace(self, max_groups=max_groups, max_rows_per_group=max_rows_per_group,
                       _bounded=True)

    def auto_share(self, share: Number) -> Query:
        """The share of each release's budget (of ε, or ρ) spent choosing the bounds left out
        (``bounds=`` of an aggregate, arguments of `bound_contributions`), split equally
        over them; default 1/10.  `accuracy` shows the split."""
        return replace(self, _auto_share=check_probability(share, "auto_share", open_low=True,
                                                           open_high=True))

    def plan(self) -> QueryPlan:
        """The backend-neutral plan of this query."""
        unit = self.session.privacy_unit
        if unit is not None and not self._bounded:
            raise InvalidParameter(
                f"privacy_unit={unit!r}: call .bound_contributions(max_groups=..., "
                "max_rows_per_group=...) so each person's influence is bounded (without "
                "arguments: chosen privately)"
            )
        return QueryPlan(
            aggregates=self.aggregates, group_keys=self.group_keys,
            public_keys=self.public_keys, privacy_unit=unit,
            max_groups=self.max_groups, max_rows_per_group=self.max_rows_per_group,
            filters=self.filters, sql=self.sql, auto_share=self._auto_share,
        )

    def accuracy(self, alpha: Number = 0.05, budget: Measure | None = None, *,
                 n: int = 1000) -> pl.DataFrame:
        """What each output's interval would be at level ``alpha`` for ``budget``: one row per
        output (and one for partition selection with private keys) with ``half_width``,
        ``rank_error`` (quantiles), the group size ``n`` a figure assumes, and ``interval`` in
        words (`dpcert.frame.planning.accuracy_table`).  Reads no data, spends nothing.

        ``n``: the group size at which a mean's or variance's half-width and a quantile's
        level interval are evaluated (they shrink as groups grow)."""
        from dpcert.frame.planning import accuracy_table

        a = check_probability(alpha, "alpha", open_low=True, open_high=True)
        check_int(n, "n", minimum=1)
        b = self.session.budget if budget is None else require_budget(budget)
        return accuracy_table(self, b, a, n)

    def measurement(self, budget: Measure, *, alpha: Fraction | float = 0.05,
                    key: bytes | None = None, backend: FrameOps | None = None) -> Measurement:
        """This query compiled to one core Measurement on ``(FrameDomain, UnitDistance)``
        (`dpcert.frame.compile.compile_plan`): its ``map(1)`` is what the release costs.
        Reads no rows and charges nothing; ``m(data)`` runs it.  The bounding key is drawn from
        the CSPRNG here (one per measurement, so one per release) unless given; any fixed key
        gives the same map.  Auditable: ``dp.audit.audit(q.measurement(budget))`` uses
        neighbours of the session's data with one unit added or removed
        (`dpcert.frame.unit_neighbours`)."""
        from dpcert.frame.compile import compile_plan
        from dpcert.frame.unit_neighbours import unit_neighbours
        from dpcert.samplers import default_source

        budget = require_budget(budget)
        if backend is None:
            backend = self.session._backend
        if key is None:
            src = self.session._source or default_source()
            key = src.random_uint64(2).tobytes()
        plan, lf = self.plan(), self._frame()
        admission = admit_plan(plan, backend, lf)  # before anything: refusals name the column
        neighbours = None
        if backend.name == "polars" and self.join is None and isinstance(lf, pl.LazyFrame):
            # auditing neighbours: Polars
            neighbours = (lambda d: unit_neighbours(lf, plan) if d >= 1 else [])  # noqa: E731
        m = compile_plan(plan, budget, schema=backend.schema(lf), backend=backend, key=key,
                         alpha=alpha, source=self.session._source, neighbours=neighbours,
                         admission=admission)
        if self.join is None:
            return m
        from dpcert.core.frames import FrameDomain, UnitDistance
        from dpcert.frame.public_join import make_public_join

        data = self.session._lf
        user = FrameDomain(tuple(backend.schema(data).items()), backend.schema)
        joined = m.input_domain
        assert isinstance(joined, FrameDomain)
        out = make_public_join(user, UnitDistance(plan.privacy_unit), joined, self.join,
                               backend.name) >> m
        assert isinstance(out, Measurement)  # a transformation chained with a measurement
        return out

    def check(self, budget: Measure) -> Measurement:
        """Every check that runs before a charge (schema, filters, keys, names, bounds, noise
        limits, memory); returns the compiled measurement for ``budget`` (`measurement`,
        which self-checks ``map(1)`` against ``budget``, with a fixed bounding key: any key has
        the same map).  Reads no rows, spends nothing."""
        budget = require_budget(budget)
        self._check_data(self.plan())
        # admits the plan's columns into the closed internal form, then compiles
        return self.measurement(budget, key=bytes(16))

    def _check_data(self, plan: QueryPlan) -> None:
        """The checks of the data against the plan that come before compiling it."""
        frame = self._frame()
        if self.session._backend.name == "polars":
            assert isinstance(frame, pl.LazyFrame)  # the Polars backend's frames
            check_schema(frame, plan)
        else:  # Spark: columns here; filters, keys and types are checked when compiling
            cols = self.session._backend.schema(self._frame())
            missing = sorted(c for c in plan.columns if c not in cols)
            if missing:
                raise InvalidParameter(f"columns {missing} are not in the data: it has "
                                       f"{sorted(cols)}")
            if plan.privacy_unit is not None and plan.privacy_unit in plan.group_keys:
                raise InvalidParameter(f"group_by({plan.privacy_unit!r}): grouping by the "
                                       "privacy unit releases one group per person")
        if plan.public_keys is not None:
            for agg in plan.aggregates:
                if isinstance(agg, Quantile):
                    check_quantile_cells(agg.name, len(plan.public_keys), agg.candidates)

    def release(self, budget: Measure | None = None, *, alpha: Number = 0.05,
                name: str | None = None) -> Release:
        """Check everything, charge ``budget`` (session and ledger), then compute and return
        the release.  ``budget`` may be omitted when the query carries one (a SQL query's
        ``OPTIONS(epsilon = ..., delta = ...)``).

        After the charge, any failure raises `ReleaseFailed`, which
        carries no text, cause or context from the data; the charge stands.
        """
        a = check_probability(alpha, "alpha", open_low=True, open_high=True)
        if budget is None:
            budget = self.default_budget
        if budget is None:
            raise InvalidParameter("release(budget=None): give a budget (this query's SQL has "
                                   "no OPTIONS(epsilon = ...))")
        budget = require_budget(budget)
        plan, m, label = self._prepare(budget, a, name)  # before spending anything

        def bodies(spent: Amount, ledger_total: Amount | None) -> list[dict[str, JSON]]:
            return [self._body(plan, m, budget, a, label, spent, ledger_total, None)]

        ledger_info, made, charges = self.session._charge(
            budget, basic_loss(m.map(1)), m.event(1), note=f"release {label}", bodies=bodies)
        return self._compute(plan, m, a, ledger_info, budget, made[0], charges[0])

    def _body(self, plan: QueryPlan, m: Measurement, budget: Measure, a: Fraction, label: str,
              spent: Amount, ledger_total: Amount | None, batch: tuple[int, int] | None
              ) -> dict[str, JSON]:
        """The charge body of this release's certificate (before the charge)."""
        from dpcert.frame.binding import charge_body

        sess = self.session
        schema = (_schema(m) if self.join is None
                  else dict(sess._backend.schema(self._frame())))
        return charge_body(m, plan, budget, schema, session_budget=sess.budget,
                           session_spent=spent,
                           dataset=sess.dataset if sess._ledger is not None else None,
                           ledger_total=ledger_total, label=label, batch=batch, alpha=a,
                           backend=sess._backend.name)

    def cost(self, budget: Measure | None = None) -> Cost:
        """What releasing this query with ``budget`` would cost next, without charging:
        ``{"basic": amount, "session": {...}, "ledger": {...} or None}``, each ``{...}`` with
        the tight cost under that filter, whether it fits, and the filter's rule.  The amount
        is the compiled measurement's ``map(1)``, exactly what `release` charges."""
        b = self.session.budget if budget is None else require_budget(budget)
        meas = self.check(b)  # compiled with a fixed key: the key does not change the map
        total, event = basic_loss(meas.map(1)), meas.event(1)
        m = self.session.budget
        amount = _as_amount(m, total)
        led = self.session._ledger
        return {"basic": total,
                "session": self.session._filter.quote(event, amount),
                "ledger": None if led is None else led.quote(self.session.dataset, event,
                                                             amount)}

    def _prepare(self, budget: Measure, a: Fraction, name: str | None
                 ) -> tuple[QueryPlan, Measurement, str]:
        """Every check before a charge; returns the plan, the compiled measurement (whose
        ``map(1)`` is what the release charges) and the label."""
        plan = self.plan()
        self.session._backend.probe_environment(self.session._lf)
        self._check_data(plan)
        m = self.measurement(budget, alpha=a)  # compiled once: the key of this release
        label = name if name is not None else ", ".join(plan.output_names())
        return plan, m, label

    def _compute(self, plan: QueryPlan, m: Measurement, a: Fraction,
                 ledger_info: dict[str, JSON] | None, budget: Measure,
                 body: dict[str, JSON], charge: dict[str, JSON] | None) -> Release:
        """Run a compiled release that has been charged (failures raise a data-free error)."""
        result: Release | None = None
        cls: FailureClass = UNKNOWN
        sess = self.session
        try:
            out = m(sess._lf)
            if not isinstance(out, Mapping):
                raise TypeError(f"the release is a {type(out).__name__}, not a table")
            table = _typed(pl.DataFrame(dict(out)), plan)
            if self.post is not None:  # post-processing of released values only
                table = self.post.apply(table)
            cert = release_certificate(body, ledger=ledger_info, charge=charge)
            chosen = getattr(out, "chosen", None)
            if chosen is not None:  # released values (DP), not part of the charge body
                cert["chosen_bounds"] = {k: ({c: list(b) for c, b in v.items()}
                                             if k == "bounds" else v)
                                         for k, v in chosen.items()}
            result = Release(table, cert)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # incl. Polars' PanicException, a BaseException: the cause
            cls = report_failure(e)  # goes to the dpcert.operator log, only its class below
        if result is None:  # raised outside the handler: no __context__ to leak
            raise release_failed(budget, basic_loss(m.map(1)), ledger_info, cls)
        return result


def _schema(m: Measurement) -> dict[str, str]:
    """The schema the measurement was compiled for (its ``FrameDomain``)."""
    from dpcert.core.frames import FrameDomain

    dom = m.input_domain
    return dom.columns if isinstance(dom, FrameDomain) else {}


def _charged_text(charged: object) -> str:
    """The ``charged`` block of a certificate as ``ε = 0.5, δ = 1e-07`` (rounded up)."""
    if not isinstance(charged, dict):
        return "?"
    from dpcert.frame.result import upper_float

    sym = {"epsilon": "ε", "delta": "δ", "rho": "ρ"}
    return ", ".join(
        f"{sym.get(k, k)} = {upper_float(Fraction(str(v.get('exact'))), 4):g}"
        if isinstance(v, dict) else f"{sym.get(k, k)} = {v}" for k, v in charged.items())


def _typed(table: pl.DataFrame, plan: QueryPlan) -> pl.DataFrame:
    """Released values as Float64 even when no group was released (an empty column is typed
    Null, which later numeric steps such as ``tidy`` cannot round)."""
    nulls = [c for c, t in table.schema.items() if t == pl.Null and c not in plan.group_keys]
    return table.with_columns(pl.col(c).cast(pl.Float64) for c in nulls) if nulls else table
