"""The SQL front end: a ``SELECT`` over the session's table becomes the same `Query` the
Python API builds (same admission, compilation, charge and certificate; the SQL text is in the
certificate's plan as ``plan.sql``).

The subset: ``COUNT(*)``, ``COUNT(DISTINCT <privacy unit>)``, ``SUM``, ``AVG``, ``VARIANCE``
(``VAR_POP``, ``VAR_SAMP``), ``STDDEV`` (``STDDEV_POP``, ``STDDEV_SAMP``), ``MEDIAN``,
``PERCENTILE_CONT``, ``APPROX_QUANTILES`` on plain columns; ``WHERE`` through the engine's
row-local allow-list; ``GROUP BY`` columns with public keys (``keys=``) or private keys;
``HAVING``, ``ORDER BY`` and ``LIMIT`` on the released table (post-processing,
`dpcert.frame.sql_post`); BigQuery's ``SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(...)`` and
``contribution_bounds_per_group => (lo, hi)`` (`dpcert.frame.sql_text`); one ``JOIN`` or
``LEFT JOIN`` with a public table of the session on a key unique in it
(`dpcert.frame.public_join`).  Anything else (subqueries, other joins, windows, set
operations, unknown functions, comments, several statements, huge literals) raises
`UnsupportedSQL` naming the clause, before any charge.

Variances are population variances (``VAR_POP``); ``VARIANCE``/``VAR_SAMP`` release the same
statistic (the factor ``n/(n-1)`` is below the noise for any group a DP release can show).

Examples
--------
>>> import polars as pl
>>> import dpcert as dp
>>> df = pl.DataFrame({"pid": [1, 2, 3, 4], "region": ["n", "s", "n", "s"],
...                    "income": [10.0, 20.0, 30.0, 40.0]})
>>> sess = dp.Session(df, privacy_unit="pid", budget=dp.ApproxDP(2, 1e-6))
>>> q = sess.sql("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS(epsilon = 1, delta = 1e-7, "
...              "max_groups_contributed = 1, privacy_unit_column = pid) region, "
...              "SUM(income, contribution_bounds_per_group => (0, 100)) AS total "
...              "FROM data GROUP BY region", keys=["n", "s"])
>>> q.release().to_polars().columns
['region', 'total', 'total_ci_low', 'total_ci_high']
>>> sess.sql("SELECT COUNT(*) FROM data WHERE income > (SELECT 1)")
Traceback (most recent call last):
dpcert.errors.UnsupportedSQL: subquery is not supported (dpcert's SQL subset: docs/guide/sql.md)
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING

import polars as pl
import sqlglot
from sqlglot import exp

from dpcert.errors import UnsupportedSQL
from dpcert.frame.plan import Aggregate, Count, CountDistinct, Mean, Quantile, Sum, Variance
from dpcert.frame.sql_post import SqlPost
from dpcert.frame.sql_text import BOUNDS_FUNCTION, OptionValue, Prepassed, prepass

if TYPE_CHECKING:
    from dpcert.core.measures import Measure
    from dpcert.frame.aliases import Bounds, Keys, KeyValue, PublicKey
    from dpcert.frame.public_join import PublicJoin
    from dpcert.frame.session import Query, Session

__all__ = ["parse_sql"]

#: ``SELECT TOP n`` (SQL Server's LIMIT), read with sqlglot's T-SQL dialect.
_TOP = re.compile(r"\s*SELECT\s+TOP\s", re.IGNORECASE)
_HINT = " is not supported (dpcert's SQL subset: docs/guide/sql.md)"
_CLAUSES = {"with_": "WITH (common table expression)", "distinct": "SELECT DISTINCT",
            "joins": "JOIN", "laterals": "LATERAL", "qualify": "QUALIFY",
            "windows": "WINDOW", "offset": "OFFSET", "pivots": "PIVOT", "sample": "TABLESAMPLE",
            "into": "SELECT INTO", "sort": "SORT BY", "cluster": "CLUSTER BY",
            "distribute": "DISTRIBUTE BY", "connect": "CONNECT BY", "locks": "FOR UPDATE",
            "prewhere": "PREWHERE", "settings": "SETTINGS", "format": "FORMAT",
            "match": "MATCH_RECOGNIZE", "options": "OPTION", "for_": "FOR", "kind": "SELECT AS",
            "hint": "optimizer hints", "exclude": "EXCLUDE", "operation_modifiers": "modifiers"}
_ALLOWED_ARGS = {"expressions", "from_", "where", "group", "having", "order", "limit", "joins"}
_REFUSED_NODES: tuple[tuple[type[exp.Expr], str], ...] = (
    (exp.Subquery, "subquery"), (exp.Query, "subquery"), (exp.Window, "window function (OVER)"),
    (exp.Join, "JOIN"), (exp.Lateral, "LATERAL"), (exp.Unnest, "UNNEST"),
    (exp.Placeholder, "query parameter"), (exp.Parameter, "query parameter"),
    (exp.Lambda, "lambda"), (exp.Star, "*"),
)
_HAVING_NODES = (exp.Column, exp.Identifier, exp.Literal, exp.Boolean, exp.Null, exp.Paren,
                 exp.Neg, exp.And, exp.Or, exp.Not, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT,
                 exp.LTE, exp.Is, exp.Add, exp.Sub, exp.Mul, exp.Div)
_KNOWN = (exp.Sum, exp.Avg, exp.Variance, exp.VariancePop, exp.Stddev, exp.StddevPop,
          exp.StddevSamp, exp.Median, exp.PercentileCont, exp.PercentileDisc, exp.ApproxQuantile,
          exp.ApproxQuantiles)
_OPTIONS = {"epsilon", "delta", "rho", "max_groups_contributed", "max_rows_per_group",
            "privacy_unit_column"}


@dataclass
class _Parts:
    """What the select list compiles to."""

    aggregates: list[Aggregate] = field(default_factory=list)
    columns: list[tuple[str, str]] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    stddev: list[str] = field(default_factory=list)
    by_sql: dict[str, str] = field(default_factory=dict)  # aggregate SQL -> released name
    key_alias: dict[str, str] = field(default_factory=dict)  # output name -> key column
    row_bound: int | None = None


def parse_sql(start: Query, sql: str, *, keys: Keys | None = None,
              bounds: Mapping[str, Bounds] | None = None,
              dialect: str | None = None) -> Query:
    """The query of ``sql``, built on the empty query ``start`` of a session
    (see `Session.sql`)."""
    if dialect is None and isinstance(sql, str) and "DIFFERENTIAL_PRIVACY" in sql.upper():
        dialect = "bigquery"
    elif dialect is None and isinstance(sql, str) and _TOP.match(sql):
        dialect = "tsql"  # SELECT TOP n (SQL Server, SmartNoise's examples): LIMIT n
    pre = prepass(sql, dialect)
    try:
        trees = sqlglot.parse(pre.text, read=dialect)
    except sqlglot.errors.SqlglotError as e:
        raise UnsupportedSQL(f"sql could not be parsed: {str(e)[:300]}") from None
    if len(trees) != 1 or trees[0] is None:
        raise UnsupportedSQL("sql must be exactly one SELECT statement")
    tree = trees[0]
    _check_shape(tree)
    assert isinstance(tree, exp.Select)
    ctx = _Context(start.session, tree, pre, dict(bounds or {}))
    return ctx.query(start, sql, keys)


def _check_shape(tree: exp.Expr) -> None:
    if isinstance(tree, exp.SetOperation):
        raise UnsupportedSQL(f"set operation {type(tree).__name__.upper()}{_HINT}")
    if not isinstance(tree, exp.Select):
        raise UnsupportedSQL(f"statement {type(tree).__name__.upper()}{_HINT}: only SELECT")
    for key, val in tree.args.items():
        if val not in (None, [], False) and key not in _ALLOWED_ARGS:
            raise UnsupportedSQL(f"{_CLAUSES.get(key, key)}{_HINT}")
    if tree.args.get("from_") is None:
        raise UnsupportedSQL("a query must read FROM the session's table")
    joins = tree.args.get("joins") or []
    if len(joins) > 1:
        raise UnsupportedSQL(f"{len(joins)} JOINs: one join with a public table at most")
    for node in tree.walk():
        if node is tree or node in joins:
            continue
        if isinstance(node, exp.Star) and isinstance(node.parent, exp.Count):
            continue
        for cls, what in _REFUSED_NODES:
            if isinstance(node, cls):
                raise UnsupportedSQL(f"{what}{_HINT}")
        if isinstance(node, exp.Anonymous) and node.name.upper() != BOUNDS_FUNCTION:
            raise UnsupportedSQL(f"function {node.name}() (user-defined or unknown){_HINT}")


class _Context:
    """One query being translated: the session's table and columns, the bounds and options."""

    def __init__(self, session: Session, tree: exp.Select, pre: Prepassed,
                 bounds: dict[str, Bounds]) -> None:
        self.session, self.tree, self.pre, self.bounds = session, tree, pre, bounds
        self.columns = set(session._backend.schema(session._lf))
        table = tree.args["from_"].this
        if not isinstance(table, exp.Table) or table.args.get("db") or table.args.get("catalog"):
            raise UnsupportedSQL(f"FROM {table.sql()[:80]}: only the session's table "
                                 f"{session.name!r} can be read")
        if table.name != session.name:
            raise UnsupportedSQL(f"FROM {table.name!r}: this session's table is named "
                                 f"{session.name!r} (Session(..., name=...))")
        self.tables = {table.name, table.alias_or_name}
        self.join: PublicJoin | None = None
        self.public_tables: set[str] = set()
        joins = tree.args.get("joins") or []
        if joins:
            self.join = self._join(joins[0])
            self.columns |= set(self.join.columns)

    def _join(self, j: exp.Join) -> PublicJoin:
        """The public join of a ``JOIN`` clause (checked before any charge)."""
        from dpcert.frame.public_join import plan_join

        table = j.this
        if not isinstance(table, exp.Table) or table.args.get("db") or table.args.get("catalog"):
            raise UnsupportedSQL(f"JOIN {j.this.sql()[:80]}: only a public table can be joined")
        if table.name not in self.session.public:
            raise UnsupportedSQL(f"JOIN {table.name!r}: not a public table of this session "
                                 f"(Session(..., public={{...}}) has "
                                 f"{sorted(self.session.public)})")
        side, kind = (j.side or "").upper(), (j.kind or "").upper()
        if j.args.get("method") or kind not in ("", "INNER", "OUTER") or side not in ("", "LEFT") \
                or (kind == "OUTER" and side != "LEFT"):
            what = " ".join(x for x in (j.args.get("method"), side, kind) if x)
            raise UnsupportedSQL(f"{what or 'this'} JOIN{_HINT}: only JOIN or LEFT JOIN with a "
                                 "public table")
        self.public_tables = {table.name, table.alias_or_name}
        using, on = j.args.get("using"), j.args.get("on")
        if using:
            if len(using) != 1:
                raise UnsupportedSQL("JOIN USING: one key column")
            key = pkey = str(using[0].name)
        elif isinstance(on, exp.EQ) and all(isinstance(x, exp.Column) for x in on.args.values()):
            sides = {}
            for col in (on.this, on.expression):
                if col.table in self.public_tables:
                    sides["public"] = str(col.name)
                elif not col.table or col.table in self.tables:
                    sides["data"] = str(col.name)
            if set(sides) != {"public", "data"}:
                raise UnsupportedSQL(f"JOIN ON {on.sql()[:80]}: equate one column of "
                                     f"{self.session.name} with one of {table.name}")
            key, pkey = sides["data"], sides["public"]
        else:
            raise UnsupportedSQL(f"JOIN ON {on.sql()[:80] if on else ''}: only an equality of "
                                 "one key column of each table")
        return plan_join(self.session, table.name, "left" if side == "LEFT" else "inner", key,
                         pkey)

    def column(self, node: exp.Expression, where: str) -> str:
        """The session column a plain column reference names."""
        if not isinstance(node, exp.Column):
            raise UnsupportedSQL(f"{where}: {node.sql()[:80]!r} must be a plain column")
        if node.args.get("db") or node.args.get("catalog"):
            raise UnsupportedSQL(f"{where}: {node.sql()[:80]!r} names another database")
        if node.table and node.table in self.public_tables and self.join is not None:
            name = str(node.name)
            if name == self.join.public_key:
                return self.join.key
            if name not in self.join.columns:
                raise UnsupportedSQL(f"{where}: column {name!r} is not in public table "
                                     f"{self.join.table!r}")
            return name
        if node.table and node.table not in self.tables:
            raise UnsupportedSQL(f"{where}: {node.sql()[:80]!r} names table {node.table!r}")
        if node.name not in self.columns:
            raise UnsupportedSQL(f"{where}: column {node.name!r} is not in the table; it has "
                                 f"{sorted(self.columns)}")
        if node.table and self.join is not None and node.name in self.join.columns:
            raise UnsupportedSQL(f"{where}: {node.sql()[:80]!r}: that column is the public "
                                 f"table's ({self.join.table})")
        return str(node.name)

    def query(self, start: Query, sql: str, keys: Keys | None) -> Query:
        t = self.tree
        opts = self.pre.options
        unknown = sorted(set(opts) - _OPTIONS)
        if unknown:
            raise UnsupportedSQL(f"OPTIONS {unknown}{_HINT}")
        unit = self._unit(opts)
        group = [self.column(g, "GROUP BY") for g in (t.args["group"].expressions
                                                      if t.args.get("group") else [])]
        parts = _Parts()
        for item in t.expressions:
            self._select_item(item, group, unit, parts)
        q = replace(start, sql=sql, join=self.join)
        if t.args.get("where") is not None:
            q = q.filter(self._where(t.args["where"].this))
        meta = self.session.metadata
        if keys is None and group:
            keys = self._default_keys(group)
        if group:
            q = q.group_by(*group, keys="private" if keys is None else keys)
        elif keys is not None:
            raise UnsupportedSQL(f"keys={keys!r} given but the query has no GROUP BY")
        q = q.agg(*parts.aggregates)
        if unit is not None:
            rows = _int_option(opts, "max_rows_per_group", parts.row_bound or (
                meta.max_rows_per_group if meta is not None and meta.max_rows_per_group
                else 1))
            if parts.row_bound is not None and rows != parts.row_bound:
                raise UnsupportedSQL(f"max_rows_per_group={rows} disagrees with COUNT's "
                                     f"contribution bound {parts.row_bound}")
            q = q.bound_contributions(_int_option(opts, "max_groups_contributed",
                                                  meta.max_ids if meta is not None else 1), rows)
        post = SqlPost(columns=tuple(parts.columns), stddev=tuple(parts.stddev),
                       having=self._having(parts), order=self._order(parts),
                       limit=self._limit(), values=tuple(parts.values))
        return replace(q, post=post, default_budget=_budget(self.session, opts))

    def _default_keys(self, group: list[str]) -> list[PublicKey] | None:
        """Public keys when none are given: per column, a joined public column's distinct
        non-null values, else the metadata's key set; their product, or ``None`` (private
        keys) when a column has neither."""
        meta = self.session.metadata
        sets: list[list[KeyValue]] = []
        for c in group:
            if self.join is not None and c in self.join.columns:
                vals = self.join.frame[c].drop_nulls().unique(maintain_order=True).to_list()
                sets.append(vals)
            elif meta is not None and (ks := meta.keys_for([c])) is not None:
                sets.append([k[0] for k in ks])
            else:
                return None
        return [tuple(k) for k in itertools.product(*sets)]

    def _unit(self, opts: Mapping[str, OptionValue]) -> str | None:
        unit = self.session.privacy_unit
        named = opts.get("privacy_unit_column")
        if named is not None and named != unit:
            raise UnsupportedSQL(f"privacy_unit_column={named!r}: the session's privacy unit "
                                 f"is {unit!r} (Session(..., privacy_unit=...))")
        if unit is None and ({"max_groups_contributed", "max_rows_per_group"} & set(opts)):
            raise UnsupportedSQL("contribution bounds need a privacy unit: every row is a "
                                 "different person in this session")
        return unit

    def _select_item(self, item: exp.Expression, group: list[str], unit: str | None,
                     parts: _Parts) -> None:
        alias = item.alias if isinstance(item, exp.Alias) else None
        node = item.this if isinstance(item, exp.Alias) else item
        if isinstance(node, exp.Column):
            col = self.column(node, "SELECT")
            if col not in group:
                raise UnsupportedSQL(f"SELECT {col}: a column outside an aggregate must be a "
                                     "GROUP BY column")
            parts.columns.append((col, alias or col))
            parts.key_alias[alias or col] = col
            parts.key_alias.setdefault(col, col)
            return
        lohi = None
        if isinstance(node, exp.Anonymous):  # DPCERT_BOUNDS(agg, i) from the token pass
            inner, idx = node.expressions
            lohi = self.pre.bounds[int(idx.name)]
            node = inner
        made = _Aggregate(self, node, alias, lohi, unit).build(parts)
        for a in made:
            names = a.names() if isinstance(a, Quantile) else [a.name]
            parts.aggregates.append(a)
            for n in names:
                parts.columns.append((n, n))
                parts.values.append(n)
            parts.by_sql[node.sql()] = names[0]
            if alias:
                parts.by_sql[alias] = names[0]

    def _where(self, cond: exp.Expression) -> str:
        cond = cond.copy()
        for node in list(cond.find_all(exp.AggFunc)):
            raise UnsupportedSQL(f"WHERE: aggregate {node.sql()[:80]!r}; use HAVING")
        for col in list(cond.find_all(exp.Column)):
            name = self.column(col, "WHERE")
            col.replace(exp.column(exp.to_identifier(name, quoted=True)))
        return str(cond.sql(identify=True))

    def _released(self, node: exp.Expression, parts: _Parts, where: str) -> str:
        """The released column an expression in HAVING/ORDER BY refers to."""
        if isinstance(node, exp.Column) and not node.table:
            name = str(node.name)
            if name in parts.key_alias:
                return parts.key_alias[name]
            if name in parts.values or name in parts.by_sql:
                return parts.by_sql.get(name, name)
        if isinstance(node, exp.Anonymous) and node.expressions:  # a bounded aggregate
            node = node.expressions[0]
        if node.sql() in parts.by_sql:
            return parts.by_sql[node.sql()]
        raise UnsupportedSQL(f"{where}: {node.sql()[:80]!r} is not a released column; it must "
                             f"be one of {sorted({*parts.key_alias, *parts.values})}")

    def _having(self, parts: _Parts) -> str | None:
        h = self.tree.args.get("having")
        if h is None:
            return None
        def released(node: exp.Expression) -> exp.Expression:
            if isinstance(node, (exp.AggFunc, exp.Anonymous, exp.Column)):
                name = self._released(node, parts, "HAVING")
                return exp.column(exp.to_identifier(name, quoted=True))
            return node

        cond = h.this.transform(released)
        for node in cond.walk():
            if not isinstance(node, _HAVING_NODES):
                raise UnsupportedSQL(f"HAVING: {type(node).__name__} {node.sql()[:80]!r}{_HINT}")
        text = str(cond.sql(identify=True))
        try:
            pl.sql_expr(text)
        except Exception:
            raise UnsupportedSQL(f"HAVING {text[:80]!r}{_HINT}") from None
        return text

    def _order(self, parts: _Parts) -> tuple[tuple[str, bool], ...]:
        o = self.tree.args.get("order")
        out: list[tuple[str, bool]] = []
        for item in (o.expressions if o is not None else []):
            node = item.this
            if isinstance(node, exp.Literal) and not node.is_string:
                pos = int(node.name) if node.name.isdigit() else 0
                if not 1 <= pos <= len(parts.columns):
                    raise UnsupportedSQL(f"ORDER BY {node.name}: no such SELECT position")
                name = parts.columns[pos - 1][0]
            else:
                name = self._released(node, parts, "ORDER BY")
            out.append((name, bool(item.args.get("desc"))))
        return tuple(out)

    def _limit(self) -> int | None:
        lim = self.tree.args.get("limit")
        if lim is None:
            return None
        opts = lim.args.get("limit_options")
        if opts is not None and (opts.args.get("percent") or opts.args.get("with_ties")):
            raise UnsupportedSQL(f"{'PERCENT' if opts.args.get('percent') else 'WITH TIES'} in "
                                 f"LIMIT/TOP{_HINT}: give a number of rows")
        if lim.args.get("offset") is not None:
            raise UnsupportedSQL(f"OFFSET{_HINT}")
        n = lim.expression
        if not (isinstance(n, exp.Literal) and not n.is_string and n.name.isdigit()
                and int(n.name) <= 2**31):
            raise UnsupportedSQL(f"LIMIT {n.sql()[:40]!r} must be an integer in [0, 2**31]")
        return int(n.name)


