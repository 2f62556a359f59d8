"""Hypothesis strategies for the engine's totality property (``tests/frame/test_totality.py``).

A *case* is a table and a query on it, drawn to hit what broke releases after the charge before
admission existed: column names from every alphabet the engine's scratch columns use (``_s``,
``#n``, ``#hu``, ``c0``, ``count``, ...) and odd user names; every source dtype the admission
step admits (and some it refuses, which must be refused before the charge); nulls, NaN, ±0.0,
±inf and extreme magnitudes; empty and odd unicode strings; heavy units above the row limit;
units with hundreds of groups; and every aggregate, public or private keys, and filters.

New backends and aggregates join by extending :data:`SOURCE_TYPES` / :func:`aggregates`: the
property then covers them (``docs/dev/totality.md``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl
from hypothesis import event, reject
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

import dpcert as dp
from dpcert.errors import DPCertError, ReleaseFailed
from dpcert.samplers import InsecureSeededSource

#: Column names the engine uses internally, or used to, or that look like them, and odd ones.
NAMES = ["_p", "_s", "_h", "_b", "_i", "#n", "#k", "#b", "#c", "#g", "#v", "#0", "#hu", "#hp",
         "#f", "#r", "c0", "c1", "c2", "count", "units", "sum:x[0,1]", "sum__s_ci_low", "x#hi",
         "__dpcert_", "a b", "ü", "🙂", "`q`", "a.b", "*", "^c.*$", "-1", "\u200b"]

_F64_EXTREMES = [0.0, -0.0, math.nan, math.inf, -math.inf, 1.7976931348623157e308,
                 -1.7976931348623157e308, 5e-324, 2.0**64, -(2.0**64)]
_I64 = (-(2**63), 2**63 - 1)
_STRINGS = st.one_of(st.sampled_from(["", " ", "a", "b", "\x00", "🙂", "é", "e\u0301",
                                      "\u200b", "NULL", "nan"]), st.text(max_size=4))
_UTC = dt.UTC


@dataclass(frozen=True)
class SourceType:
    """A source dtype: how to build a Series of it and draw its values."""

    name: str
    dtype: Any
    values: st.SearchStrategy[Any]
    #: may be a unit, a key or a filter column (else: a value column only)
    exact: bool = True
    #: numeric: may be a value column
    numeric: bool = False
    cast_from: Any = None


SOURCE_TYPES: list[SourceType] = [
    SourceType("Int64", pl.Int64, st.one_of(st.integers(*_I64), st.sampled_from([0, -1, *_I64])),
               numeric=True),
    SourceType("Int32", pl.Int32, st.integers(-(2**31), 2**31 - 1), numeric=True),
    SourceType("UInt8", pl.UInt8, st.integers(0, 255), numeric=True),
    SourceType("Float64", pl.Float64, st.one_of(st.floats(), st.sampled_from(_F64_EXTREMES)),
               numeric=True),
    SourceType("Float32", pl.Float32, st.floats(width=32), numeric=True),
    SourceType("String", pl.String, _STRINGS),
    SourceType("Categorical", pl.Categorical, _STRINGS, cast_from=pl.String),
    SourceType("Boolean", pl.Boolean, st.booleans()),
    SourceType("Date", pl.Date, st.dates()),
    SourceType("DatetimeUTC", pl.Datetime("us", "UTC"),
               st.datetimes(timezones=st.just(_UTC))),
    SourceType("DatetimeParis", pl.Datetime("ms", "Europe/Paris"),
               st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1),
                            timezones=st.just(_UTC)), cast_from=pl.Datetime("ms", "UTC")),
    SourceType("DatetimeNaive", pl.Datetime("ns"),
               st.datetimes(min_value=dt.datetime(1700, 1, 1),
                            max_value=dt.datetime(2200, 1, 1))),
    SourceType("UInt64", pl.UInt64, st.integers(0, 2**64 - 1), exact=False, numeric=True),
    SourceType("Int128", pl.Int128, st.integers(-(2**127), 2**127 - 1), exact=False,
               numeric=True),
    SourceType("Decimal", pl.Decimal(20, 2),
               st.decimals(min_value=-(10**17), max_value=10**17, places=2,
                           allow_nan=False, allow_infinity=False), exact=False, numeric=True),
    SourceType("Null", pl.Null, st.none(), exact=False, numeric=True),
    SourceType("Duration", pl.Duration("us"), st.timedeltas(), exact=False),
    SourceType("Binary", pl.Binary, st.binary(max_size=3), exact=False),
]
EXACT = [t for t in SOURCE_TYPES if t.exact]
NUMERIC = [t for t in SOURCE_TYPES if t.numeric]
#: Types a unit column is drawn from (a unit needs two distinct values: Null has one).
UNIT_TYPES = [t for t in SOURCE_TYPES if t.name != "Null"]


def series(t: SourceType, name: str, values: list[Any]) -> pl.Series:
    """A Series of source type ``t`` (values drawn from ``t.values`` or None)."""
    if t.dtype == pl.Null:
        return pl.Series(name, [None] * len(values), dtype=pl.Null)
    if isinstance(t.dtype, pl.Decimal):  # built from text: Polars cannot build [None] as Decimal
        text = [None if v is None else str(decimal.Decimal(v)) for v in values]
        return pl.Series(name, text, dtype=pl.String).cast(t.dtype)
    try:
        s = pl.Series(name, values, dtype=t.cast_from or t.dtype)
        return s.cast(t.dtype) if t.cast_from is not None else s
    except Exception:  # a value Polars cannot hold in this dtype: not a table, draw another
        if currently_in_test_context():
            reject()
        raise


@dataclass(frozen=True)
class Case:
    """A table (as columns), the unit, key and value columns, and a query builder."""

    columns: dict[str, pl.Series]
    unit: str
    unit_type: SourceType
    build: Callable[[Any], Any]
    budget: Any
    #: the rows one more unit brings (same columns)
    extra: dict[str, pl.Series]
    describe: str

    def frame(self, neighbour: bool = False) -> pl.DataFrame:
        """The table, or its neighbour with one more unit."""
        df = pl.DataFrame(list(self.columns.values()))
        if not neighbour:
            return df
        return pl.concat([df, pl.DataFrame(list(self.extra.values()))], how="vertical")


def _filter(draw: st.DrawFn, name: str, t: SourceType, pool: list[Any]) -> Any:
    c = pl.col(name)
    lit = draw(st.sampled_from(pool)) if pool else None
    if t.name in ("Int64", "Int32", "UInt8", "Float64", "Float32"):
        opts = [c > (lit if lit is not None else 0), c.is_null(),
                ((c * 3) + 1) <= (lit if lit is not None else 0), c.abs() >= 1,
                c.is_between(-5, 5)]
        if t.name.startswith("Float"):
            opts += [c.is_nan(), c.is_finite()]
    elif t.name in ("String", "Categorical"):
        opts = [c.str.contains("a", literal=True), c.str.len_chars() > 1,
                c.is_in([lit if lit is not None else "a", "b"]), c == (lit or ""),
                c.str.starts_with("\x00")]
    elif t.name == "Boolean":
        opts = [c, ~c, c.is_null()]
    else:
        opts = [c.dt.year() > 2000, c.is_not_null()]
    return draw(st.sampled_from(opts))


def aggregates(draw: st.DrawFn, value: str | None) -> list[tuple[str, Callable[[], Any]]]:
    """A non-empty list of ``(kind, constructor)`` aggregates, value aggregates reading
    ``value``; built when the query is (bounds beyond 2**64 are refused there, before any
    charge)."""
    lo = draw(st.sampled_from([0.0, -1.0, -(2.0**64), 1e-300, -1e300]))
    hi = draw(st.sampled_from([1.0, 100.0, 2.0**64, 1e300]))
    b: tuple[float, float] | None = (lo, hi) if hi > lo else (lo, lo + 1.0)
    if draw(st.integers(0, 3)) == 0:
        b = None  # chosen privately (dpcert.frame.autobounds)
    opts: list[tuple[str, Callable[[], Any]]] = [("count", dp.count),
                                                 ("count_distinct", dp.count_distinct)]
    if value is not None:
        opts += [("sum", lambda: dp.sum(value, bounds=b)), ("mean", lambda: dp.mean(value, b)),
                 ("variance", lambda: dp.variance(value, b)),
                 ("quantile", lambda: dp.quantile(value, [0.5], bounds=b, candidates=9))]
    chosen = draw(st.lists(st.sampled_from(range(len(opts))), min_size=1, max_size=4,
                           unique=True))
    return [opts[i] for i in chosen]


#: The source types a Spark DataFrame is built from in the Spark variant of the property.
SPARK_TYPES = ("Int64", "Int32", "Float64", "String", "Boolean", "Date")


@st.composite
def cases(draw: st.DrawFn, *, exact_only: bool = False, only: tuple[str, ...] = (),
          filters: bool = True) -> Case:
    """One table and query (module docstring); ``only`` restricts the source types (by name),
    ``filters=False`` leaves filters out (the Spark variant: its allow-list takes SQL)."""
    names = draw(st.lists(st.sampled_from(NAMES), min_size=4, max_size=4, unique=True))
    u_name, k_name, v_name, f_name = names

    def pick(types: list[SourceType]) -> SourceType:
        return draw(st.sampled_from([t for t in types if not only or t.name in only]))

    u_t = pick(EXACT if exact_only else UNIT_TYPES)
    k_t = pick(EXACT if exact_only else SOURCE_TYPES)
    v_t = pick(NUMERIC[:5] if exact_only else NUMERIC)
    f_t = pick(EXACT)
    units = draw(st.lists(u_t.values, min_size=2, max_size=7, unique_by=_canon))
    extra_unit, units = units[-1], units[:-1]
    key_pool = draw(st.lists(k_t.values, min_size=1, max_size=4, unique_by=_canon))
    many = draw(st.booleans()) and k_t.name in ("Int64", "Int32")
    rows: list[tuple[Any, ...]] = []
    for j, u in enumerate(units):
        n = draw(st.integers(1, 12)) if j else draw(st.integers(1, 30))  # unit 0 may be heavy
        for _ in range(n):
            rows.append((u, draw(st.sampled_from(key_pool)), draw(v_t.values),
                         draw(f_t.values)))
        if many and j == 0:  # one unit in hundreds of groups
            rows += [(u, 1000 + i, None, None) for i in range(200)]
    extra = [(extra_unit, draw(st.sampled_from(key_pool)), draw(v_t.values), draw(f_t.values))
             for _ in range(draw(st.integers(1, 5)))]

    def cols(rs: list[tuple[Any, ...]]) -> dict[str, pl.Series]:
        return {n: series(t, n, [r[i] for r in rs])
                for i, (n, t) in enumerate(((u_name, u_t), (k_name, k_t), (v_name, v_t),
                                            (f_name, f_t)))}

    aggs = aggregates(draw, v_name)
    grouped = draw(st.booleans())
    private = grouped and draw(st.booleans())
    public = draw(st.lists(st.sampled_from(key_pool), min_size=1, max_size=4,
                           unique_by=_canon)) if grouped and not private else None
    filt = _filter(draw, f_name, f_t, []) if filters and draw(st.booleans()) else None
    G, R = (draw(st.one_of(st.integers(1, 3), st.none())),
            draw(st.one_of(st.integers(1, 3), st.none())))  # None: chosen privately

    def build(sess: Any) -> Any:
        q = sess.query()
        if filt is not None:
            q = q.filter(filt)
        if grouped:
            q = q.group_by(k_name, keys="private" if private else public)
        return q.agg(*(make() for _, make in aggs)).bound_contributions(max_groups=G,
                                                                        max_rows_per_group=R)

    budget = dp.ApproxDP(1.0, 1e-6) if private else draw(
        st.sampled_from([dp.PureDP(1.0), dp.ZCDP(0.5), dp.ApproxDP(1.0, 1e-6)]))
    text = (f"unit {u_name!r}:{u_t.name} key {k_name!r}:{k_t.name} value {v_name!r}:{v_t.name} "
            f"filter {f_name!r}:{f_t.name}={filt} aggs={[k for k, _ in aggs]} "
            f"keys={'private' if private else public} G={G} R={R} rows={len(rows)}")
    return Case(cols(rows), u_name, u_t, build, budget, cols(extra), text)


def _canon(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    if isinstance(v, float) and v == 0.0:
        return 0.0
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return ("tz", v.astimezone(_UTC).replace(tzinfo=None))
    return v


# -- the property itself ------------------------------------------------------------------

#: A session budget of each measure, large enough for every release of a case.
SESSION_BUDGETS = {dp.PureDP: dp.PureDP(10**6), dp.ZCDP: dp.ZCDP(10**6),
                   dp.ApproxDP: dp.ApproxDP(10**6, 0.5)}


def _outcome(case: Case, neighbour: bool, engine: Callable[[Any], Any]) -> str:
    """``"released"``, or ``"refused: <error type>"`` for a refusal before the charge.  A
    failure after the charge is re-raised (the property fails).  ``engine`` turns the Polars
    table into the frame the session runs on (a Spark DataFrame in the Spark variant)."""
    df = engine(case.frame(neighbour))
    try:
        sess = dp.Session(df, privacy_unit=case.unit, budget=SESSION_BUDGETS[type(case.budget)],
                          _source=InsecureSeededSource(1))
        q = case.build(sess)
        q.check(case.budget)
    except ReleaseFailed:  # pragma: no cover - never before a charge
        raise
    except DPCertError as e:
        return f"refused: {type(e).__name__}"
    spent_before = sess.spent
    try:
        res = q.release(case.budget)
    except ReleaseFailed as e:
        raise AssertionError(f"failed after the charge: {case.describe}") from e
    assert sess.spent != spent_before
    assert res.to_polars().height >= 0
    return "released"


def check_total(case: Case, engine: Callable[[Any], Any] = lambda df: df) -> None:
    """The property, for one case: total after the charge, and the neighbour agrees."""
    a = _outcome(case, False, engine)
    b = _outcome(case, True, engine)
    if currently_in_test_context():
        event(a)
    assert a == b, f"{case.describe}: {a} on D, {b} on D' (one unit added)"


