"""The totality property (``tests/frame/test_totality.py``) on the Spark backend, smaller: a
release on an admitted Spark DataFrame cannot fail after its charge, and one added unit never
turns success into failure."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings

from _frames import SPARK_TYPES, Case, cases, check_total

pytestmark = pytest.mark.spark

_DDL = {pl.Int64: "bigint", pl.Int32: "int", pl.Float64: "double", pl.String: "string",
        pl.Boolean: "boolean", pl.Date: "date"}


def to_spark(spark: Any, df: pl.DataFrame) -> Any:
    ddl = ", ".join("`" + c.replace("`", "``") + "` " + _DDL[t] for c, t in df.schema.items())
    return spark.createDataFrame(df.rows(), ddl)


@settings(max_examples=4, deadline=None, derandomize=True, phases=[Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(case=cases(exact_only=True, only=SPARK_TYPES, filters=False))
def test_spark_release_cannot_fail_after_the_charge(case: Case, spark: Any) -> None:
    check_total(case, lambda df: to_spark(spark, df))
