"""From a validated spec and the curator's choices to a session and its checked queries,
reading only the schema, charging nothing.

The order is the boundary of ``docs/threat_model.md``: the spec was validated first
(`dpcert.cli.spec`); then the curator's source is resolved and, with a ledger, checked
against the dataset's binding (location, schema fingerprint, privacy unit); then every query is
checked against the schema and the queries' total against the session's and the ledger's budget.
Every refusal here leaves the ledger and the output directory untouched.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from dpcert.cli.curator import Curator
from dpcert.cli.spec import (
    NAME_PATTERN,
    AggregateSpec,
    BudgetSpec,
    QuerySpec,
    ReleaseSpec,
    SpecError,
    query_span,
)
from dpcert.errors import BindingMismatch, BudgetExceeded, DPCertError, InvalidParameter

if TYPE_CHECKING:
    from dpcert.accounting.binding import Binding
    from dpcert.accounting.filters import Quote
    from dpcert.core.events import Event
    from dpcert.core.measures import Loss, Measure
    from dpcert.frame.plan import Aggregate
    from dpcert.frame.session import Query, Session

__all__ = ["Built", "build", "over_budget", "spec_quote", "spec_total"]

#: (name, query, budget) of every query of the spec, in order.
Queries = list[tuple[str, "Query", "Measure"]]


class SpecQuote(TypedDict):
    """A spec's queries as one declared batch: its event, its total by basic composition and
    what the session's and the ledger's filters would charge for it."""

    event: Event
    basic: Loss
    session: Quote
    ledger: Quote | None


@dataclass(frozen=True)
class Built:
    """A session on the curator's source (``location``, its ``binding`` or ``None``) with the
    spec's checked queries."""

    sess: Session
    queries: Queries
    location: str
    binding: Binding | None


def _ledger_total(path: str, dataset: str) -> tuple[Measure, Binding | None]:
    """The ledger dataset's total as a Measure, and its binding (``None``: unbound)."""
    from dpcert.accounting.binding import binding_of
    from dpcert.accounting.ledger import _KINDS, Ledger

    if not os.path.isfile(path):
        raise InvalidParameter(f"ledger={path!r} does not exist: the curator creates it with "
                               f"`dpcert budget init {path} DATASET --data SOURCE ...`")
    led = Ledger(path, read_only=True)
    if dataset not in led.datasets():
        raise InvalidParameter(f"dataset={dataset!r} is not in the ledger {path!r} (it has "
                               f"{led.datasets()}); the curator creates it with `dpcert budget "
                               "init`")
    st = led.status(dataset)
    total = st.total if isinstance(st.total, tuple) else (st.total,)
    return _KINDS[st.measure](*total), binding_of(led, dataset)


def _source(cur: Curator, unit: str | None) -> tuple[str, Measure, Binding | None]:
    """The resolved source, the session's total and the binding, every check before reading."""
    from dpcert.accounting.binding import check_binding
    from dpcert.frame.source import resolve_source, schema_fingerprint

    if cur.ledger is None:
        assert cur.data is not None and cur.budget is not None
        return resolve_source(cur.data), cur.budget, None
    assert cur.dataset is not None
    total, binding = _ledger_total(cur.ledger, cur.dataset)
    if binding is None:
        if cur.data is None:
            raise InvalidParameter(
                f"ledger dataset {cur.dataset!r} has no bound data source: pass --data SOURCE, "
                "or create the dataset with `dpcert budget init ... --data SOURCE`")
        print(f"dpcert: WARNING: ledger dataset {cur.dataset!r} has no bound source; its "
              f"budget is spent on --data {cur.data!r}", file=sys.stderr)
        return resolve_source(cur.data), total, None
    location = resolve_source(cur.data if cur.data is not None else binding.location)
    check_binding(binding, location, schema_fingerprint(location, binding.types), cur.dataset)
    if binding.privacy_unit is not None and unit != binding.privacy_unit:
        raise BindingMismatch(
            f"privacy_unit={unit!r}: ledger dataset {cur.dataset!r} protects "
            f"privacy_unit={binding.privacy_unit!r} (bound by the curator); nothing was charged")
    return location, total, binding



