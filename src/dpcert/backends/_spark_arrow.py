"""The Spark backend's Arrow bounding: the Polars backend's keyed rule on each shuffle partition.

`dpcert.backends.spark.SparkBackend.keyed_bound` (``bounding="arrow"``, the default)
shuffles the canonical ``(unit, group, value)`` columns by the unit, so that every row of a unit
is in one partition, then runs `ArrowBound` on each partition with
``DataFrame.mapInArrow``: the partition arrives as Arrow record batches (columnar, never a Python
object per row), `dpcert.backends.polars.keep_mask` computes the keep-mask with NumPy (the
very function the Polars backend runs, so both backends keep the same rows by construction), and
the kept rows go back to Spark as Arrow batches, unchanged.  Grouped statistics are then Spark
aggregations again.  The executors need dpcert with its ``frame`` extra (Polars) and pyarrow.

A partition is held in the Python worker's memory while it is bounded (about 60 bytes a row);
Spark's shuffle partitions bound it (``spark.sql.shuffle.partitions``; with adaptive execution,
``spark.sql.adaptive.advisoryPartitionSizeInBytes``).

Examples
--------
>>> import polars as pl
>>> from dpcert.backends.base import BoundSpec
>>> f = ArrowBound(BoundSpec("u", ("g",), 1, 1, key=bytes(16)))
>>> t = pl.DataFrame({"u": [1, 1, 2], "g": [5, 6, 5]}).to_arrow()
>>> sum(b.num_rows for b in f(iter(t.to_batches())))  # one group, one row per unit
2
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dpcert.backends.base import BoundSpec

__all__ = ["ArrowBound"]

#: Rows per Arrow batch sent back to Spark.
_OUT_ROWS = 1 << 16


@dataclass(frozen=True)
class ArrowBound:
    """``mapInArrow`` function: the kept rows of one partition that holds whole units.

    Pickled by reference to this module (an executor imports dpcert); it carries the bounding
    spec, release key included, as the SQL plan of ``bounding="sql"`` carries it as literals.
    """

    spec: BoundSpec

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import polars as pl
        import pyarrow as pa

        from dpcert.backends._polars_types import _canonical
        from dpcert.backends.polars import keep_mask

        chunks = [b for b in batches if b.num_rows]
        if not chunks:
            return
        table = pa.Table.from_batches(chunks)
        df = pl.from_arrow(table).rechunk()
        assert isinstance(df, pl.DataFrame)
        keys = {c for c in [self.spec.unit, *self.spec.by] if c}
        df = df.select([_canonical(c, df.schema[c]) if c in keys else pl.col(c)
                        for c in df.columns])
        mask = keep_mask(df, self.spec)
        yield from table.filter(pa.array(mask)).to_batches(max_chunksize=_OUT_ROWS)