class _Aggregate:
    """One aggregate call of the select list."""

    def __init__(self, ctx: _Context, node: exp.Expression, alias: str | None,
                 lohi: tuple[Fraction, Fraction] | None, unit: str | None) -> None:
        self.ctx, self.node, self.alias, self.lohi, self.unit = ctx, node, alias, lohi, unit

    def _bounds(self, col: str) -> tuple[float, float]:
        if self.lohi is not None:
            return float(self.lohi[0]), float(self.lohi[1])
        if col in self.ctx.bounds:
            lo, hi = self.ctx.bounds[col]
            return float(lo), float(hi)
        raise UnsupportedSQL(f"{self.node.sql()[:80]}: give bounds for {col!r}, as "
                             "contribution_bounds_per_group => (lo, hi) or bounds={...}")

    def _named(self, a: Aggregate) -> Aggregate:
        return a.alias(self.alias) if self.alias else a

    def build(self, parts: _Parts) -> list[Aggregate]:
        n = self.node
        if isinstance(n, exp.Count):
            return [self._count(parts)]
        if isinstance(n, exp.WithinGroup):
            return [self._within_group()]
        simple: dict[type[exp.Expression], type[Sum] | type[Mean] | type[Variance]] = {
            exp.Sum: Sum, exp.Avg: Mean, exp.Variance: Variance, exp.VariancePop: Variance}
        if not isinstance(n, _KNOWN):
            raise UnsupportedSQL(f"SELECT {n.sql()[:80]!r}{_HINT}")
        col = self.ctx.column(n.this, n.sql()[:80])
        for cls, agg in simple.items():
            if type(n) is cls:
                return [self._named(agg(col, self._bounds(col)))]
        if isinstance(n, (exp.Stddev, exp.StddevPop, exp.StddevSamp)):
            name = self.alias or f"stddev_{col}"
            parts.stddev.append(name)
            return [Variance(col, self._bounds(col)).alias(name)]
        if isinstance(n, exp.Median):
            return [self._named(Quantile(col, (0.5,), self._bounds(col)))]
        if isinstance(n, (exp.PercentileCont, exp.PercentileDisc, exp.ApproxQuantile)):
            return [self._named(Quantile(col, (_level(n.expression),), self._bounds(col)))]
        if isinstance(n, exp.ApproxQuantiles):
            k = n.expression
            if not (isinstance(k, exp.Literal) and k.name.isdigit() and 1 <= int(k.name) <= 100):
                raise UnsupportedSQL(f"APPROX_QUANTILES: {k.sql()[:40]!r} must be 1..100")
            m = int(k.name)
            return [self._named(Quantile(col, tuple(i / m for i in range(m + 1)),
                                         self._bounds(col)))]
        raise UnsupportedSQL(f"SELECT {n.sql()[:80]!r}{_HINT}")

    def _count(self, parts: _Parts) -> Aggregate:
        arg = self.node.this
        if isinstance(arg, exp.Star):
            if self.lohi is not None:
                lo, hi = self.lohi
                if lo != 0 or hi.denominator != 1 or hi < 1:
                    raise UnsupportedSQL(f"COUNT(*) contribution bounds ({lo}, {hi}) must be "
                                         "(0, k) with k a positive integer (rows per group)")
                parts.row_bound = int(hi)
            return self._named(Count())
        if isinstance(arg, exp.Distinct) and len(arg.expressions) == 1:
            col = self.ctx.column(arg.expressions[0], "COUNT(DISTINCT ...)")
            if col == self.unit:
                return self._named(CountDistinct())
            raise UnsupportedSQL(f"COUNT(DISTINCT {col}): only the privacy unit "
                                 f"({self.unit!r}) can be counted distinct")
        raise UnsupportedSQL(f"{self.node.sql()[:80]}: use COUNT(*) (add WHERE col IS NOT NULL "
                             "to skip nulls)")

    def _within_group(self) -> Aggregate:
        n = self.node
        fn, order = n.this, n.expression
        if not isinstance(fn, (exp.PercentileCont, exp.PercentileDisc)) or not isinstance(
                order, exp.Order) or len(order.expressions) != 1:
            raise UnsupportedSQL(f"{n.sql()[:80]}{_HINT}")
        col = self.ctx.column(order.expressions[0].this, "WITHIN GROUP (ORDER BY ...)")
        return self._named(Quantile(col, (_level(fn.this),), self._bounds(col)))


