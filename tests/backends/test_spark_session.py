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
