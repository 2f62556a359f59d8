"""The Spark backend on a local[2] session: Spark's xxhash64 equals dpcert's NumPy hash, and for
a fixed key Polars and Spark give bit-identical statistics on data with nulls, NaN, -0.0, many
groups per unit and heavy units.  Skipped where pyspark or Java is absent (CI installs both)."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl
import pytest

from dpcert.backends import _hash
from dpcert.backends.base import BoundSpec, StatSpec
from dpcert.backends.polars import PolarsBackend
from dpcert.errors import InvalidParameter, OutOfDomain, ReleaseFailed, UnsafeExpression

pytestmark = pytest.mark.spark
KEY = bytes(range(3, 19))
PL = PolarsBackend()


def to_spark(spark: Any, df: pl.DataFrame) -> Any:
    types = {pl.Int64: "bigint", pl.Int32: "int", pl.Float64: "double", pl.String: "string",
             pl.Boolean: "boolean"}

    def sql_type(t: Any) -> str:
        if isinstance(t, pl.Datetime):
            return "timestamp" if t.time_zone else "timestamp_ntz"
        return types[t]

    ddl = ", ".join(f"`{c}` {sql_type(t)}" for c, t in df.schema.items())
    return spark.createDataFrame(df.rows(), ddl)


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
    return pl.DataFrame({"u": uu, "g": g, "v": vv, "k": rng.integers(0, 3, n)},
                        schema={"u": pl.Float64, "g": pl.String, "v": pl.Float64,
                                "k": pl.Int64})


def specs() -> list[StatSpec]:
    lo, hi = Fraction(0), Fraction(100)
    return [StatSpec("n", "count"), StatSpec("units", "unit_count", "u"),
            StatSpec("s", "fixed_sum", "v", lo, hi, exponent=-10),
            StatSpec("q", "fixed_sum_sq", "v", lo, hi, exponent=-4),
            StatSpec("qc", "fixed_sum_sq", "v", lo, hi, exponent=-6, shift=Fraction(101, 2)),
            StatSpec("m", "at_most", "v", lo, hi, exponent=0, candidates=(0, 10, 50, 99, 100))]


def same(a: Any, b: Any) -> None:
    assert a.keys == b.keys
    assert set(a.values) == set(b.values)
    for k in a.values:
        assert np.asarray(a.values[k]).tolist() == np.asarray(b.values[k]).tolist(), k


def test_spark_xxhash64_equals_numpy(spark: Any) -> None:
    from pyspark.sql import functions as F

    rng = random.Random(1)
    alphabet = "ab\x00é漢😀"
    rows = [(rng.randint(-(2**63), 2**63 - 1) if i % 7 else None,
             rng.choice([0.0, -0.0, float("nan"), None, rng.uniform(-1e9, 1e9)]),
             "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 70))) if i % 11 else None)
            for i in range(500)]
    sdf = spark.createDataFrame([(i, *r) for i, r in enumerate(rows)],
                                "i bigint, a bigint, b double, c string")
    k1, k2 = (F.lit(k).cast("bigint") for k in _hash.key_longs(KEY))
    got = {r.i: r.h for r in sdf.select("i", F.xxhash64(k1, k2, "a", "b", "c").alias("h"))
           .collect()}
    pdf = pl.DataFrame(rows, schema={"a": pl.Int64, "b": pl.Float64, "c": pl.String},
                       orient="row")
    mine = _hash.as_signed(_hash.hash_chain([pdf["a"], pdf["b"], pdf["c"]],
                                            _hash.key_seed(KEY)))
    assert [got[i] for i in range(len(rows))] == [int(x) for x in mine]


@pytest.mark.parametrize(("G", "R", "how"), [(2, 1, "arrow"), (5, 3, "arrow"), (2, 1, "sql"),
                                            (5, 3, "sql")])
def test_polars_and_spark_give_identical_statistics(spark: Any, G: int, R: int,
                                                    how: str) -> None:
    from dpcert.backends.spark import SparkBackend

    sp = SparkBackend(how)
    df = data(seed=G)
    bound = BoundSpec("u", ("g",), G, R, key=KEY, value_columns=("v",))
    keys = [(f"g{i}é",) for i in range(45)] + [(None,)]
    a = PL.group_stats(PL.keyed_bound(df, bound), ["g"], keys, specs())
    b = sp.group_stats(sp.keyed_bound(to_spark(spark, df), bound), ["g"], keys, specs())
    same(a, b)
    assert a.values["n"].sum() < df.height  # bounding dropped rows
    a2 = PL.group_stats(PL.keyed_bound(df, bound), ["g"], None, specs()[:3])
    b2 = sp.group_stats(sp.keyed_bound(to_spark(spark, df), bound), ["g"], None, specs()[:3])
    same(a2, b2)


@pytest.mark.parametrize("how", ["arrow", "sql"])
def test_heavy_pairs_value_ties_and_group_limits(spark: Any, monkeypatch: Any, how: str) -> None:
    """Pairs with more than R rows (with tied values), units with exactly G and with more than G
    groups, negative fixed-point values; and the decimal fallback when a long sum overflows."""
    from pyspark.sql import functions as F

    from dpcert.backends import spark as spark_mod
    from dpcert.backends.spark import SparkBackend

    rng = np.random.default_rng(11)
    G, R = 3, 2
    u = np.concatenate([np.full(60, 1), np.full(12, 2), np.repeat(np.arange(3, 40), 7)])
    g = np.concatenate([rng.integers(0, 3, 60),  # unit 1: exactly G groups, ~20 rows each
                        np.arange(12) % 6,      # unit 2: 6 groups of 2 rows (> G groups)
                        rng.integers(0, 8, 37 * 7)])
    v = rng.choice([-40.0, -0.0, 0.0, 7.5, 7.5, 99.0], u.size)  # many ties in values
    df = pl.DataFrame({"u": u, "g": g, "v": v})
    sdf = to_spark(spark, df)
    lo, hi = Fraction(-50), Fraction(100)
    st = [StatSpec("n", "count"), StatSpec("s", "fixed_sum", "v", lo, hi, exponent=-3),
          StatSpec("q", "fixed_sum_sq", "v", lo, hi, exponent=0),
          StatSpec("m", "at_most", "v", lo, hi, candidates=(-40, 0, 8, 99))]
    sp = SparkBackend(how)
    keys = [(i,) for i in range(9)]
    bound = BoundSpec("u", ("g",), G, R, key=KEY, value_columns=("v",))
    a = PL.group_stats(PL.keyed_bound(df, bound), ["g"], keys, st)
    b_rows = sp.keyed_bound(sdf, bound)
    same(a, sp.group_stats(b_rows, ["g"], keys, st))
    per = {r["u"]: (r["n"], r["k"]) for r in b_rows.groupBy("u").agg(
        F.count(F.lit(1)).alias("n"), F.count_distinct("g").alias("k")).collect()}
    assert per[1] == (G * R, G) and per[2] == (G * R, G)  # both limits bind
    assert a.values["s"].min() < 0
    big = [StatSpec("s", "fixed_sum", "v", Fraction(0), Fraction(2**53), exponent=0)]
    ones = pl.DataFrame({"u": np.arange(3000), "g": np.zeros(3000, dtype=np.int64),
                         "v": np.full(3000, 2.0**52)})
    monkeypatch.setattr(spark_mod, "_SPLIT", 62)  # the low part overflows: decimal fallback
    monkeypatch.setattr(spark_mod, "_LOW", (1 << 62) - 1)
    got = sp.group_stats(to_spark(spark, ones), ["g"], [(0,)], big)
    assert got.values["s"].tolist() == [3000 * 2**52]


def test_datetime_units_and_groups(spark: Any) -> None:
    """Aware datetimes (Polars ``Datetime(tz)`` / Spark ``TIMESTAMP``) and naive ones (Polars
    ``Datetime`` / Spark ``TIMESTAMP_NTZ``) as units and groups: the same microseconds, the same
    rows and statistics, whatever the Spark session's time zone; mismatched keys refused."""
    import datetime as dt

    from dpcert.backends.spark import SparkBackend

    rng = np.random.default_rng(5)
    n = 1500
    base = dt.datetime(1969, 12, 31, 23, 0, 0)  # both sides of the epoch
    us = rng.integers(0, 80, n) * 3_600_000_123 + rng.integers(0, 2, n)  # microseconds
    us[:200] = 5  # a heavy unit
    units: list[Any] = [None if i % 37 == 0 else base + dt.timedelta(microseconds=int(x))
                        for i, x in enumerate(us)]
    groups: list[Any] = [None if i % 41 == 0 else base + dt.timedelta(days=int(x), seconds=1)
                         for i, x in enumerate(rng.integers(0, 12, n))]
    df = pl.DataFrame({"t": units, "d": groups, "v": rng.uniform(0, 100, n),
                       "k": rng.integers(0, 3, n)}, schema={
        "t": pl.Datetime("us"), "d": pl.Datetime("us"), "v": pl.Float64, "k": pl.Int64})
    df = df.with_columns(pl.col("t").dt.replace_time_zone("UTC")
                         .dt.convert_time_zone("America/New_York"))  # aware units
    sp = SparkBackend()
    old_tz = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "Asia/Kolkata")  # must not matter
    try:
        sdf = to_spark(spark, df)
        for by, unit in ((("d",), "t"), (("t",), "k")):
            st = [StatSpec("n", "count"), StatSpec("units", "unit_count", unit),
                  StatSpec("s", "fixed_sum", "v", Fraction(0), Fraction(100), exponent=-10)]
            bound = BoundSpec(unit, by, 3, 2, key=KEY, value_columns=("v",))
            a = PL.group_stats(PL.keyed_bound(df, bound), list(by), None, st)
            b = sp.group_stats(sp.keyed_bound(sdf, bound), list(by), None, st)
            same(a, b)
            assert a.n_groups > 5 and a.values["n"].sum() < df.height
        pub = [(base + dt.timedelta(days=i, seconds=1),) for i in range(14)] + [(None,)]
        bound = BoundSpec("t", ("d",), 3, 2, key=KEY, value_columns=("v",))
        st = [StatSpec("n", "count"), StatSpec("units", "unit_count", "t")]
        same(PL.group_stats(PL.keyed_bound(df, bound), ["d"], pub, st),
             sp.group_stats(sp.keyed_bound(sdf, bound), ["d"], pub, st))
        aware = [(dt.datetime(2020, 1, 1, tzinfo=dt.UTC),)]
        for be, frame in ((PL, df), (sp, sdf)):
            with pytest.raises(OutOfDomain, match="'d'"):
                be.group_stats(frame, ["d"], aware, st)  # aware key, naive column
            with pytest.raises(OutOfDomain, match="'t'"):
                be.group_stats(frame, ["t"], [(base,)], st)  # naive key, aware column
    finally:
        spark.conf.set("spark.sql.session.timeZone", old_tz)


