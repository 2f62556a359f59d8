"""Engine backends: the data work of a release (schema, filter, keyed bounding, grouped integer
statistics) behind one protocol, `dpcert.backends.base.FrameOps`."""

from dpcert.backends.base import BoundSpec, FrameOps, GroupedStats, StatKind, StatSpec

__all__ = ["BoundSpec", "FrameOps", "GroupedStats", "StatKind", "StatSpec", "backend_for"]


def backend_for(data: object) -> FrameOps:
    """The backend that runs on ``data``: Spark for a pyspark DataFrame (classic or Spark
    Connect), DuckDB for a DuckDB relation or a ``(connection, table)`` pair
    (`dpcert.backends.duckdb.to_duck`), else Polars (LazyFrame, DataFrame, or a
    .csv/.parquet path).

    >>> import polars as pl
    >>> backend_for(pl.DataFrame({"a": [1]})).name
    'polars'
    """
    mod = type(data).__module__
    if mod.startswith("pyspark.sql") and type(data).__name__ == "DataFrame":
        from dpcert.backends.spark import SparkBackend

        return SparkBackend()
    if mod.lstrip("_").startswith("duckdb") or type(data).__name__ in ("tuple", "DuckTable"):
        from dpcert.backends.duckdb import DuckDBBackend, is_duckdb

        if is_duckdb(data):
            return DuckDBBackend()
    from dpcert.backends.polars import PolarsBackend

    return PolarsBackend()
