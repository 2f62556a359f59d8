"""A join of the private table with a *public* table on a key unique in the public table.

``SELECT ... FROM data JOIN regions ON data.region_id = regions.id`` (or ``LEFT JOIN``, or
``USING (k)``): ``regions`` is a public table given to the session by name
(``Session(..., public={"regions": frame})``), holding no privacy unit.  Before anything is
charged (`check_public_tables`, `plan_join`) the public table is read -- it is public
-- and refused unless its key column has no repeated and no null value and the key types match;
only an inner or left equi-join on one key is accepted; the joined public columns may not share
a name with a private column.  The joined public columns are then ordinary columns of the query:
filters and group keys (a ``GROUP BY`` on a public column takes that column's distinct non-null
values in the public table as its public keys).

Stability (``docs/proofs/frame_public_join.md``): every private row matches at most one public
row, so the join maps each row on its own to at most one row, keeping its unit:
`make_public_join` is 1-stable (``d ↦ d``) in the unit distance.

Examples
--------
>>> import polars as pl
>>> import dpcert as dp
>>> people = pl.DataFrame({"pid": [1, 2, 3], "rid": [10, 20, 10]})
>>> regions = pl.DataFrame({"rid": [10, 20], "region": ["n", "s"]})
>>> sess = dp.Session(people, "pid", budget=dp.ZCDP(1), public={"regions": regions})
>>> q = sess.sql("SELECT region, COUNT(*) FROM data JOIN regions ON data.rid = regions.rid "
...              "GROUP BY region")
>>> q.plan().public_keys, q.join.how
((('n',), ('s',)), 'inner')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import polars as pl

from dpcert.core.frames import FrameDomain, UnitDistance
from dpcert.core.transformation import Transformation
from dpcert.errors import InvalidParameter, UnsupportedSQL

if TYPE_CHECKING:
    from dpcert._types import JSON
    from dpcert.frame.aliases import EngineFrame, FrameLike
    from dpcert.frame.session import Session

__all__ = ["PublicJoin", "check_public_tables", "join_frame", "make_public_join"]

@dataclass(frozen=True)
class PublicJoin:
    """An inner or left equi-join of the session's table with one public table."""

    table: str
    how: Literal["inner", "left"]
    #: the private table's key column and the public table's
    key: str
    public_key: str
    #: the public columns the join adds (the public key is not repeated)
    columns: tuple[str, ...]
    frame: pl.DataFrame

    def describe(self) -> dict[str, JSON]:
        """JSON-friendly description (certificates)."""
        return {"table": self.table, "how": self.how, "on": [self.key, self.public_key],
                "columns": list(self.columns), "public_rows": self.frame.height}


def check_public_tables(public: Mapping[str, FrameLike], session: Session,
                        unit: str | None) -> dict[str, pl.DataFrame]:
    """The session's public tables as Polars frames (read now: they are public), refused when
    a name is not a plain table name or the session's own, or when a table holds a column
    named as the privacy unit."""
    if not isinstance(public, Mapping):
        raise InvalidParameter(f"public={public!r} must map table names to frames")
    out: dict[str, pl.DataFrame] = {}
    for name, frame in public.items():
        if not isinstance(name, str) or not name or name == session.name:
            raise InvalidParameter(f"public: table name {name!r} must be a non-empty name other "
                                   f"than the session's table {session.name!r}")
        df = _public_frame(frame)
        if unit is not None and unit in df.columns:
            raise InvalidParameter(f"public[{name!r}] has a column {unit!r}, the privacy unit: a "
                                   "public table holds no private data")
        out[name] = df
    return out


def _public_frame(frame: FrameLike) -> pl.DataFrame:
    """A public table as a Polars frame: Polars, pandas, Arrow, a path, or DuckDB data."""
    from dpcert.backends.duckdb import is_duckdb
    from dpcert.frame.io import to_lazy

    if is_duckdb(frame):
        from dpcert.backends.duckdb import to_duck

        rel = to_duck(frame).rel
        fetch = getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table  # newer / 1.x
        out = pl.from_arrow(fetch())
        assert isinstance(out, pl.DataFrame)
        return out
    return to_lazy(frame).collect()