def _session(cur: Curator, spec: ReleaseSpec, where: str,
             spec_path: Path | None = None) -> tuple[Session, str, Binding | None]:
    import dpcert as dp

    unit = spec.data.privacy_unit or None
    location, total, binding = _source(cur, unit)
    schema = None
    if binding is not None and binding.types:
        from dpcert.frame.source import polars_types

        schema = polars_types(binding.types)
    source: object = location
    if cur.engine == "spark":
        try:
            from dpcert.backends.spark import read_table
        except ImportError as e:
            raise InvalidParameter("--engine spark needs pyspark: pip install "
                                   "'dpcert[spark]'") from e
        if schema is not None:
            raise InvalidParameter("--engine spark reads CSV cells itself (bad cells become "
                                   "null): the binding's declared types apply to Polars only")
        source = read_table(location, master=cur.spark_master, remote=cur.spark_remote)
    elif cur.engine == "duckdb":
        try:
            from dpcert.backends.duckdb import read_table as read_duckdb
        except ImportError as e:
            raise InvalidParameter("--engine duckdb needs duckdb: pip install "
                                   "'dpcert[duckdb]'") from e
        if schema is not None:
            raise InvalidParameter("--engine duckdb reads CSV cells itself: the binding's "
                                   "declared types apply to Polars only")
        source = read_duckdb(location)
    import warnings

    from dpcert.frame.ledger import BudgetMismatchWarning

    try:
        with warnings.catch_warnings():  # the session's total is the ledger's: it applies
            warnings.simplefilter("ignore", BudgetMismatchWarning)
            meta = spec.data.metadata
            if meta is not None and spec_path is not None:
                meta = str(spec_path.parent / meta)
            sess = dp.Session(source, unit, budget=total, ledger=cur.ledger,
                              dataset=cur.dataset, schema=schema, metadata=meta)
    except DPCertError as e:
        raise SpecError(f"{where}: {e}") from e
    return sess, location, binding


def _budget(b: BudgetSpec, where: str) -> Measure:
    import dpcert as dp

    try:
        if b.rho is not None:
            if b.epsilon is not None or b.delta is not None:
                raise SpecError(f"{where}: a budget has rho, or epsilon (and delta), not both")
            return dp.ZCDP(b.rho)
        if b.epsilon is not None and b.delta is not None:
            return dp.ApproxDP(b.epsilon, b.delta)
        if b.epsilon is not None:
            return dp.PureDP(b.epsilon)
    except SpecError:
        raise
    except DPCertError as e:
        raise SpecError(f"{where}: {e}") from e
    raise SpecError(f"{where}: a budget needs rho, or epsilon (and delta)")


def _aggregate(a: AggregateSpec, where: str) -> Aggregate:
    import dpcert as dp

    need = {"sum": ("column",), "mean": ("column",), "variance": ("column",),
            "quantile": ("column", "q")}
    missing = [k for k in need.get(a.kind, ()) if getattr(a, k) is None]
    if missing:
        raise SpecError(f"{where}: aggregate {a.kind!r} needs {missing}")
    try:
        if a.kind == "count":
            agg: Aggregate = dp.count()
        elif a.kind == "count_distinct":
            agg = dp.count_distinct()
        elif a.kind == "quantile":
            agg = dp.quantile(a.column, a.q, None if a.bounds is None else tuple(a.bounds))
        else:  # omitted bounds: chosen privately (dpcert.frame.autobounds)
            agg = getattr(dp, a.kind)(a.column, None if a.bounds is None else tuple(a.bounds))
        if a.alias is not None:
            agg = agg.alias(a.alias)
        if a.weight is not None:
            agg = agg.weighted(a.weight)
    except DPCertError as e:
        raise SpecError(f"{where}: {e}") from e
    return agg


def _with_bounds(a: AggregateSpec,
                 bounds: Mapping[str, tuple[int | float, int | float]]) -> AggregateSpec:
    """``a`` with the metadata's bounds of its column when it gives none."""
    if a.bounds is None and a.column is not None and a.column in bounds:
        lo, hi = bounds[a.column]
        return a.model_copy(update={"bounds": [lo, hi]})
    return a