def test_two_key_columns_and_no_groups(spark: Any) -> None:
    from dpcert.backends.spark import SparkBackend

    sp = SparkBackend()
    df = data(1500, seed=9)
    sdf = to_spark(spark, df)
    bound = BoundSpec("u", ("k", "g"), 3, 2, key=KEY, value_columns=("v",))
    keys = [(k, f"g{i}é") for k in range(3) for i in range(40)]
    same(PL.group_stats(PL.keyed_bound(df, bound), ["k", "g"], keys, specs()[:4]),
         sp.group_stats(sp.keyed_bound(sdf, bound), ["k", "g"], keys, specs()[:4]))
    flat = BoundSpec("u", (), 1, 2, key=KEY, value_columns=("v",))
    same(PL.group_stats(PL.keyed_bound(df, flat), [], None, specs()),
         sp.group_stats(sp.keyed_bound(sdf, flat), [], None, specs()))


def test_filters_are_checked_and_rebuilt(spark: Any) -> None:
    from pyspark.sql import functions as F

    from dpcert.backends.spark import SparkBackend

    sp = SparkBackend()
    df = data(800, seed=3)
    sdf = to_spark(spark, df)
    schema = sp.schema(sdf)
    sql = "k <> 1 AND (g IS NULL OR g = 'g3é')"
    preds = sp.check_predicates([sql, (F.col("k") >= 1) & F.col("u").isNotNull()], schema)
    got = sp.filter(sdf, preds).count()
    want = df.filter(pl.sql_expr(sql), (pl.col("k") >= 1) & pl.col("u").is_not_null()).height
    assert got == want
    for bad in ["rand() > 0.5", "k + 1 > 2", "g > 3", "k IN (SELECT 1)"]:
        with pytest.raises(UnsafeExpression):
            sp.check_predicates([bad], schema)
    for bad_col in [F.rand() > 0.5, F.col("k").cast("string") == "1", F.col("k") + 1 > 2]:
        with pytest.raises(UnsafeExpression):
            sp.check_predicates([bad_col], schema)


