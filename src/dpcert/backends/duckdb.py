"""The DuckDB backend: `FrameOps` on DuckDB relations.

The data stays in DuckDB: admission, filters, bounding and grouped statistics are SQL that
dpcert writes itself (quoted identifiers, typed literals), composed as lazy relations
(``relation.query``); only the K grouped rows of integer statistics reach Python.  A session's
data is a `DuckTable`, made by `to_duck` from

* a ``(connection, "table or view name")`` pair,
* a ``(connection, relation)`` pair, or
* a relation alone (its connection is the one it was made on).

Contribution bounding is the rule of `dpcert.backends.polars` in one SQL pass: the keyed
hashes ``h(u)``, ``h(u, g)``, ``h(u, g, v)`` (`dpcert.backends._duckdb_hash`, bit-identical
to `dpcert.backends._hash`), then two windows partitioned by the unit::

    pair_rank  = dense_rank()  over (partition by u  order by h(u,g), g)
    pair_start = rank()        over (partition by u  order by h(u,g), g)
    row        = row_number()  over (partition by u  order by h(u,g), g, h(u,g,v), v)
    keep       = pair_rank <= max_groups and row - pair_start < max_rows_per_group

(hashes ordered as signed longs, ties broken by the values, nulls last), so the kept rows and
hence every bounded statistic equal the Polars backend's for the same key.  The Arrow hash
function of strings is registered on the connection while a release needs it and removed once
`DuckDBBackend.group_stats` has read the statistics, so a release leaves nothing on the user's
connection.

Fixed-point values use ``round_even`` (half to even on doubles) and are summed as ``HUGEINT``
(exact: 128 bits).  Datetime keys travel as microseconds since the epoch and are decoded in
Python (aware UTC datetimes for ``TIMESTAMP WITH TIME ZONE``, naive ones for ``TIMESTAMP``), so
the connection's ``TimeZone`` setting never enters.

Examples
--------
>>> import duckdb
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t AS SELECT u, g, CAST(x AS DOUBLE) AS x FROM (VALUES "
...                 "(1, 'a', 1), (1, 'a', 2), (1, 'b', 3), (2, 'a', 4)) v(u, g, x)")
>>> be = DuckDBBackend()
>>> b = be.keyed_bound(to_duck((con, "t")), BoundSpec("u", ("g",), 1, 1, key=bytes(16),
...                                                   value_columns=("x",)))
>>> be.group_stats(b, [], None, [StatSpec("n", "count")]).values["n"].tolist()
[2]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpcert.backends import _duckdb_hash as dh
from dpcert.backends import _hash
from dpcert.backends._sql_ops import SqlTreeOps
from dpcert.backends.admission import AdmittedColumn, AdmittedType, Role, internal_name, refuse
from dpcert.backends.base import BoundSpec, GroupedStats, StatSpec
from dpcert.backends.duckdb_expr import quote as _q
from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

__all__ = ["DuckDBBackend", "DuckTable", "is_duckdb", "read_table", "to_duck"]

_SIGN = 1 << 63
_H = '"#h"'  # the running hash of the bounding query
_INTS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER")
_WIDE = ("UBIGINT", "HUGEINT", "UHUGEINT")
_NTZ = ("TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS")
_TZ = "TIMESTAMP WITH TIME ZONE"
_CASTS = {"UBIGINT": "to BIGINT if every value is below 2**63, else to VARCHAR",
          "HUGEINT": "to BIGINT if every value fits, else to VARCHAR",
          "UHUGEINT": "to BIGINT if every value fits, else to VARCHAR",
          "DECIMAL": "to DOUBLE or to VARCHAR", "BLOB": "to VARCHAR: hex(...)",
          "TIME": "to BIGINT: epoch_us(...)", "INTERVAL": "to BIGINT: epoch_us(...)",
          "UUID": "to VARCHAR", '"NULL"': "to the type the column should have: every value "
                                          "is null"}


@dataclass(frozen=True)
class DuckTable:
    """A DuckDB relation with the connection it runs on."""

    con: DuckDBPyConnection
    rel: Any

    def derive(self, sql: str) -> DuckTable:
        """The relation of ``sql``, which reads this one as ``_t`` (lazy)."""
        return DuckTable(self.con, self.rel.query("_t", sql))


def is_duckdb(data: Any) -> bool:
    """Is ``data`` a DuckDB relation, a ``(connection, table)`` pair or a `DuckTable`?"""
    if isinstance(data, DuckTable):
        return True
    if isinstance(data, tuple) and len(data) == 2:
        return _is_connection(data[0]) and (
            isinstance(data[1], str) or _is_relation(data[1]))
    return _is_relation(data)


def _is_connection(x: Any) -> bool:
    return (type(x).__module__.lstrip("_").startswith("duckdb")
            and type(x).__name__ == "DuckDBPyConnection")


def _is_relation(x: Any) -> bool:
    return (type(x).__module__.lstrip("_").startswith("duckdb")
            and type(x).__name__ == "DuckDBPyRelation")


def to_duck(data: Any) -> DuckTable:
    """The `DuckTable` of a relation, a ``(connection, name)`` or a
    ``(connection, relation)`` pair (module docstring); reads no rows."""
    if isinstance(data, DuckTable):
        return data
    if isinstance(data, tuple) and len(data) == 2:
        con, what = data
        if not _is_connection(con):
            raise InvalidParameter(f"data[0] of type {type(con).__name__} is not a DuckDB "
                                   "connection")
        if isinstance(what, str):
            try:
                return DuckTable(con, con.table(what))
            except Exception as e:
                raise InvalidParameter(f"data=(connection, {what!r}): no such table or view "
                                       f"({type(e).__name__})") from None
        if _is_relation(what):
            return DuckTable(con, what)
        raise InvalidParameter(f"data[1] of type {type(what).__name__} is not a table name or "
                               "a DuckDB relation")
    if _is_relation(data):
        con = getattr(data, "_con", None)
        if con is None:
            raise InvalidParameter("a DuckDB relation alone does not name its connection here: "
                                   "pass (connection, relation) or (connection, 'table')")
        return DuckTable(con, data)
    raise InvalidParameter(f"data of type {type(data).__name__} is not a DuckDB relation or a "
                           "(connection, table) pair")


def read_table(path: str) -> DuckTable:
    """A lazy relation of a ``.csv`` or ``.parquet`` file, or of ``DATABASE.duckdb:TABLE`` (a
    table in a DuckDB database file, opened read-only), on a new connection; reads no rows
    except CSV type sniffing."""
    import duckdb

    if ".duckdb:" in path:
        db, table = path.rsplit(":", 1)
        return to_duck((duckdb.connect(db, read_only=True), table))
    con = duckdb.connect()
    if path.endswith(".csv"):
        return DuckTable(con, con.read_csv(path))
    if path.endswith(".parquet"):
        return DuckTable(con, con.read_parquet(path))
    raise InvalidParameter(f"path={path!r}: expected a .csv, .parquet or DATABASE.duckdb:TABLE "
                           "path")


def _type_name(t: Any) -> str:
    return str(t).upper()


def _logical(t: str) -> str:
    if t in _INTS or t in _WIDE:
        return "int"
    if t in ("FLOAT", "DOUBLE"):
        return "float"
    if t == "VARCHAR" or t.startswith("ENUM(") or t.startswith("VARCHAR"):
        return "str"
    if t == "BOOLEAN":
        return "bool"
    if t == "DATE":
        return "date"
    if t == _TZ:
        return "datetime"
    if t in _NTZ:
        return "datetime_ntz"
    return "other"


def _native(tab: DuckTable) -> dict[str, str]:
    cols = list(tab.rel.columns)
    if len({c.lower() for c in cols}) != len(cols):
        raise InvalidParameter(f"the DuckDB relation has repeated column names {cols}")
    return {c: _type_name(t) for c, t in zip(cols, tab.rel.types, strict=True)}


def _canonical(col: str, logical: str) -> str:
    """A column with ``-0.0 → 0.0`` and one NaN (floats), else as it is."""
    c = _q(col)
    if logical == "float":
        return (f"CASE WHEN isnan({c}) THEN CAST('NaN' AS DOUBLE) WHEN {c} = 0 THEN "
                f"CAST(0 AS DOUBLE) ELSE CAST({c} AS DOUBLE) END")
    return c


def _encoded(col: str, logical: str) -> str:
    """The ``long`` encoding of `dpcert.backends._hash` as a BIGINT expression."""
    c = _q(col)
    if logical == "date":
        return f"CAST({c} - DATE '1970-01-01' AS BIGINT)"
    if logical in ("datetime", "datetime_ntz"):
        return f"epoch_us({c})"
    return f"CAST({c} AS BIGINT)"


def _link(q: str, col: str, logical: str) -> str:
    """``q`` with one more link of the hash chain: ``"#h" = computeHash(col, "#h")`` (a null
    value leaves ``"#h"``), as successive projections."""
    if logical == "str":
        return (f"SELECT * REPLACE ({dh.UDF_NAMES['bytes']}({_H}, CAST({_q(col)} AS VARCHAR)) "
                f"AS {_H}) FROM ({q})")
    if logical == "float":  # the double's canonical bits, computed in SQL
        q = (f'SELECT *, {_H} AS "#s", CAST({_q(col)} AS DOUBLE) AS "#d", '
             f'CAST(0 AS INTEGER) AS "#e", CAST(0 AS UBIGINT) AS "#x" FROM ({q})')
        stages = dh.double_bits_stages('"#d"', '"#e"', '"#x"')
        scratch = '"#s", "#x", "#d", "#e"'
    else:
        x = dh.to_ubigint_sql(_encoded(col, logical))
        q = f'SELECT *, {_H} AS "#s", {x} AS "#x" FROM ({q})'
        stages, scratch = [], '"#s", "#x"'
    for c, sql in [*stages, *dh.hash_long_stages('"#x"', _H)]:
        q = f"SELECT * REPLACE ({sql} AS {c}) FROM ({q})"
    return (f'SELECT * EXCLUDE ({scratch}) REPLACE (CASE WHEN "#x" IS NULL THEN "#s" ELSE '
            f"{_H} END AS {_H}) FROM ({q})")


class DuckDBBackend(SqlTreeOps):
    """`FrameOps` for DuckDB relations (`to_duck`).

    Examples
    --------
    >>> DuckDBBackend().name
    'duckdb'
    """

    name = "duckdb"

    def schema(self, data: Any) -> Mapping[str, str]:
        """Column name → logical type (reads no rows)."""
        return {c: _logical(t) for c, t in _native(to_duck(data)).items()}

    def native_schema(self, data: Any) -> Mapping[str, Any]:
        """Column name → DuckDB type name (reads no rows)."""
        return _native(to_duck(data))

    def admitted_type(self, column: str, dtype: Any, role: Role) -> AdmittedType:
        """The internal type of a column in a role (`dpcert.backends.admission`)."""
        t = _type_name(dtype)
        kind = t.split("(")[0]
        if role == "value":
            if t in _INTS or t in _WIDE or t in ("FLOAT", "DOUBLE", '"NULL"') or kind == "DECIMAL":
                return "float"
            raise refuse(column, t, role, "to DOUBLE")
        logical = _logical(t)
        if logical != "other" and t not in _WIDE:
            return logical  # type: ignore[return-value]
        raise refuse(column, t, role, _CASTS.get(kind, "to BIGINT, DOUBLE, VARCHAR, BOOLEAN, "
                                                       "DATE or TIMESTAMP"))

    def admit(self, data: Any, columns: Sequence[AdmittedColumn]) -> DuckTable:
        """The admitted frame: exactly ``columns``, renamed and cast (total casts only)."""
        tab = to_duck(data)
        if not columns:  # a plan that reads no column still counts rows
            return tab.derive(f"SELECT CAST(0 AS BIGINT) AS {internal_name(0)} FROM _t")
        items = []
        for c in columns:
            if c.type == "float":
                x = f"CAST({_q(c.user)} AS DOUBLE)"
                e = (f"CASE WHEN isnan({x}) THEN CAST('NaN' AS DOUBLE) WHEN {x} = 0 THEN "
                     f"CAST(0 AS DOUBLE) ELSE {x} END")
            elif c.type == "int":
                e = f"CAST({_q(c.user)} AS BIGINT)"
            elif c.type == "str":
                e = f"CAST({_q(c.user)} AS VARCHAR)"
            elif c.type == "datetime_ntz" and c.source in ("TIMESTAMP_S", "TIMESTAMP_MS"):
                e = f"CAST({_q(c.user)} AS TIMESTAMP)"  # exact: a finer unit
            else:
                e = _q(c.user)
            items.append(f"{e} AS {_q(c.internal)}")
        return tab.derive(f"SELECT {', '.join(items)} FROM _t")

    def probe_environment(self, data: Any) -> None:
        """Before the charge: the connection answers and holds dpcert's hash functions."""
        tab = to_duck(data)
        dh.register(tab.con)

    def check_predicates(self, predicates: Sequence[Any],
                         schema: Mapping[str, str]) -> tuple[Any, ...]:
        """Each predicate through `dpcert.backends.duckdb_expr` (SQL strings only)."""
        from dpcert.backends.duckdb_expr import check_duckdb_predicate

        return tuple(check_duckdb_predicate(p, schema) for p in predicates)

    def filter(self, data: Any, predicates: Sequence[Any]) -> DuckTable:
        """Rows on which every (already checked) predicate is true."""
        from dpcert.backends.duckdb_expr import to_duckdb_sql
        from dpcert.backends.spark_expr import CheckedPredicate

        tab = to_duck(data)
        conds = []
        for p in predicates:
            if not isinstance(p, CheckedPredicate):
                raise InvalidParameter(f"filter: a predicate of type {type(p).__name__} was not "
                                       "checked by check_predicates")
            conds.append(to_duckdb_sql(p.tree))
        return tab.derive(f"SELECT * FROM _t WHERE {' AND '.join(conds)}") if conds else tab

    def keyed_bound(self, data: Any, spec: BoundSpec) -> DuckTable:
        """The bounded rows (a lazy relation with the unit, group and value columns)."""
        tab = to_duck(data)
        schema = self.schema(tab)
        keys = ([spec.unit] if spec.unit else []) + list(spec.by)
        cols = list(dict.fromkeys([*keys, *spec.value_columns]))
        _check_bound(spec, schema, keys, cols)
        select = ", ".join(f"{_canonical(c, schema[c]) if c in keys else _q(c)} AS {_q(c)}"
                           for c in cols)
        base = tab.derive(f"SELECT {select} FROM _t")
        if spec.unit is None:
            return base
        if any(schema[c] == "str" for c in cols):
            dh.register(tab.con)
        return base.derive(_bound_sql(spec, schema, cols))

    def group_stats(self, data: Any, by: Sequence[str], keys: Sequence[tuple[Any, ...]] | None,
                    specs: Sequence[StatSpec]) -> GroupedStats:
        """Exact integer statistics per group; only the K grouped rows are fetched."""
        from dpcert.backends._duckdb_stats import grouped_stats

        tab = to_duck(data)
        dh.register(tab.con)  # the bounded relation calls it when it hashes strings
        try:
            return grouped_stats(tab, list(by), keys, list(specs), self.schema(tab))
        finally:
            _remove_functions(tab.con)