def plan_join(session: Session, table: str, how: str, key: str, public_key: str
              ) -> PublicJoin:
    """Check a join before any charge; refusals are `UnsupportedSQL` naming the
    clause."""
    if session._backend.name not in ("polars", "duckdb"):
        raise UnsupportedSQL(f"JOIN {table}: public joins run on the Polars and DuckDB "
                             f"backends, not {session._backend.name}")
    if how not in ("inner", "left"):
        raise UnsupportedSQL(f"{how.upper()} JOIN {table}: only an inner or LEFT join with a "
                             "public table keeps each private row at most once")
    pub = session.public[table]
    schema = dict(session._backend.schema(session._lf))
    if key not in schema:
        raise UnsupportedSQL(f"JOIN ON: column {key!r} is not in the table; it has "
                             f"{sorted(schema)}")
    if public_key not in pub.columns:
        raise UnsupportedSQL(f"JOIN ON: column {public_key!r} is not in public table {table!r};"
                             f" it has {pub.columns}")
    k = pub[public_key]
    if k.null_count():
        raise UnsupportedSQL(f"JOIN {table}: its key {public_key!r} has null values")
    if k.n_unique() != k.len():
        raise UnsupportedSQL(f"JOIN {table}: its key {public_key!r} is not unique (a private "
                             "row could match several public rows)")
    from dpcert.backends.polars import PolarsBackend

    kinds = (schema[key], PolarsBackend().schema(pub.select(public_key))[public_key])
    if kinds[0] != kinds[1] or kinds[0] not in ("int", "str", "bool", "date"):
        raise UnsupportedSQL(f"JOIN ON {key} = {table}.{public_key}: the keys have types "
                             f"{kinds[0]} and {kinds[1]}; join on integer, text, boolean or "
                             "date keys of the same type")
    added = tuple(c for c in pub.columns if c != public_key)
    clash = sorted(set(added) & set(schema))
    if clash:
        raise UnsupportedSQL(f"JOIN {table}: its columns {clash} are also private columns; "
                             "rename them in the public table")
    frame = pub.select(pl.col(public_key).cast(pl.Int64) if kinds[0] == "int"
                       else pl.col(public_key), *added)
    return PublicJoin(table, how, key, public_key, added, frame)  # type: ignore[arg-type]


def join_frame(backend_name: str, data: EngineFrame, join: PublicJoin) -> EngineFrame:
    """The joined frame on the session's backend (lazy): the private rows, each with the
    public columns of its (at most one) matching public row."""
    if backend_name == "duckdb":
        from dpcert.backends.duckdb import to_duck
        from dpcert.backends.duckdb_expr import quote

        tab = to_duck(data)
        view = f"__dpcert_public_{id(join)}"  # one view per planned join
        tab.con.register(view, join.frame.to_arrow())
        cols = ", ".join(f"_p.{quote(c)}" for c in join.columns)
        sel = "_t.*" + (f", {cols}" if cols else "")
        kw = "LEFT JOIN" if join.how == "left" else "JOIN"
        return tab.derive(f"SELECT {sel} FROM _t {kw} {quote(view)} _p ON "
                          f"_t.{quote(join.key)} = _p.{quote(join.public_key)}")
    from dpcert.frame.io import to_lazy

    lf = to_lazy(data)
    right = join.frame.lazy()
    native = lf.collect_schema()[join.key]
    right = right.with_columns(pl.col(join.public_key).cast(native, strict=False))
    return lf.join(right, left_on=join.key, right_on=join.public_key, how=join.how,
                   coalesce=True)


def make_public_join(input_domain: FrameDomain, input_metric: UnitDistance,
                     output_domain: FrameDomain, join: PublicJoin, backend_name: str
                     ) -> Transformation:
    """The join as a transformation: ``d ↦ d`` (proof: ``docs/proofs/frame_public_join.md``):
    the public key is unique, so each private row becomes at most one row, keeping its unit."""
    if not isinstance(input_metric, UnitDistance):
        raise InvalidParameter("make_public_join needs the unit distance")
    if input_metric.unit is not None and input_metric.unit in join.columns:
        raise InvalidParameter("the public table may not carry the privacy unit")
    return Transformation(
        input_domain, input_metric, output_domain, input_metric,
        function=lambda d: join_frame(backend_name, d, join),
        stability_map=lambda d: d,
        name="public_join",
        params=join.describe(),
        proof="frame_public_join.md",
    )
