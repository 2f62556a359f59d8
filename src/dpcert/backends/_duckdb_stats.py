"""Exact grouped integer statistics in DuckDB (`DuckDBBackend.group_stats`).

One ``GROUP BY`` computes every count and fixed-point sum (``SUM`` of ``BIGINT`` is a
``HUGEINT``: exact); quantile counts (``at_most``) group by ``(keys, bin)`` in a second query,
``bin`` the number of candidates below the value (a balanced ``CASE``), and are accumulated in
NumPy.  Public keys are a ``VALUES`` list the rows are semi-joined with (null-safe equality), so
groups outside them never leave DuckDB.

Examples
--------
>>> from fractions import Fraction
>>> fixed_point_sql(StatSpec("s", "fixed_sum", "x", Fraction(0), Fraction(10),
...                          exponent=-1))  # doctest: +ELLIPSIS
'CASE WHEN "x" IS NULL OR isnan(CAST("x" AS DOUBLE)) THEN 0 ELSE CAST(least(greatest(...
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcert.backends._fixed import check_specs, fixed_bounds, private_key_order
from dpcert.backends._sql_ops import canon_key, public_keys
from dpcert.backends.base import GroupedStats, StatSpec
from dpcert.backends.duckdb_expr import quote as _q
from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    from dpcert.backends.duckdb import DuckTable

__all__ = ["fixed_point_sql", "grouped_stats"]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_US = dt.timedelta(microseconds=1)


def _dbl(x: float | Fraction) -> str:
    return f"CAST('{float(x)!r}' AS DOUBLE)"


def fixed_point_sql(spec: StatSpec) -> str:
    """The value rule of `dpcert.backends.base` as a DuckDB ``BIGINT`` expression."""
    assert spec.column is not None and spec.lower is not None and spec.upper is not None
    rl, rh = fixed_bounds(spec)
    v = f"CAST({_q(spec.column)} AS DOUBLE)"
    w = v
    if spec.kind == "fixed_sum_sq":
        c = f"least(greatest({v}, {_dbl(spec.lower)}), {_dbl(spec.upper)})"
        if spec.shift:
            c = f"({c} - {_dbl(spec.shift)})"
        w = f"({c} * {c})"
    r = f"round_even({w} / {_dbl(2.0 ** spec.exponent)}, 0)"
    r = f"CAST(least(greatest({r}, {_dbl(rl)}), {_dbl(rh)}) AS BIGINT)"
    return f"CASE WHEN {_q(spec.column)} IS NULL OR isnan({v}) THEN {rl} ELSE {r} END"


def _group_col(col: str, logical: str) -> str:
    """A group column as grouped and fetched: datetimes as microseconds, floats canonical."""
    c = _q(col)
    if logical in ("datetime", "datetime_ntz"):
        return f"epoch_us({c}) AS {c}"
    if logical == "float":
        return (f"CASE WHEN isnan({c}) THEN CAST('NaN' AS DOUBLE) WHEN {c} = 0 THEN "
                f"CAST(0 AS DOUBLE) ELSE CAST({c} AS DOUBLE) END AS {c}")
    return c


def _literal(v: Any, logical: str) -> str:
    if v is None:
        return "NULL"
    if logical == "bool":
        return "TRUE" if v else "FALSE"
    if logical == "int":
        return f"CAST({int(v)} AS BIGINT)"
    if logical == "float":
        return _dbl(v)
    if logical == "date":
        return f"DATE '{v.isoformat()}'"
    if logical in ("datetime", "datetime_ntz"):  # encoded as microseconds
        base = _EPOCH_UTC if logical == "datetime" else _EPOCH
        return f"CAST({(v - base) // _US} AS BIGINT)"
    return "'" + str(v).replace("'", "''") + "'"


def _decode(key: tuple[Any, ...], by: list[str], kinds: Mapping[str, str]) -> tuple[Any, ...]:
    out = []
    for v, c in zip(key, by, strict=True):
        if v is not None and kinds[c] == "datetime":
            v = _EPOCH_UTC + v * _US
        elif v is not None and kinds[c] == "datetime_ntz":
            v = _EPOCH + v * _US
        out.append(v)
    return tuple(out)


def _bin_sql(fp: str, cand: list[int], lo: int, hi: int) -> str:
    """Number of candidates below ``fp`` among ``cand[lo:hi]`` plus ``lo`` (a balanced CASE)."""
    if lo == hi:
        return str(lo)
    mid = (lo + hi) // 2
    return (f"CASE WHEN {fp} <= {cand[mid]} THEN {_bin_sql(fp, cand, lo, mid)} "
            f"ELSE {_bin_sql(fp, cand, mid + 1, hi)} END")


def grouped_stats(tab: DuckTable, by: list[str], keys: Sequence[tuple[Any, ...]] | None,
                  specs: list[StatSpec], schema: Mapping[str, str]) -> GroupedStats:
    """See `dpcert.backends.duckdb.DuckDBBackend.group_stats`."""
    for c in by:
        if c not in schema:
            raise InvalidParameter(f"unknown group column {c!r}; the data has {sorted(schema)}")
    check_specs(specs, {c: t.removesuffix("_ntz") for c, t in schema.items()})
    if keys is not None and not by:
        raise InvalidParameter("keys: public keys need group columns (by)")
    public = public_keys(keys, by, schema) if keys is not None else None
    others = [c for c in schema if c not in by]
    items = [*(_group_col(c, schema[c]) for c in by), *map(_q, others)]
    src = tab.derive(f"SELECT {', '.join(items) or '1'} FROM _t")
    if public is not None:
        src = _semi_join(src, public, by, schema)
    aggs = ['count(*) AS "#n"']
    aggs += [a for i, s in enumerate(specs) if (a := _agg_sql(i, s, schema))]
    group = f" GROUP BY {', '.join(map(_q, by))}" if by else ""
    cols = ", ".join([*map(_q, by), *aggs])
    rows = src.derive(f"SELECT {cols} FROM _t{group}").rel.fetchall()
    nb = len(by)
    found = {canon_key(tuple(r[:nb])): r for r in rows}
    key_list, enc_list = _key_lists(rows, public, by, schema)
    at_keys = [found.get(canon_key(t)) for t in enc_list]
    values: dict[str, np.ndarray[Any, Any]] = {}
    for i, s in enumerate(specs):
        if s.kind == "at_most":
            values[s.name] = _at_most(src, by, enc_list, s)
            continue
        pos = nb + 1 + sum(1 for t in specs[:i] if t.kind != "at_most")
        ints = [int(r[pos] or 0) if r is not None else 0 for r in at_keys]
        fits = all(-(2**62) < v < 2**62 for v in ints)
        values[s.name] = (np.asarray(ints, dtype=np.int64) if fits
                          else np.asarray(ints, dtype=object))
    return GroupedStats(list(key_list), values)


def _agg_sql(i: int, s: StatSpec, schema: Mapping[str, str]) -> str | None:
    """The SQL aggregate of statistic ``i`` (``None`` for ``at_most``, computed apart)."""
    if s.kind == "count" or (s.kind == "unit_count" and s.column is None):
        return f'count(*) AS "#{i}"'
    if s.kind == "unit_count":
        assert s.column is not None
        u = _q(s.column)
        if schema[s.column] == "float":
            u = (f"CASE WHEN isnan({u}) THEN CAST('NaN' AS DOUBLE) WHEN {u} = 0 THEN "
                 f"CAST(0 AS DOUBLE) ELSE {u} END")
        return (f'count(DISTINCT {u}) + max(CASE WHEN {u} IS NULL THEN 1 ELSE 0 END) '
                f'AS "#{i}"')
    if s.kind in ("fixed_sum", "fixed_sum_sq"):
        return f'sum({fixed_point_sql(s)}) AS "#{i}"'
    return None


def _key_lists(rows: list[Any], public: Sequence[tuple[Any, ...]] | None, by: list[str],
               schema: Mapping[str, str]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The released keys (public keys in their order, or the private keys found, sorted by
    `private_key_order`) and the same keys as DuckDB encodes them."""
    nb = len(by)
    if public is not None:
        enc = [tuple(_encode(v, schema[c]) for v, c in zip(k, by, strict=True)) for k in public]
        return list(public), enc
    if not by:
        return [()], [()]
    raw = [tuple(r[:nb]) for r in rows]
    dec = [_decode(t, by, schema) for t in raw]
    order = private_key_order(dec)
    return [dec[i] for i in order], [raw[i] for i in order]


