"""The DuckDB backend: its SQL xxhash64 equals dpcert's NumPy hash, and for a fixed key Polars and
DuckDB give bit-identical bounded statistics (nulls, NaN, -0.0, heavy units, many groups per
unit; integer, string, float, date and datetime keys; filters; public and private keys); a
session on DuckDB data releases, refuses bad input before any charge, and passes the totality
property on a few cases."""

from __future__ import annotations

import datetime as dt
import random
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings

import dpcert as dp
from _frames import SPARK_TYPES, Case, cases, check_total
from dpcert.backends import _hash, backend_for
from dpcert.backends.base import BoundSpec, StatSpec
from dpcert.backends.polars import PolarsBackend
from dpcert.errors import InadmissibleColumn, InvalidParameter, UnsafeExpression

duckdb = pytest.importorskip("duckdb")

from dpcert.backends.duckdb import DuckDBBackend, DuckTable, to_duck  # noqa: E402

KEY = bytes(range(3, 19))
PL = PolarsBackend()
DB = DuckDBBackend()


def to_db(df: pl.DataFrame) -> DuckTable:
    con = duckdb.connect()
    con.register("src", df.to_arrow())
    con.execute("CREATE TABLE t AS SELECT * FROM src")
    return to_duck((con, "t"))


def data(n: int = 3000, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    u = rng.integers(0, 150, n).astype(float)
    u[:400] = 7.0  # a heavy unit
    u[rng.random(n) < 0.02] = np.nan
    u[rng.random(n) < 0.02] = -0.0
    uu: list[Any] = [None if i % 29 == 0 else float(x) for i, x in enumerate(u)]
    g = [None if i % 31 == 0 else f"g{x}é" for i, x in enumerate(rng.integers(0, 40, n))]
    v = rng.uniform(-5, 105, n)
    v[rng.random(n) < 0.05] = np.nan
    v[rng.random(n) < 0.05] = -0.0
    vv: list[Any] = [None if i % 23 == 0 else float(x) for i, x in enumerate(v)]
    day = [dt.date(2020, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(0, 4, n)]
    at = [dt.datetime(2021, 5, 1, tzinfo=dt.UTC) + dt.timedelta(hours=int(h))
          for h in rng.integers(0, 3, n)]
    return pl.DataFrame({"u": uu, "g": g, "v": vv, "k": rng.integers(0, 3, n),
                         "iu": rng.integers(-(2**62), 2**62, 60)[rng.integers(0, 60, n)],
                         "day": day, "at": at},
                        schema={"u": pl.Float64, "g": pl.String, "v": pl.Float64,
                                "k": pl.Int64, "iu": pl.Int64, "day": pl.Date,
                                "at": pl.Datetime("us", "UTC")})


def specs(v: str = "v") -> list[StatSpec]:
    lo, hi = Fraction(0), Fraction(100)
    return [StatSpec("n", "count"), StatSpec("units", "unit_count", "u"),
            StatSpec("s", "fixed_sum", v, lo, hi, exponent=-10),
            StatSpec("q", "fixed_sum_sq", v, lo, hi, exponent=-4),
            StatSpec("qc", "fixed_sum_sq", v, lo, hi, exponent=-6, shift=Fraction(101, 2)),
            StatSpec("m", "at_most", v, lo, hi, exponent=0, candidates=(0, 10, 50, 99, 100))]


def same(a: Any, b: Any) -> None:
    assert a.keys == b.keys
    assert set(a.values) == set(b.values)
    for k in a.values:
        assert np.asarray(a.values[k]).tolist() == np.asarray(b.values[k]).tolist(), k


def test_sql_xxhash64_equals_numpy() -> None:
    """The chain over a long, a double, a string, a date and a datetime column, with nulls,
    extremes, -0.0, NaN and multi-byte strings, through the bounding query's own SQL."""
    from dpcert.backends.duckdb import _H, _link

    rng = random.Random(1)
    alphabet = "ab\x01é漢😀"
    rows = [(rng.choice([-(2**63), 2**63 - 1, 0, -1, rng.randint(-(2**63), 2**63 - 1)])
             if i % 7 else None,
             rng.choice([0.0, -0.0, float("nan"), None, 5e-324, -1e-310, float("inf"),
                         -float("inf"), 2.2250738585072014e-308, -1.7976931348623157e308,
                         2.0**-1023, 0.5, rng.uniform(-1e9, 1e9),
                         rng.uniform(-1, 1) * 10.0 ** rng.randint(-320, 307)]),
             "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 70))) if i % 11 else None,
             dt.date(1969, 12, 31) + dt.timedelta(days=rng.randint(-9000, 9000)) if i % 5 else None,
             dt.datetime(1960, 1, 1) + dt.timedelta(microseconds=rng.randint(0, 2**52)))
            for i in range(500)]
    df = pl.DataFrame(rows, schema={"a": pl.Int64, "b": pl.Float64, "c": pl.String,
                                    "d": pl.Date, "e": pl.Datetime("us")}, orient="row")
    tab = to_db(df.with_row_index("i"))
    from dpcert.backends import _duckdb_hash as dh

    dh.register(tab.con)
    q = f"SELECT i, CAST({_hash.key_seed(KEY)} AS UBIGINT) AS {_H}, a, b, c, d, e FROM _t"
    for col, kind in (("a", "int"), ("b", "float"), ("c", "str"), ("d", "date"),
                      ("e", "datetime_ntz")):
        q = _link(q, col, kind)
    got = dict(tab.derive(f"SELECT i, {_H} FROM ({q})").rel.fetchall())
    want = _hash.hash_chain([df[c] for c in "abcde"], _hash.key_seed(KEY))
    assert [got[i] for i in range(len(rows))] == [int(x) for x in want]


@pytest.mark.parametrize("exponent", [-1, 0, 1, 3])
def test_fixed_point_values_equal_polars_on_ties_and_extremes(exponent: int) -> None:
    """The value rule row by row: halves (ties to even), negatives, bounds, NaN, null, ±inf."""
    from dpcert.backends._duckdb_stats import fixed_point_sql
    from dpcert.backends._polars_stats import fixed_point_expr

    vals: list[Any] = [k / 4 for k in range(-80, 81)] + [
        None, float("nan"), float("inf"), -float("inf"), 1e300, -1e300, 5e-324, 2.5, 3.5, -2.5]
    df = pl.DataFrame({"v": vals}, schema={"v": pl.Float64}).with_row_index("i")
    tab = to_db(df)
    for kind, shift in (("fixed_sum", 0), ("fixed_sum_sq", 0), ("fixed_sum_sq", 3)):
        spec = StatSpec("s", kind, "v", Fraction(-7, 2), Fraction(15, 2), exponent=exponent,
                        shift=Fraction(shift))
        want = df.select(fixed_point_expr(spec)).to_series().to_list()
        got = dict(tab.derive(f"SELECT i, {fixed_point_sql(spec)} FROM _t").rel.fetchall())
        assert [got[i] for i in range(len(vals))] == want, kind


@pytest.mark.parametrize(("G", "R"), [(2, 1), (5, 3)])
def test_polars_and_duckdb_give_identical_statistics(G: int, R: int) -> None:
    df = data(seed=G)
    tab = to_db(df)
    bound = BoundSpec("u", ("g",), G, R, key=KEY, value_columns=("v",))
    keys = [(f"g{i}é",) for i in range(45)] + [(None,)]
    a = PL.group_stats(PL.keyed_bound(df, bound), ["g"], keys, specs())
    b = DB.group_stats(DB.keyed_bound(tab, bound), ["g"], keys, specs())
    same(a, b)
    assert a.values["n"].sum() < df.height  # bounding dropped rows
    a2 = PL.group_stats(PL.keyed_bound(df, bound), ["g"], None, specs()[:3])
    b2 = DB.group_stats(DB.keyed_bound(tab, bound), ["g"], None, specs()[:3])
    same(a2, b2)


@pytest.mark.parametrize(("G", "R"), [(1, 1), (3, 2), (40, 5)])
def test_one_unit_with_ties_and_hostile_values_is_identical(G: int, R: int) -> None:
    """One unit holding every row: many groups (over G), groups over R with repeated identical
    rows (ties on the row hash and the value), ±inf, NaN, -0.0 and null values, a null group."""
    rng = np.random.default_rng(G * 10 + R)
    hostile = [float("inf"), -float("inf"), float("nan"), -0.0, 0.0, None, 50.0, 50.0, 1e308]
    n = 600
    v: list[Any] = [hostile[i] if i < len(hostile) else float(x)
                    for i, x in enumerate(rng.integers(0, 5, n))]  # few values: many ties
    g: list[Any] = [None if i % 17 == 0 else int(x) for i, x in enumerate(rng.integers(0, 30, n))]
    df = pl.DataFrame({"u": [7] * n, "g": g, "v": v},
                      schema={"u": pl.Int64, "g": pl.Int64, "v": pl.Float64})
    bound = BoundSpec("u", ("g",), G, R, key=KEY, value_columns=("v",))
    keys = [(i,) for i in range(30)] + [(None,)]
    sp = specs()[:1] + specs()[2:]
    a = PL.group_stats(PL.keyed_bound(df, bound), ["g"], keys, sp)
    b = DB.group_stats(DB.keyed_bound(to_db(df), bound), ["g"], keys, sp)
    same(a, b)
    assert int(a.values["n"].sum()) == min(G, 31) * R  # every kept group is over R here


@pytest.mark.parametrize(("unit", "by", "keys"), [
    ("iu", ("k", "day"), None),
    ("iu", ("at",), [(dt.datetime(2021, 5, 1, h, tzinfo=dt.UTC),) for h in range(4)]),
    ("g", ("k",), [(0,), (1,), (2,), (3,)]),
    ("day", (), None),
])
def test_other_units_keys_and_filters_are_identical(unit: str, by: tuple[str, ...],
                                                    keys: Any) -> None:
    """Integer, string and date units; two key columns, datetime keys and no keys; with a
    filter checked and rendered by each backend."""
    df = data(2000, seed=3)
    tab = to_db(df)
    flt = ["k <> 2 AND (v > 3 OR v IS NULL)"]
    bound = BoundSpec(unit, by, 2, 2, key=KEY, value_columns=("v",))
    sp = specs()[:1] + specs()[2:]
    a = PL.group_stats(PL.keyed_bound(PL.filter(df, PL.check_predicates(flt, PL.schema(df))),
                                      bound), list(by), keys, sp)
    b = DB.group_stats(DB.keyed_bound(DB.filter(tab, DB.check_predicates(flt, DB.schema(tab))),
                                      bound), list(by), keys, sp)
    same(a, b)
    assert 0 < int(a.values["n"].sum()) < df.height


def test_bounding_is_one_query_with_no_python_per_row() -> None:
    """The bounded frame is a lazy DuckDB relation: nothing runs until it is read, and its SQL
    holds the windows (only the hash of strings is a vectorised Arrow UDF)."""
    tab = to_db(data(100))
    b = DB.keyed_bound(tab, BoundSpec("u", ("g",), 1, 1, key=KEY, value_columns=("v",)))
    assert isinstance(b, DuckTable)
    text = b.rel.sql_query()
    assert "dense_rank()" in text and "row_number()" in text


def test_a_compiled_release_runs_on_duckdb() -> None:
    from dpcert.core.measures import PureDP
    from dpcert.frame.compile import compile_plan
    from dpcert.frame.plan import Count, QueryPlan, Sum

    df = data(1200, seed=4).filter(pl.col("u").is_not_null())
    tab = to_db(df)
    keys = tuple((f"g{i}é",) for i in range(40))
    plan = QueryPlan((Count(), Sum("v", (0.0, 100.0))), group_keys=("g",), public_keys=keys,
                     privacy_unit="u", max_groups=3, max_rows_per_group=2, filters=("k <> 2",))
    m_db = compile_plan(plan, PureDP(1), schema=DB.schema(tab), backend=DB, key=KEY)
    m_pl = compile_plan(plan, PureDP(1), schema=PL.schema(df), backend=PL, key=KEY)
    assert m_db.map(1) == m_pl.map(1) == 1
    assert m_db(tab)["g"] == m_pl(df)["g"] == [k[0] for k in keys]


def test_a_session_on_duckdb_releases_from_python_and_sql() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE people AS SELECT i % 50 AS pid, CASE WHEN i % 3 = 0 THEN 'n' "
                "ELSE 's' END AS region, CAST(i % 97 AS DOUBLE) AS income FROM range(3000) t(i)")
    for data_ in ((con, "people"), (con, con.sql("SELECT * FROM people")),
                  con.sql("SELECT * FROM people")):
        sess = dp.Session(data_, "pid", budget=dp.ZCDP(4))
        assert backend_for(data_).name == "duckdb"
        r = (sess.query().filter("income > 10").group_by("region", keys=["n", "s"])
             .agg(dp.count(), dp.sum("income", bounds=(0, 100)))
             .bound_contributions(max_groups=1, max_rows_per_group=3)
             .release(budget=dp.ZCDP(1)))
        assert r.table["region"].to_list() == ["n", "s"]
        assert r.certificate["backend"] == "duckdb"
        r2 = sess.sql("SELECT region, COUNT(*) AS n FROM data WHERE income > 5 GROUP BY region",
                      keys=["n", "s"]).release(budget=dp.ZCDP(1))
        assert r2.table.columns[:2] == ["region", "n"]
        assert "SELECT region" in r2.certificate["plan"]["sql"]


def _catalog(con: Any) -> list[Any]:
    return sorted(con.execute(
        "SELECT DISTINCT 'function', function_name FROM duckdb_functions() "
        "UNION ALL SELECT table_type, table_name FROM information_schema.tables").fetchall())


def test_a_release_leaves_nothing_on_the_connection() -> None:
    """String units and keys (which need dpcert's Arrow hash function) with public and private
    keys: after each release the connection's functions, tables and views are as before, and a
    second release on it still runs."""
    con = duckdb.connect()
    con.execute("CREATE TABLE p AS SELECT 'u' || (i % 1000) AS pid, 'r' || (i % 3) AS region, "
                "CAST(i % 97 AS DOUBLE) AS income FROM range(2000) t(i)")
    before = _catalog(con)
    for keys, total, budget in ((["r0", "r1", "r2"], dp.PureDP(9), dp.PureDP(1)),
                                ("private", dp.ApproxDP(9, 0.5), dp.ApproxDP(1, 1e-6)),
                                (["r0", "r1"], dp.PureDP(9), dp.PureDP(1))):
        sess = dp.Session((con, "p"), "pid", budget=total)
        r = (sess.query().group_by("region", keys=keys)
             .agg(dp.count(), dp.sum("income", bounds=(0, 100)))
             .bound_contributions(max_groups=1, max_rows_per_group=2).release(budget=budget))
        assert r.table.height >= 1
        assert _catalog(con) == before


def test_bad_input_is_refused_before_any_charge() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i AS pid, CAST(i AS UBIGINT) AS big, "
                "INTERVAL 1 DAY * i AS span, i % 2 = 0 AS flag, CAST(i AS DOUBLE) AS x "
                "FROM range(20) t(i)")
    with pytest.raises(InadmissibleColumn, match=r"big.*UBIGINT.*privacy unit"):
        dp.Session((con, "t"), "big", budget=dp.PureDP(1))
    sess = dp.Session((con, "t"), "pid", budget=dp.PureDP(1))
    bad = [
        (sess.query().group_by("span", keys="private"), InadmissibleColumn, "INTERVAL"),
        (sess.query().group_by("flag", keys=[True]).agg(dp.sum("flag", bounds=(0, 1))),
         InadmissibleColumn, r"BOOLEAN.*value"),
        (sess.query().filter(pl.col("x") > 1), UnsafeExpression, "SQL strings"),
        (sess.query().filter("x IN (1, NULL)"), UnsafeExpression, "NULL in an IN list"),
        (sess.query().filter("abs(x) > 1"), UnsafeExpression, "not allowed"),
        (sess.query().filter("x > 99999999999999999999"), UnsafeExpression, "64 bits"),
    ]
    for q, err, msg in bad:
        q = q.agg(dp.count()) if not q.aggregates else q
        with pytest.raises(err, match=msg):
            q.bound_contributions(max_groups=1, max_rows_per_group=1).release(
                budget=dp.PureDP(0.5))
    assert sess.spent == 0
    with pytest.raises(InvalidParameter, match="no such table"):
        to_duck((con, "missing"))
    with pytest.raises(InvalidParameter, match="not a DuckDB relation"):
        to_duck(42)


