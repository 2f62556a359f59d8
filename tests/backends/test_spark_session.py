"""A ``dp.Session`` over a pyspark DataFrame runs the compiled release in Spark (issue 14)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

import dpcert as dp
from dpcert import errors
from dpcert.samplers import InsecureSeededSource

pytestmark = pytest.mark.spark


def test_session_over_a_spark_dataframe_releases_a_grouped_count(spark: Any) -> None:
    rows = [(u, "a" if u % 3 else "b", float(u % 7)) for u in range(60)]
    rows += [(0, "b", 1.0)] * 5  # unit 0 has extra rows in its group: bounded to 1
    df = spark.createDataFrame(rows, "uid long, g string, x double")
    sess = dp.Session(df, "uid", budget=dp.PureDP(2000), _source=InsecureSeededSource(1))
    q = (sess.query().group_by("g", keys=["a", "b", "c"]).agg(dp.count())
         .bound_contributions(1, 1))
    budget = dp.PureDP(1000)
    res = q.release(budget)
    out = res.to_polars()
    assert out.columns == ["g", "count", "count_ci_low", "count_ci_high"]
    got = dict(zip(out["g"].to_list(), out["count"].to_list(), strict=True))
    # true counts 40, 20, 0; noise scale 1/1000 (discrete): off by 1 w.p. < 1e-400
    assert got == {"a": 40.0, "b": 20.0, "c": 0.0}
    assert sess.spent == q.measurement(budget).map(1) == Fraction(1000)
    assert res.certificate["backend"] == "spark"
    with pytest.raises(errors.InvalidParameter, match="schema"):
        dp.Session(df, "uid", budget=dp.PureDP(1), schema={"uid": "int"})
    with pytest.raises(errors.InvalidParameter, match="not a column"):
        dp.Session(df, "nope", budget=dp.PureDP(1))


def test_a_release_runs_through_spark_connect(spark_connect: Any) -> None:
    """The same release on a Spark Connect DataFrame: the Spark backend, the same exact
    statistics as Polars for a fixed key, and a session release with its certificate."""
    import polars as pl

    from dpcert.backends import backend_for
    from dpcert.backends.base import BoundSpec, StatSpec
    from dpcert.backends.polars import PolarsBackend

    rows = [(u % 23, "ab"[u % 23 % 2], float(u % 11)) for u in range(300)]  # one group a unit
    df = spark_connect.createDataFrame(rows, "uid long, g string, x double")
    assert type(df).__module__.startswith("pyspark.sql.connect")
    sp = backend_for(df)
    assert sp.name == "spark"
    bound = BoundSpec("uid", ("g",), 1, 3, key=bytes(16), value_columns=("x",))
    st = [StatSpec("n", "count"),
          StatSpec("s", "fixed_sum", "x", Fraction(0), Fraction(10), exponent=-2)]
    pdf = pl.DataFrame(rows, schema={"uid": pl.Int64, "g": pl.String, "x": pl.Float64},
                       orient="row")
    pb = PolarsBackend()
    a = sp.group_stats(sp.keyed_bound(df, bound), ["g"], None, st)
    b = pb.group_stats(pb.keyed_bound(pdf, bound), ["g"], None, st)
    assert a.keys == b.keys
    assert {k: v.tolist() for k, v in a.values.items()} == {
        k: v.tolist() for k, v in b.values.items()}
    sess = dp.Session(df, "uid", budget=dp.PureDP(2000), _source=InsecureSeededSource(2))
    res = (sess.query().group_by("g", keys=["a", "b"]).agg(dp.count())
           .bound_contributions(1, 1).release(dp.PureDP(1000)))
    assert res.certificate["backend"] == "spark"
    got = dict(zip(res.to_polars()["g"].to_list(), res.to_polars()["count"].to_list(),
                   strict=True))
    assert got == {"a": 12.0, "b": 11.0}  # units by parity; noise scale 1/1000 (discrete)