def _remove_functions(con: DuckDBPyConnection) -> None:
    """Remove dpcert's hash functions from the user's connection once the statistics are
    read: nothing of a release is left on it (they are registered again when needed)."""
    have = {r[0] for r in con.execute(
        "SELECT function_name FROM duckdb_functions() WHERE function_name LIKE '__dpcert_%'"
    ).fetchall()}
    for name in dh.UDF_NAMES.values():
        if name in have:
            con.remove_function(name)


def _check_bound(spec: BoundSpec, schema: Mapping[str, str], keys: list[str],
                 cols: list[str]) -> None:
    for c in cols:
        if c not in schema:
            raise InvalidParameter(f"unknown column {c!r}; the data has {sorted(schema)}")
    for c in keys:
        if schema[c] == "other":
            raise InvalidParameter(f"column {c!r} has type {schema[c]}: bounding can only key "
                                   "on integer, boolean, date, datetime, float or string "
                                   "columns")
    for c in spec.value_columns:
        if schema[c] not in ("int", "float", "bool"):
            raise InvalidParameter(f"value column {c!r} has type {schema[c]}, not numeric")
    if spec.max_groups < 1 or spec.max_rows_per_group < 1:
        raise InvalidParameter(f"max_groups={spec.max_groups} and max_rows_per_group="
                               f"{spec.max_rows_per_group} must be >= 1")


