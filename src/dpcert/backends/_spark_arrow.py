"""The Spark backend's Arrow bounding: the Polars backend's keyed rule on each shuffle partition.

:meth:`dpcert.backends.spark.SparkBackend.keyed_bound` (``bounding="arrow"``, the default)
shuffles the canonical ``(unit, group, value)`` columns by the unit, so that every row of a unit
is in one partition, then runs :class:`ArrowBound` on each partition with
``DataFrame.mapInArrow``: the partition arrives as Arrow record batches (columnar, never a Python
object per row), :func:`dpcert.backends.polars.keep_mask` computes the keep-mask with NumPy (the
very function the Polars backend runs, so both backends keep the same rows by construction), and
the kept rows go back to Spark as Arrow batches, unchanged.  Grouped statistics are then Spark
aggregations again.  The executors need dpcert with its ``frame`` extra (Polars) and pyarrow.

A partition is held in the Python worker's memory while it is bounded (about 60 bytes a row);
Spark's shuffle partitions bound it (``spark.sql.shuffle.partitions``; with adaptive execution,
``spark.sql.adaptive.advisoryPartitionSizeInBytes``).

Examples
--------
>>> import polars as pl
>>> from dpcert.backends.base import BoundSpec, StatSpec
>>> f = ArrowBound(BoundSpec("u", ("g",), 1, 1, key=bytes(16)))
>>> t = pl.DataFrame({"u": [1, 1, 2], "g": [5, 6, 5]}).to_arrow()
>>> sum(b.num_rows for b in f(iter(t.to_batches())))  # one group, one row per unit
2
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dpcert.backends.base import BoundSpec, StatSpec

__all__ = ["ArrowBound", "ArrowBoundStats", "FUSED_KINDS"]

#: Rows per Arrow batch sent back to Spark.
_OUT_ROWS = 1 << 16
#: Low bits of the two-long split of fixed-point sums (any split is exact; see ArrowBoundStats).
_SPLIT = 30


@dataclass(frozen=True)
class ArrowBound:
    """``mapInArrow`` function: the kept rows of one partition that holds whole units.

    Pickled by reference to this module (an executor imports dpcert); it carries the bounding
    spec, release key included, as the SQL plan of ``bounding="sql"`` carries it as literals.
    """

    spec: BoundSpec

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        kept = _kept(self.spec, batches)
        if kept is not None:
            table, mask = kept
            yield from table.filter(pa.array(mask)).to_batches(max_chunksize=_OUT_ROWS)


#: Statistics that :class:`ArrowBoundStats` computes (anything else: the generic plan).
FUSED_KINDS = ("count", "unit_count", "fixed_sum", "fixed_sum_sq")


@dataclass(frozen=True)
class ArrowBoundStats:
    """``mapInArrow`` function: :class:`ArrowBound`'s kept rows, then their partial statistics
    per group of this partition (one row per group: the group columns, ``#n`` and per statistic
    ``#i``, or ``#ih`` and ``#il`` for fixed-point sums), which Spark then sums per group.

    Same rows as :class:`ArrowBound` (the same function keeps them), same statistics as the
    generic Spark plan: the fixed-point value is :func:`dpcert.backends._polars_stats.
    fixed_point_expr` (bit-identical to the Spark expression, tested), summed exactly as two
    longs, ``x // 2**30`` and ``x - 2**30 * (x // 2**30)``, whose sums recombine to the exact
    sum whatever split is used.  A partition's partial sums cannot overflow (fewer than 2**33
    rows); Spark's ``try_sum`` of the partials flags any overflow across partitions.
    ``by`` columns are the canonical keys (floats as doubles with ``-0.0 → 0.0``); ``stats``
    holds ``(index, spec)`` of the statistics (``unit_count`` only without a column).
    """

    spec: BoundSpec
    by: tuple[str, ...]
    stats: tuple[tuple[int, StatSpec], ...]

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import polars as pl
        import pyarrow as pa

        from dpcert.backends._polars_stats import fixed_point_expr
        from dpcert.backends._polars_types import _canonical

        kept = _kept(self.spec, batches)
        if kept is None:
            return
        table, mask = kept
        if table.num_rows >= 1 << 32:  # the exactness argument of the partial sums
            raise OverflowError("a partition of 2**32 rows or more: use more shuffle partitions")
        df = pl.from_arrow(table.filter(pa.array(mask)))
        assert isinstance(df, pl.DataFrame)
        by = list(self.by)
        floats = {c for c in by if df.schema[c].is_float()}
        if floats:  # as Spark's canonical key: a double with -0.0 -> 0.0 (NaN is one group)
            df = (df.with_columns([pl.col(c).cast(pl.Float64) for c in floats])
                  .with_columns([_canonical(c, pl.Float64) for c in floats]))
        aggs: list[pl.Expr] = [pl.len().cast(pl.Int64).alias("#n")]
        for i, s in self.stats:
            if s.kind in ("count", "unit_count"):
                aggs.append(pl.len().cast(pl.Int64).alias(f"#{i}"))
            else:
                x = fixed_point_expr(s)
                hi = x // (1 << _SPLIT)
                aggs += [hi.sum().alias(f"#{i}h"), (x - hi * (1 << _SPLIT)).sum().alias(f"#{i}l")]
        out = (df.group_by(by).agg(aggs) if by else df.select(aggs)).to_arrow()
        target = pa.schema([pa.field(c, pa.float64() if c in floats
                                     else table.schema.field(c).type) for c in by]
                           + [pa.field(n, pa.int64()) for n in out.column_names[len(by):]])
        yield from out.select(target.names).cast(target).to_batches(max_chunksize=_OUT_ROWS)


def _kept(spec: BoundSpec, batches: Iterator[Any]) -> tuple[Any, Any] | None:
    """A partition's rows as one Arrow table and the keep-mask of
    :func:`dpcert.backends.polars.keep_mask` (``None`` for an empty partition)."""
    import polars as pl
    import pyarrow as pa

    from dpcert.backends._polars_types import _canonical
    from dpcert.backends.polars import keep_mask

    chunks = [b for b in batches if b.num_rows]
    if not chunks:
        return None
    table = pa.Table.from_batches(chunks)
    # one chunk: keep_mask's gathers on a frame of many 10^4-row chunks are several times slower
    df = pl.from_arrow(table).rechunk()
    assert isinstance(df, pl.DataFrame)
    keys = {c for c in [spec.unit, *spec.by] if c}
    df = df.select([_canonical(c, df.schema[c]) if c in keys else pl.col(c)
                    for c in df.columns])
    return table, keep_mask(df, spec)