#: Source types that reach DuckDB through Arrow (all but Int128), admitted ones and refused ones.
DUCK_TYPES = (*SPARK_TYPES, "UInt8", "Float32", "Categorical", "DatetimeUTC", "DatetimeParis",
              "DatetimeNaive", "UInt64", "Decimal", "Null", "Duration", "Binary")


@settings(max_examples=4, deadline=None, derandomize=True, phases=[Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(case=cases(only=DUCK_TYPES, filters=False))
def test_duckdb_release_cannot_fail_after_the_charge(case: Case) -> None:
    def engine(df: pl.DataFrame) -> Any:
        con = duckdb.connect()
        return (con, con.from_arrow(df.to_arrow()))

    check_total(case, engine)


def test_release_spec_on_the_duckdb_engine(tmp_path: Any) -> None:
    """``dpcert release --engine duckdb``: the curator's file is read by DuckDB."""
    import json

    from dpcert.cli.main import main

    pl.DataFrame({"pid": [1, 1, 2, 3, 4, 5], "region": ["n", "s", "n", "s", "n", "n"]}
                 ).write_parquet(tmp_path / "people.parquet")
    (tmp_path / "spec.toml").write_text(
        '[data]\nprivacy_unit = "pid"\n\n[[query]]\nname = "by_region"\ngroup_by = ["region"]\n'
        'keys = ["n", "s", "w"]\nmax_groups = 1\nmax_rows_per_group = 1\n'
        'budget = { epsilon = 1000, delta = 0 }\naggregates = [{ kind = "count" }]\n')
    assert main(["release", str(tmp_path / "spec.toml"), "--no-ledger", "--data",
                 str(tmp_path / "people.parquet"), "--budget-epsilon", "2000",
                 "--budget-delta", "0", "--out", str(tmp_path / "out"), "--engine", "duckdb"]) == 0
    cert = json.loads((tmp_path / "out" / "certificate.json").read_text())
    assert cert["by_region"]["backend"] == "duckdb"
    out = pl.read_csv(tmp_path / "out" / "by_region.csv")
    # unit 1 keeps one of its two groups; noise scale 1/1000 (discrete): exact w.p. > 1 - 1e-400
    got = dict(zip(out["region"].to_list(), out["count"].to_list(), strict=True))
    assert got["w"] == 0 and got["n"] + got["s"] == 5 and got["n"] in (3, 4)
