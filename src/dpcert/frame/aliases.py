"""Named types of the frame API: the frames a user hands to `Session`, the engine frames a
backend runs on, public key values, predicates, value bounds.

The optional engines (pandas, PyArrow, DuckDB, Spark) are imported for type checking only, so
naming them here loads none of them.

Examples
--------
>>> import polars as pl
>>> from dpcert.frame.aliases import FrameLike
>>> data: FrameLike = pl.DataFrame({"a": [1]})
>>> keys: Keys = ["n", ("s",)]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from typing import TYPE_CHECKING, TypeAlias

import polars as pl

from dpcert.backends.base import KeyValue as KeyValue  # one definition, re-exported here

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]  # pandas ships no type information
    import pyarrow as pa
    from duckdb import DuckDBPyConnection, DuckDBPyRelation
    from pyspark.sql import DataFrame as SparkDataFrame

    from dpcert.backends.duckdb import DuckTable

__all__ = ["Bounds", "EngineFrame", "FrameLike", "KeyList", "KeyValue", "Keys", "Neighbours",
           "PandasFrame", "PolarsType", "Predicate", "PublicKey"]

#: What `Session` accepts as data: a Polars frame, a pandas DataFrame, a PyArrow Table or
#: RecordBatch, a ``.csv``/``.parquet`` path, a DuckDB relation or ``(connection, table)``
#: pair, or a pyspark DataFrame (`dpcert.frame.io`, `dpcert.backends`).
FrameLike: TypeAlias = (
    "pl.LazyFrame | pl.DataFrame | pd.DataFrame | pa.Table | pa.RecordBatch | str "
    "| PathLike[str] | DuckDBPyRelation | DuckTable "
    "| tuple[DuckDBPyConnection, str | DuckDBPyRelation] | SparkDataFrame")
#: A pandas DataFrame (pandas is optional: `Release.to_pandas` imports it when called).
PandasFrame: TypeAlias = "pd.DataFrame"
#: A session's data in its engine: a Polars LazyFrame, a DuckDB table, or a Spark DataFrame.
EngineFrame: TypeAlias = "pl.LazyFrame | DuckTable | SparkDataFrame"
#: A Polars data type, as an instance (``pl.Int64()``) or a class (``pl.Int64``).
PolarsType: TypeAlias = "pl.DataType | type[pl.DataType]"
#: A public key: one value per group-by column.
PublicKey: TypeAlias = "tuple[KeyValue, ...]"
#: A list of public keys: values (one column), or key tuples or lists (one value per column).
KeyList: TypeAlias = "Sequence[KeyValue | Sequence[KeyValue]]"
#: The public keys a user gives `Query.group_by`: a `KeyList`, a mapping column → values
#: (their cross product), or ``"private"``.
Keys: TypeAlias = "KeyList | Mapping[str, Sequence[KeyValue]] | str"
#: A row filter: a Polars expression or a SQL predicate string.
Predicate: TypeAlias = "pl.Expr | str"
#: Auditing neighbours: ``d_in`` ↦ pairs of tables that far apart
#: (`dpcert.frame.unit_neighbours`).
Neighbours: TypeAlias = "Callable[[int], list[tuple[pl.DataFrame, pl.DataFrame]]]"
#: ``(lower, upper)`` bounds of a column's values.
Bounds: TypeAlias = "tuple[float, float]"