def _encode(v: Any, logical: str) -> Any:
    if v is None:
        return None
    if logical == "datetime":
        return (v - _EPOCH_UTC) // _US
    if logical == "datetime_ntz":
        return (v - _EPOCH) // _US
    return v


def _semi_join(src: DuckTable, public: list[tuple[Any, ...]], by: list[str],
               schema: Mapping[str, str]) -> DuckTable:
    """The rows whose (encoded) key is one of ``public`` (null-safe; NaN equals NaN)."""
    if not public:
        return src.derive("SELECT * FROM _t WHERE FALSE")
    enc = {"datetime": "int", "datetime_ntz": "int"}
    rows = ", ".join("(" + ", ".join(
        f"CAST({_literal(v, schema[c])} AS {_sql_type(enc.get(schema[c], schema[c]))})"
        for v, c in zip(k, by, strict=True)) + ")" for k in public)
    names = ", ".join(f'"#k{j}"' for j in range(len(by)))
    on = " AND ".join(f'_t.{_q(c)} IS NOT DISTINCT FROM "#keys"."#k{j}"'
                      for j, c in enumerate(by))
    return src.derive(f'SELECT _t.* FROM _t SEMI JOIN (VALUES {rows}) "#keys"({names}) ON {on}')


def _sql_type(logical: str) -> str:
    return {"int": "BIGINT", "float": "DOUBLE", "str": "VARCHAR", "bool": "BOOLEAN",
            "date": "DATE"}[logical]


def _at_most(src: DuckTable, by: list[str], key_list: list[tuple[Any, ...]],
             spec: StatSpec) -> np.ndarray[Any, Any]:
    """Per group and candidate ``c``: rows whose fixed-point value is ≤ ``c``; shape (K, C)."""
    cand = list(spec.candidates)
    fp = src.derive(f'SELECT {", ".join([*map(_q, by), fixed_point_sql(spec)])} AS "#v" '
                    "FROM _t")
    keys = [*map(_q, by), f'{_bin_sql(chr(34) + "#v" + chr(34), cand, 0, len(cand))} AS "#b"']
    group = ", ".join([*map(_q, by), '"#b"'])
    rows = fp.derive(f'SELECT {", ".join(keys)}, count(*) AS "#c" FROM _t GROUP BY {group}'
                     ).rel.fetchall()
    index = {canon_key(k): i for i, k in enumerate(key_list)}
    hist = np.zeros((len(key_list), len(cand) + 1), dtype=np.int64)
    nb = len(by)
    for r in rows:
        i = index.get(canon_key(tuple(r[:nb])))
        if i is not None:
            hist[i, int(r[nb])] += int(r[nb + 1])
    out: np.ndarray[Any, Any] = np.cumsum(hist, axis=1)[:, :len(cand)]
    return out