def _level(node: exp.Expr) -> float:
    try:
        q = Fraction(node.name) if isinstance(node, exp.Literal) and not node.is_string else None
    except ValueError:
        q = None
    if q is None or not 0 <= q <= 1:
        raise UnsupportedSQL(f"percentile {getattr(node, 'sql', str)()!r} must be a number "
                             "in [0, 1]")
    return float(q)


def _int_option(opts: Mapping[str, OptionValue], name: str, default: int) -> int:
    v = opts.get(name, default)
    if not isinstance(v, (int, Fraction)) or Fraction(v).denominator != 1 or v < 1:
        raise UnsupportedSQL(f"OPTIONS {name}={v!r} must be a positive integer")
    return int(v)


def _budget(session: Session, opts: Mapping[str, OptionValue]) -> Measure | None:
    """The release budget the OPTIONS give, in the session's measure (``None``: none given)."""
    from dpcert.core.measures import ZCDP, ApproxDP, PureDP

    given: dict[str, Fraction | None] = {}
    for k in ("epsilon", "delta", "rho"):
        v = opts.get(k)
        if v is not None and not isinstance(v, Fraction):
            raise UnsupportedSQL(f"OPTIONS {k}={v!r} must be a number")
        given[k] = v
    eps, delta, rho = given["epsilon"], given["delta"], given["rho"]
    kind = type(session.budget)
    if kind is ZCDP:
        if eps is not None or delta is not None:
            raise UnsupportedSQL("OPTIONS epsilon/delta: this session measures zCDP; give "
                                 "OPTIONS(rho = ...) or release(budget=dp.ZCDP(rho))")
        return None if rho is None else ZCDP(rho)
    if rho is not None:
        raise UnsupportedSQL(f"OPTIONS rho: this session's budget is {kind.__name__}")
    if eps is None:
        if delta is not None:
            raise UnsupportedSQL("OPTIONS delta needs epsilon")
        return None
    if kind is PureDP:
        if delta not in (None, 0):
            raise UnsupportedSQL(f"OPTIONS delta={delta}: this session's budget is pure ε-DP")
        return PureDP(eps)
    return ApproxDP(eps, delta or Fraction(0))
