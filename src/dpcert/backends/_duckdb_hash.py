"""dpcert's keyed row hash (:mod:`dpcert.backends._hash`) inside DuckDB.

The chain ``xxhash64(k1, k2, c1, ..., cn)`` is built one link per column, each link a SQL
expression over the previous link's hash (a ``UBIGINT`` column, the seed):

* a column of the ``long`` encoding (integers, booleans, dates as days, datetimes as
  microseconds) is hashed in SQL arithmetic: XXH64's ``hashLong`` with its 64-bit products taken
  as ``UHUGEINT`` products masked to 64 bits, left rotations as a masked shift ``|`` a right
  shift (so no shift overflows), ``xor`` as DuckDB's ``xor``;
* a ``double`` or ``bytes`` column (floats, strings: DuckDB has no function giving a double's
  bits, and ``hashUnsafeBytes`` runs over each string's words) goes through one vectorised Arrow
  UDF per encoding, :func:`register`, which runs :func:`dpcert.backends._hash.hash_series`, the
  NumPy code of the Polars backend, on each batch of DuckDB's vectors: never one Python call per
  row.

A null value leaves the hash unchanged (Spark's rule), as in :mod:`dpcert.backends._hash`.

Examples
--------
>>> import duckdb
>>> from dpcert.backends import _hash
>>> con = duckdb.connect()
>>> sql = hash_long_sql("CAST(1 AS UBIGINT)", f"CAST({_hash.SPARK_SEED} AS UBIGINT)")
>>> con.sql(f"SELECT {sql}").fetchall()[0][0] == (-7001672635703045582) % 2**64
True
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from dpcert.backends import _hash

__all__ = ["UDF_NAMES", "hash_long_sql", "hash_long_stages", "register", "to_ubigint_sql"]

_M = (1 << 64) - 1
#: The UDF of each non-``long`` encoding: ``name(seed UBIGINT, value) -> UBIGINT``.
UDF_NAMES = {"double": "__dpcert_xxh64_double", "bytes": "__dpcert_xxh64_bytes"}
_UDF_TYPES = {"double": "DOUBLE", "bytes": "VARCHAR"}


def _mul(a: str, p: int) -> str:
    """``a * p mod 2**64`` (``a`` a UBIGINT expression, ``p`` a constant)."""
    return f"CAST((CAST({a} AS UHUGEINT) * CAST({p} AS UHUGEINT)) & {_M} AS UBIGINT)"


def _add(a: str, p: int) -> str:
    return f"CAST((CAST({a} AS UHUGEINT) + {p}) & {_M} AS UBIGINT)"


def _rotl(a: str, r: int) -> str:
    return f"(((({a}) & CAST({(1 << (64 - r)) - 1} AS UBIGINT)) << {r}) | (({a}) >> {64 - r}))"


def _xorshift(a: str, s: int) -> str:
    return f"xor({a}, ({a}) >> {s})"


def hash_long_stages(x: str, h: str) -> list[tuple[str, str]]:
    """XXH64's ``hashLong(x, h)`` as successive assignments ``(column, SQL)``: ``x`` and ``h``
    are UBIGINT columns (``x`` the value, ``h`` the seed, then the hash).  Each stage reads
    each column a few times, so no stage's SQL is repeated inside the next."""
    return [(x, _mul(x, _hash.P2)), (x, _mul(_rotl(x, 31), _hash.P1)),
            (h, f"xor({_add(h, (_hash.P5 + 8) & _M)}, {x})"),
            (h, _add(_mul(_rotl(h, 27), _hash.P1), _hash.P4)),
            (h, _mul(_xorshift(h, 33), _hash.P2)), (h, _mul(_xorshift(h, 29), _hash.P3)),
            (h, _xorshift(h, 32))]


def hash_long_sql(x: str, seed: str) -> str:
    """XXH64's ``hashLong(x, seed)`` as one SQL expression (:func:`hash_long_stages` inlined;
    for tests and short inputs: ``x`` appears 32 times)."""
    exprs = {"x": x, "h": seed}
    for col, sql in hash_long_stages("\x00x", "\x00h"):
        exprs[col[1:]] = sql.replace("\x00x", f"({exprs['x']})").replace("\x00h", f"({exprs['h']})")
    return exprs["h"]


def to_ubigint_sql(x: str) -> str:
    """A BIGINT expression's two's-complement bits as a UBIGINT (Java's long as unsigned)."""
    return f"CAST(CAST({x} AS HUGEINT) & {_M} AS UBIGINT)"


def _udf(encoding: Literal["double", "bytes"]) -> Any:
    def run(seed: Any, value: Any) -> Any:
        import polars as pl
        import pyarrow as pa

        s = pl.from_arrow(value)
        assert isinstance(s, pl.Series)
        s = s.cast(pl.Float64 if encoding == "double" else pl.String)
        seeds = np.asarray(seed.to_numpy(zero_copy_only=False), dtype=np.uint64)
        return pa.array(_hash.hash_series(s, seeds), type=pa.uint64())

    return run


def register(con: Any) -> None:
    """Register the Arrow UDFs of :data:`UDF_NAMES` on the DuckDB connection ``con`` (once)."""
    have = {r[0] for r in con.execute(
        "SELECT function_name FROM duckdb_functions() WHERE function_name LIKE '__dpcert_%'"
    ).fetchall()}
    for enc, name in UDF_NAMES.items():
        if name not in have:
            con.create_function(name, _udf(enc), ["UBIGINT", _UDF_TYPES[enc]],  # type: ignore[arg-type]
                                "UBIGINT", type="arrow", null_handling="special",
                                side_effects=False)
