"""The Arrow bounding function without Spark: on any split of the data into parts that hold
whole units, fed as small Arrow batches, it keeps exactly the rows the Polars backend keeps."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from dpcert.backends._spark_arrow import ArrowBound
from dpcert.backends.base import BoundSpec
from dpcert.backends.polars import PolarsBackend

KEY = bytes(range(7, 23))


def data(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = 4000
    u = rng.integers(0, 300, n).astype(float)
    u[:500] = 3.0  # a heavy unit
    u[rng.random(n) < 0.02] = -0.0
    g = rng.integers(0, 12, n)
    v = rng.choice([0.5, 1.0, 2.0, -0.0, 0.0], n)  # ties in values
    return pl.DataFrame({"u": u, "g": g, "v": v})


def run(fn: ArrowBound, df: pl.DataFrame, part: np.ndarray) -> pl.DataFrame:
    out = []
    for p in np.unique(part):
        batches = df.filter(pl.Series(part == p)).to_arrow().to_batches(max_chunksize=97)
        got = list(fn(iter(batches)))
        if got:
            out.append(pl.from_arrow(pa.Table.from_batches(got)))
    return pl.concat(out).sort(["u", "g", "v"])


@pytest.mark.parametrize(("G", "R"), [(1, 1), (3, 2)])
def test_parts_with_whole_units_keep_the_polars_rows(G: int, R: int) -> None:
    df = data(G)
    spec = BoundSpec("u", ("g",), G, R, key=KEY, value_columns=("v",))
    want = PolarsBackend().keyed_bound(df, spec).sort(["u", "g", "v"])
    canon = df.with_columns(pl.when(pl.col("u") == 0).then(0.0).otherwise(pl.col("u")).alias("u"))
    part = (canon["u"].to_numpy() * 7).astype(np.int64) % 5  # whole units (−0.0 is 0.0)
    got = run(ArrowBound(spec), canon, part)
    assert want.height < df.height
    assert got.equals(want)
    # a split that cuts units (rows dealt round-robin) keeps other rows: the function needs
    # whole units, which the Spark backend's shuffle by the unit provides
    cut = run(ArrowBound(spec), canon, np.arange(df.height) % 5)
    assert not cut.equals(want)


def test_empty_parts_yield_nothing() -> None:
    fn = ArrowBound(BoundSpec("u", ("g",), 1, 1, key=KEY))
    empty = pl.DataFrame({"u": [], "g": []}, schema={"u": pl.Int64, "g": pl.Int64}).to_arrow()
    assert list(fn(iter([]))) == []
    assert list(fn(iter(empty.to_batches()))) == []