def _bound_sql(spec: BoundSpec, schema: Mapping[str, str], cols: list[str]) -> str:
    """The one-pass bounding query over ``_t`` (module docstring).  Each hash link is its own
    projection so no link's SQL is repeated inside the next."""
    assert spec.unit is not None
    seed = f"CAST({_hash.key_seed(spec.key)} AS UBIGINT)"
    out = ", ".join(_q(c) for c in cols)
    q = _link(f"SELECT {out}, {seed} AS {_H} FROM _t", spec.unit, schema[spec.unit])
    for name, columns in (("#hp", spec.by), ("#hr", spec.value_columns)):
        for c in columns:
            q = _link(q, c, schema[c])
        q = f"SELECT *, {_H} AS {_q(name)} FROM ({q})"
    u = _q(spec.unit)
    g = [f"{_q(c)} ASC NULLS LAST" for c in spec.by]
    v = [f"{_q(c)} ASC NULLS LAST" for c in spec.value_columns]
    hp = f'xor("#hp", CAST({_SIGN} AS UBIGINT))'
    hr = f'xor("#hr", CAST({_SIGN} AS UBIGINT))'
    w_pair = f"PARTITION BY {u} ORDER BY {', '.join([hp, *g])}"
    w_row = f"PARTITION BY {u} ORDER BY {', '.join([hp, *g, hr, *v])}"
    ranked = (f"SELECT {out}, dense_rank() OVER wp AS \"#g\", rank() OVER wp AS \"#f\", "
              f"row_number() OVER wr AS \"#r\" FROM ({q}) WINDOW wp AS ({w_pair}), "
              f"wr AS ({w_row})")
    return (f"SELECT {out} FROM ({ranked}) WHERE \"#g\" <= {spec.max_groups} AND "
            f"\"#r\" - \"#f\" < {spec.max_rows_per_group}")