def test_bad_input_is_refused_before_any_job(spark: Any) -> None:
    from dpcert.backends.spark import SparkBackend

    sp = SparkBackend()
    sdf = to_spark(spark, data(50))
    with pytest.raises(InvalidParameter, match="unknown column 'nope'"):
        sp.keyed_bound(sdf, BoundSpec("nope", (), 1, 1, key=KEY))
    with pytest.raises(InvalidParameter, match="not a pyspark DataFrame"):
        sp.schema(pl.DataFrame({"a": [1]}))
    with pytest.raises(OutOfDomain, match="does not match column 'k'"):
        sp.group_stats(sdf, ["k"], [("x",)], [StatSpec("n", "count")])
    with pytest.raises(InvalidParameter, match="not distinct"):
        sp.group_stats(sdf, ["k"], [(1,), (1,)], [StatSpec("n", "count")])
    arr = spark.createDataFrame([(1, [1])], "u bigint, l array<bigint>")
    with pytest.raises(InvalidParameter, match="column 'l' has type other"):
        sp.keyed_bound(arr, BoundSpec("l", (), 1, 1, key=KEY))


def test_a_failing_job_is_a_typed_error_without_data(spark: Any) -> None:
    from pyspark.sql import functions as F

    from dpcert.backends.spark import SparkBackend

    secret = "s3cr3t-value"
    bad = spark.createDataFrame([(secret,)], "s string").select(
        F.col("s").cast("bigint").alias("x"))  # ANSI mode: the cast fails at run time
    with pytest.raises(ReleaseFailed) as e:
        SparkBackend().group_stats(bad, [], None, [StatSpec("s", "fixed_sum", "x", Fraction(0),
                                                             Fraction(1))])
    assert secret not in str(e.value)


