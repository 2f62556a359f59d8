"""dpcert's keyed row hash (`dpcert.backends._hash`) inside DuckDB.

The chain ``xxhash64(k1, k2, c1, ..., cn)`` is built one link per column, each link a SQL
expression over the previous link's hash (a ``UBIGINT`` column, the seed):

* a column of the ``long`` encoding (integers, booleans, dates as days, datetimes as
  microseconds) is hashed in SQL arithmetic: XXH64's ``hashLong`` with its 64-bit products taken
  as ``UHUGEINT`` products masked to 64 bits, left rotations as a masked shift ``|`` a right
  shift (so no shift overflows), ``xor`` as DuckDB's ``xor``;
* a ``double`` column is hashed the same way on its canonical IEEE bits, which
  `double_bits_stages` computes exactly in SQL;
* a ``bytes`` column (strings: ``hashUnsafeBytes`` runs over each string's 8-byte words) goes
  through one vectorised Arrow UDF, `register`, which runs
  `dpcert.backends._hash.hash_series`, the NumPy code of the Polars backend, on each batch
  of DuckDB's vectors: never one Python call per row.

A null value leaves the hash unchanged (Spark's rule), as in `dpcert.backends._hash`.

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

__all__ = ["UDF_NAMES", "double_bits_stages", "hash_long_sql", "hash_long_stages", "register",
           "to_ubigint_sql"]

_M = (1 << 64) - 1
#: The UDF of the ``bytes`` encoding: ``name(seed UBIGINT, value VARCHAR) -> UBIGINT``.
UDF_NAMES = {"bytes": "__dpcert_xxh64_bytes"}
_UDF_TYPES = {"bytes": "VARCHAR"}


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
    """XXH64's ``hashLong(x, seed)`` as one SQL expression (`hash_long_stages` inlined;
    for tests and short inputs: ``x`` appears 32 times)."""
    exprs = {"x": x, "h": seed}
    for col, sql in hash_long_stages("\x00x", "\x00h"):
        exprs[col[1:]] = sql.replace("\x00x", f"({exprs['x']})").replace("\x00h", f"({exprs['h']})")
    return exprs["h"]


def double_bits_stages(d: str, e: str, x: str) -> list[tuple[str, str]]:
    """A DOUBLE column ``d``'s IEEE-754 bits into the UBIGINT column ``x`` (via the INTEGER
    column ``e``), canonical as `dpcert.backends._hash.canonical_double_bits` (one NaN,
    ``-0.0`` as ``0.0``), as successive assignments.  DuckDB has no function giving a double's
    bits, so they are computed exactly: the exponent from ``log2``, corrected by comparing with
    exact powers of two; the mantissa by an exact division by ``2**e``; subnormals by two exact
    products by ``2**537``."""
    a = f"abs({d})"
    special = f"isnan({d}) OR isinf({d}) OR {d} = 0"
    p = "CAST(2 AS DOUBLE)"
    e0 = f"CASE WHEN {special} THEN 0 ELSE CAST(floor(log2({a})) AS INTEGER) END"
    fix = (f"{e} - CASE WHEN {a} < pow({p}, {e}) THEN 1 ELSE 0 END "
           f"+ CASE WHEN {a} >= pow({p}, {e} + 1) THEN 1 ELSE 0 END")
    normal = (f"(CAST({e} + 1023 AS UBIGINT) << 52) + "
              f"CAST(({a} / pow({p}, {e}) - 1) * {float(2**52)!r} AS UBIGINT)")
    sub = f"CAST({a} * pow({p}, 537) * pow({p}, 537) AS UBIGINT)"
    mag = f"CASE WHEN {e} >= -1022 THEN {normal} ELSE {sub} END"
    bits = (f"CASE WHEN isnan({d}) THEN CAST({_hash._CANON_NAN} AS UBIGINT) "
            f"WHEN {d} = 0 THEN CAST(0 AS UBIGINT) "
            f"WHEN isinf({d}) THEN CAST({0x7FF0000000000000} AS UBIGINT) "
            f"+ CASE WHEN {d} < 0 THEN CAST({1 << 63} AS UBIGINT) ELSE CAST(0 AS UBIGINT) END "
            f"ELSE {mag} + CASE WHEN {d} < 0 THEN CAST({1 << 63} AS UBIGINT) "
            "ELSE CAST(0 AS UBIGINT) END END")
    return [(e, e0), (e, fix), (x, bits)]


def to_ubigint_sql(x: str) -> str:
    """A BIGINT expression's two's-complement bits as a UBIGINT (Java's long as unsigned)."""
    return f"CAST(CAST({x} AS HUGEINT) & {_M} AS UBIGINT)"


def _udf(encoding: Literal["bytes"]) -> Any:
    # DuckDB reads ``run``'s annotations at run time: they must resolve without pyarrow typing
    def run(seed: Any, value: Any) -> Any:
        import polars as pl
        import pyarrow as pa

        s = pl.from_arrow(value)
        assert isinstance(s, pl.Series)
        s = s.cast(pl.String)
        seeds = np.asarray(seed.to_numpy(zero_copy_only=False), dtype=np.uint64)
        return pa.array(_hash.hash_series(s, seeds), type=pa.uint64())

    return run


def register(con: Any) -> None:
    """Register the Arrow UDFs of `UDF_NAMES` on the DuckDB connection ``con`` (once).

    (``con`` is a ``duckdb.DuckDBPyConnection``, typed loosely: the UDF kind and null handling
    are passed as the strings every supported DuckDB accepts, which its newer stubs type as
    enums of a module older versions do not have.)"""
    have = {r[0] for r in con.execute(
        "SELECT function_name FROM duckdb_functions() WHERE function_name LIKE '__dpcert_%'"
    ).fetchall()}
    for enc, name in UDF_NAMES.items():
        if name not in have:
            con.create_function(name, _udf("bytes"), ["UBIGINT", _UDF_TYPES[enc]],
                                "UBIGINT", type="arrow", null_handling="special",
                                side_effects=False)