def _line_of(text: str, needle: str, span: tuple[int, int], nth: int = 0) -> int:
    """1-based line of the ``nth`` occurrence of ``needle`` in the lines ``span`` of ``text``
    (comments skipped), or the span's first line."""
    lines = text.splitlines()
    for i in range(span[0], min(span[1], len(lines))):
        if needle in lines[i].split("#", 1)[0]:
            if nth == 0:
                return i + 1
            nth -= 1
    return span[0] + 1


def _error_line(text: str, span: tuple[int, int], message: str, name: str) -> int:
    """The line of a query's table that an error is about: the first value the message quotes
    (a column, a key, a clause; not the query's ``name``) found quoted in the table; else the
    table's header."""
    lines = [ln.split("#", 1)[0] for ln in text.splitlines()]
    for token in re.findall(r"'([^'\n]{1,200})'", message):
        if token == name:
            continue
        for i in range(span[0] + 1, min(span[1], len(lines))):
            if f'"{token}"' in lines[i] or f"'{token}'" in lines[i]:
                return i + 1
    return span[0] + 1


def _queries(sess: Session, spec: ReleaseSpec, text: str, path: Path) -> Queries:
    seen: set[str] = set()
    out: Queries = []
    for i, q in enumerate(spec.query):
        span = query_span(text, i)
        name = q.name if q.name is not None else f"query{i + 1}"
        label = f"(query {name!r})"
        where = f"{path}:{span[0] + 1} {label}"
        if not NAME_PATTERN.fullmatch(name):
            raise SpecError(f"{path}:{_line_of(text, 'name', span)} {label}: name={name!r} "
                            f"must match {NAME_PATTERN.pattern} (it becomes a file name)")
        if name.casefold() in seen:
            raise SpecError(f"{where}: name={name!r} is used twice (names are compared "
                            "without case, as some file systems do)")
        seen.add(name.casefold())
        if sess.privacy_unit is None and q.model_fields_set & {"max_groups",
                                                               "max_rows_per_group"}:
            raise SpecError(f"{where}: max_groups and max_rows_per_group bound a privacy unit's "
                            "contributions; privacy_unit = false has none")
        try:
            qq, b = (_sql_query(sess, q, where) if q.sql is not None
                     else _plain_query(sess, q, where, text, f"{path}", span, label))
        except SpecError:
            raise
        except DPCertError as e:
            raise SpecError(f"{path}:{_error_line(text, span, str(e), name)} {label}: {e}") from e
        try:
            sess.budget.check_same_kind(b, f"query {name!r} budget")
        except DPCertError as e:
            raise SpecError(f"{path}:{_line_of(text, 'budget', span)} {label}: {e}") from e
        try:
            qq.check(b)  # schema, filters, keys, names, bounds, noise limits: reads no rows
        except DPCertError as e:
            raise SpecError(f"{path}:{_error_line(text, span, str(e), name)} {label}: {e}") from e
        out.append((name, qq, b))
    return out


def _plain_query(sess: Session, q: QuerySpec, where: str, text: str, path: str,
                 span: tuple[int, int], label: str) -> tuple[Query, Measure]:
    if q.aggregates is None or q.budget is None:
        raise SpecError(f"{where}: a query needs budget = {{ ... }} and aggregates = [...], or "
                        'sql = "SELECT ..."')
    if q.bounds is not None:
        raise SpecError(f"{where}: bounds is for a sql query; give each aggregate its bounds")
    qq = sess.query()
    if q.filter is not None:
        qq = qq.filter(q.filter)
    if q.group_by is not None:
        qq = qq.group_by(*q.group_by, keys=q.keys)
    meta_bounds = sess.metadata.bounds() if sess.metadata is not None else {}
    qq = qq.agg(*[_aggregate(_with_bounds(a, meta_bounds),
                             f"{path}:{_line_of(text, 'kind', span, j)} {label}")
                  for j, a in enumerate(q.aggregates)])
    if sess.privacy_unit is not None:
        qq = qq.bound_contributions(*(None if v == "auto" else v
                                      for v in (q.max_groups, q.max_rows_per_group)))
    if q.auto_share is not None:
        qq = qq.auto_share(q.auto_share)
    return qq, _budget(q.budget, f"{path}:{_line_of(text, 'budget', span)} {label}")