def test_a_failed_spark_action_names_its_class_by_type_only() -> None:
    """``_run`` says which class a failure is from its type, never from its text: a message
    that quotes "No module named 'dpcert'" (data can) is not an import error."""
    from dpcert.backends.spark import _run

    def quoted() -> None:
        raise RuntimeError("Traceback ... ModuleNotFoundError: No module named 'dpcert' ... "
                           "row=s3cr3t")

    def missing() -> None:
        raise ModuleNotFoundError("No module named 'dpcert' row=s3cr3t")

    with pytest.raises(ReleaseFailed) as e:
        _run("grouped statistics", quoted)
    assert "s3cr3t" not in str(e.value) and e.value.__context__ is None
    assert e.value.failure_class == "data-independent cause unknown"
    with pytest.raises(ReleaseFailed, match="environment: import error") as e:
        _run("grouped statistics", missing)
    assert "s3cr3t" not in str(e.value)


@pytest.mark.filterwarnings("ignore")
def test_sql_grammar_without_spark() -> None:
    from dpcert.backends.spark_expr import parse_column_text, parse_sql

    assert parse_sql("NOT a IN (1, 2.5)") == ("not", ("in", ("col", "a"), ("lit", 1),
                                                       ("lit", 2.5)))
    assert parse_sql("s = 'it''s'") == ("=", ("col", "s"), ("lit", "it's"))
    assert parse_column_text("=(s, 'it\\'s')") == ("=", ("col", "s"), ("lit", "it's"))
    for bad in ["a > 1; DROP", "a BETWEEN 1 AND 2", "f(a) = 1", "a = (SELECT 1)", "a >"]:
        with pytest.raises(UnsafeExpression):
            parse_sql(bad)


