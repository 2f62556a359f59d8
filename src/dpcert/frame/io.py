"""Turning what a user hands to `Session` into a Polars LazyFrame.

Accepted: a Polars ``LazyFrame`` or ``DataFrame``; a pandas ``DataFrame`` and a PyArrow ``Table``
(converted with ``pl.from_pandas`` / ``pl.from_arrow``: zero-copy for Arrow-compatible numeric
columns); a ``str`` or `pathlib.Path` ending in ``.csv`` or ``.parquet`` (``.pq``).

**CSV files are read so that no cell can raise.**  Every column is read as text; the column types
are inferred from the first `INFER_ROWS` rows (or given with ``schema=``), and each cell is
then parsed *non-strictly*: a cell that does not parse as its column's type becomes **null**, and
nulls are handled like every other null (values: imputed to the aggregate's lower bound; keys: a
key of their own; units: one unit).  Ragged lines are truncated or padded with nulls and invalid
UTF-8 is replaced.  So a malformed cell on row 10⁶ cannot fail a release after its budget was
charged, nor print its contents.

Examples
--------
>>> import tempfile, os
>>> from dpcert.frame.io import to_lazy
>>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
>>> _ = open(path, "w").write("age,name\\n30,ann\\nforty,bob\\n")
>>> to_lazy(path, schema={"age": pl.Int64}).collect()["age"].to_list()
[30, None]
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    import pyarrow as pa

    from dpcert.frame.aliases import FrameLike, PandasFrame, PolarsType

__all__ = ["INFER_ROWS", "read_csv_safely", "to_lazy"]

#: Rows read to infer CSV column types when no schema is given.
INFER_ROWS = 10_000

_INTS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)


def _parse(name: str, index: int, dtype: PolarsType) -> pl.Expr:
    """Non-strict parse of the text column at position ``index`` to ``dtype``: unparsable
    cells become null.  (Read by position: ``pl.col`` reads a header such as ``*`` or
    ``^a.*$`` as a pattern.)"""
    c = pl.nth(index)
    if isinstance(dtype, _INTS) or dtype in _INTS or dtype in (pl.Float32, pl.Float64) \
            or isinstance(dtype, (pl.Float32, pl.Float64)):
        return c.str.strip_chars().cast(dtype, strict=False).alias(name)
    if dtype == pl.Boolean:
        low = c.str.strip_chars().str.to_lowercase()
        return (pl.when(low == "true").then(pl.lit(True))
                .when(low == "false").then(pl.lit(False))
                .otherwise(pl.lit(None, dtype=pl.Boolean)).alias(name))
    if dtype == pl.Date:
        return c.str.strip_chars().str.to_date("%Y-%m-%d", strict=False).alias(name)
    return c.alias(name)  # text (anything else is kept as text: it never fails)


def read_csv_safely(path: str, schema: Mapping[str, Any] | None = None) -> pl.LazyFrame:
    """A CSV file as a LazyFrame whose reading cannot raise on any cell (module docstring)."""
    opts: dict[str, Any] = dict(truncate_ragged_lines=True, encoding="utf8-lossy")
    try:
        text = pl.scan_csv(path, infer_schema=False, **opts)
        names = text.collect_schema().names()
        inferred = dict(pl.scan_csv(path, infer_schema_length=INFER_ROWS, **opts)
                        .collect_schema()) if schema is None else {}
    except Exception as e:
        raise InvalidParameter(f"data={path!r} cannot be read as CSV: "
                               f"{str(e).splitlines()[0]}") from None
    types = dict(inferred)
    if schema is not None:
        unknown = sorted(set(schema) - set(names))
        if unknown:
            raise InvalidParameter(f"schema names columns {unknown} that {path!r} does not "
                                   f"have; it has {names}")
        types.update(schema)
    return text.select(_parse(n, i, types.get(n, pl.String)) for i, n in enumerate(names))


def to_lazy(data: FrameLike, schema: Mapping[str, Any] | None = None) -> pl.LazyFrame:
    """A Polars LazyFrame of ``data`` (see the module docstring for what is accepted)."""
    if isinstance(data, pl.LazyFrame):
        return data
    if isinstance(data, pl.DataFrame):
        return data.lazy()
    if isinstance(data, (str, Path)):
        path = str(data)
        suffix = Path(path).suffix.lower()
        if suffix in (".parquet", ".pq"):
            return pl.scan_parquet(path)
        if suffix == ".csv":
            return read_csv_safely(path, schema)
        raise InvalidParameter(f"data={path!r}: expected a .csv or .parquet path")
    module = type(data).__module__.split(".")[0]
    try:
        if module == "pandas" and type(data).__name__ == "DataFrame":
            return pl.from_pandas(cast("PandasFrame", data)).lazy()  # by its module
        if module == "pyarrow" and type(data).__name__ in ("Table", "RecordBatch"):
            out = pl.from_arrow(cast("pa.Table | pa.RecordBatch", data))  # by its module
            assert isinstance(out, pl.DataFrame)
            return out.lazy()
    except Exception as e:
        raise InvalidParameter(f"data of type {type(data).__name__} could not be converted "
                               f"to Polars: {str(e).splitlines()[0]}") from None
    raise InvalidParameter(
        f"data of type {type(data).__module__}.{type(data).__name__} is not supported: pass a "
        "Polars LazyFrame/DataFrame, a pandas DataFrame, a PyArrow Table, or a .csv/.parquet "
        "path (str or pathlib.Path)")