def _sql_query(sess: Session, q: QuerySpec, where: str) -> tuple[Query, Measure]:
    """A ``sql = "SELECT ..."`` query (`dpcert.Session.sql`) and its budget."""
    clash = sorted(q.model_fields_set & {"filter", "group_by", "aggregates", "max_groups",
                                         "max_rows_per_group"})
    if clash:
        raise SpecError(f"{where}: sql replaces {clash}: write them in the SQL")
    assert q.sql is not None  # the caller dispatches on it
    bounds = {k: (v[0], v[1]) for k, v in (q.bounds or {}).items()}
    qq = sess.sql(q.sql, keys=q.keys, bounds=bounds)
    b = _budget(q.budget, where) if q.budget is not None else qq.default_budget
    if b is None:
        raise SpecError(f"{where}: give budget = {{ ... }} or OPTIONS(epsilon = ...) in the sql")
    return qq, b


def build(spec_path: Path, spec: ReleaseSpec, text: str, cur: Curator, *,
          check_total: bool = True) -> Built:
    """The session on the curator's source and the spec's queries, each checked and (with
    ``check_total``) their total against the session and the ledger; reads only the schema."""
    sess, location, binding = _session(cur, spec, f"{spec_path}:1", spec_path)
    queries = _queries(sess, spec, text, spec_path)
    if check_total:
        problem = over_budget(sess, queries)
        if problem is not None:
            raise BudgetExceeded(problem)
    return Built(sess, queries, location, binding)


def spec_total(sess: Session, queries: Queries) -> Loss:
    """The exact total that running every query would charge (reads no rows)."""
    total: Loss = sess.budget.zero()
    for _, q, b in queries:
        sess.budget.check_same_kind(b, "query budget")
        total = sess.budget.compose([total, q.measurement(b, key=bytes(16)).map(1)])
    return total


def spec_quote(sess: Session, queries: Queries) -> SpecQuote:
    """The spec's queries as one declared batch: its event and what the session's and the
    ledger's privacy filters would charge for it (``docs/proofs/filters.md``)."""
    from dpcert.core.events import ComposedEvent

    # the compiled measurements' events: exactly what release_all charges (the key does not
    # change a map)
    event = ComposedEvent([q.measurement(b, key=bytes(16)).event(1) for _, q, b in queries])
    total = spec_total(sess, queries)
    m = sess.budget
    carrying: Callable[..., Measure] = type(m)  # the measure's class, given its amount
    amount = carrying(*total) if isinstance(total, tuple) else carrying(total)
    out: SpecQuote = {"event": event, "basic": total,
                      "session": sess._filter.quote(event, amount, batch=True), "ledger": None}
    if sess._ledger is not None:
        out["ledger"] = sess._ledger.quote(sess.dataset, event, amount, batch=True)
    return out


def over_budget(sess: Session, queries: Queries) -> str | None:
    """Why the queries, released together as one batch, do not fit the session's or the
    ledger's budget (None if they fit); reads no rows, charges nothing."""
    m = sess.budget
    quote = spec_quote(sess, queries)
    limits = [("the release's total budget", quote["session"], sess.remaining)]
    if quote["ledger"] is not None and sess._ledger is not None:
        limits.insert(0, (f"what ledger dataset {sess.dataset!r} has left", quote["ledger"],
                          sess._ledger.remaining(sess.dataset)))
    for what, q, left in limits:
        if not q["fits"]:
            return (f"the queries together would spend {m.describe(quote['basic'])} (basic "
                    f"composition; {m.describe(q['tight'])} as one batch under the "
                    f"{q['rule']} filter), more than {what} ({m.describe(left)}); nothing was "
                    "charged")
    return None