def test_a_compiled_release_runs_on_spark(spark: Any) -> None:
    """The core Measurement of a plan runs unchanged on the Spark backend: same charged map as
    on Polars, the same keys, and (one fixed key) exact statistics the noise is added to."""
    from dpcert.backends.spark import SparkBackend
    from dpcert.core.measures import PureDP
    from dpcert.frame.compile import compile_plan
    from dpcert.frame.plan import Count, Quantile, QueryPlan, Sum

    df = data(1200, seed=4).filter(pl.col("u").is_not_null())
    sdf = to_spark(spark, df)
    keys = tuple((f"g{i}é",) for i in range(40))
    aggs = (Count(), Sum("v", (0.0, 100.0)), Quantile("v", (0.5,), (0.0, 100.0), 65))
    plan = QueryPlan(aggs, group_keys=("g",), public_keys=keys,
                     privacy_unit="u", max_groups=3, max_rows_per_group=2, filters=("k <> 2",))
    sp = SparkBackend()
    m_spark = compile_plan(plan, PureDP(1), schema=sp.schema(sdf), backend=sp, key=KEY)
    m_pl = compile_plan(plan, PureDP(1), schema=PL.schema(df), backend=PL, key=KEY)
    assert m_spark.map(1) == m_pl.map(1) == 1
    out_s, out_p = m_spark(sdf), m_pl(df)
    assert out_s["g"] == out_p["g"] == [k[0] for k in keys]
    q = "quantile_0.5_v"  # a median with its interval (three selections on the same counts)
    assert all(lo <= v <= hi for lo, v, hi in zip(out_s[f"{q}_ci_low"], out_s[q],
                                                  out_s[f"{q}_ci_high"], strict=True))
    # the noise differs per run; the exact counts underneath are bit-identical
    stats_s = sp.group_stats(sp.keyed_bound(sp.filter(sdf, sp.check_predicates(
        ["k <> 2"], sp.schema(sdf))), BoundSpec("u", ("g",), 3, 2, key=KEY,
                                                value_columns=("v",))), ["g"], keys,
        [StatSpec("n", "count")])
    stats_p = PL.group_stats(PL.keyed_bound(PL.filter(df, PL.check_predicates(
        ["k <> 2"], PL.schema(df))), BoundSpec("u", ("g",), 3, 2, key=KEY,
                                               value_columns=("v",))), ["g"], keys,
        [StatSpec("n", "count")])
    same(stats_s, stats_p)


def test_bounding_plan_has_one_shuffle_and_one_exact_sort(spark: Any) -> None:
    """The plan shape the speed depends on (issue 14), SQL bounding: one shuffle by the unit,
    the map-side hint sort and *one* exact sort read by all windows, even with a public-key
    filter on a group column on top (a window partitioned by the group would let that filter in
    between the windows and cost a second sort).  Arrow bounding: one shuffle, no sort, one
    Arrow map, and the filter stays above it."""
    from pyspark.sql import functions as F

    from dpcert.backends.spark import SparkBackend

    sdf = to_spark(spark, data(200, seed=2))
    for unit in ("u", "k"):  # a float unit (Spark normalises it as a window key) and a long one
        spec = BoundSpec(unit, ("g",), 2, 1, key=KEY, value_columns=("v",))

        def plan_of(how: str, spec: BoundSpec = spec) -> str:
            bound = SparkBackend(how).keyed_bound(sdf, spec)
            return str(bound.filter(F.col("g").isin(["g1é", "g2é"]))._jdf.queryExecution()
                       .executedPlan().toString())

        plan = plan_of("sql")
        assert plan.count("Exchange ") == 1, plan
        assert plan.count("Sort [") == 2, plan
        # printed top-down: the exact sort above the shuffle, the hint sort below it
        assert plan.index("Sort [") < plan.index("Exchange ") < plan.rindex("Sort ["), plan
        assert plan.count("Window [") == 2, plan
        plan = plan_of("arrow")
        assert plan.count("Exchange ") == 1 and "Sort [" not in plan, plan
        assert plan.count("MapInArrow") == 1, plan
        # printed top-down: the key filter above the Arrow map, the shuffle below it
        assert plan.index("Filter ") < plan.index("MapInArrow") < plan.index("Exchange "), plan


def test_bounding_mode_is_checked_and_read_from_the_session(spark: Any) -> None:
    from dpcert.backends.spark import BOUNDING_CONF, SparkBackend

    with pytest.raises(InvalidParameter, match="bounding='rows'"):
        SparkBackend("rows")
    sdf = to_spark(spark, data(50, seed=3))
    spec = BoundSpec("k", ("g",), 2, 1, key=KEY, value_columns=("v",))
    try:
        spark.conf.set(BOUNDING_CONF, "sql")
        assert "Window" in SparkBackend().keyed_bound(sdf, spec)._jdf.queryExecution() \
            .executedPlan().toString()
        spark.conf.set(BOUNDING_CONF, "fast")
        with pytest.raises(InvalidParameter, match=r"spark\.dpcert\.bounding='fast'"):
            SparkBackend().keyed_bound(sdf, spec)
        with pytest.raises(InvalidParameter):   # at the schema: before any charge
            SparkBackend().schema(sdf)
    finally:
        spark.conf.unset(BOUNDING_CONF)
    assert "MapInArrow" in SparkBackend().keyed_bound(sdf, spec)._jdf.queryExecution() \
        .executedPlan().toString()
