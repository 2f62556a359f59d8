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


def test_partial_statistics_of_whole_unit_parts_sum_to_the_polars_statistics() -> None:
    """ArrowBoundStats on parts holding whole units: the per-part partial statistics, summed per
    group, are the Polars backend's statistics of its bounded rows (float group keys with NaN,
    -0.0 and null included; hi/lo halves recombined exactly, negative values included)."""
    from fractions import Fraction

    from dpcert.backends._spark_arrow import ArrowBoundStats
    from dpcert.backends.base import StatSpec

    rng = np.random.default_rng(3)
    df = data(3)
    gk = rng.choice([0.0, -0.0, 1.5, np.nan, 2.0], df.height)
    df = df.with_columns(pl.Series("f", gk).fill_nan(None).cast(pl.Float64)
                         .set(pl.Series(np.arange(df.height) % 13 == 0), float("nan"))
                         .alias("f"), pl.col("v") - 1.5)  # negative sums too
    st = (StatSpec("n", "count"), StatSpec("units", "unit_count"),
          StatSpec("s", "fixed_sum", "v", Fraction(-1), Fraction(2), exponent=-40),
          StatSpec("q", "fixed_sum_sq", "v", Fraction(-1), Fraction(2), exponent=-3))
    canon = df.with_columns(pl.when(pl.col("u") == 0).then(0.0).otherwise(pl.col("u")).alias("u"))
    part = (canon["u"].to_numpy() * 7).astype(np.int64) % 5
    for by in (("f",), ("g", "f"), ()):
        spec = BoundSpec("u", by, 2, 2, key=KEY, value_columns=("v",))
        want = PolarsBackend().group_stats(PolarsBackend().keyed_bound(df, spec), list(by),
                                           None, list(st))
        fn = ArrowBoundStats(spec, by, tuple(enumerate(st)))
        parts = [pl.from_arrow(pa.Table.from_batches(got))
                 for p in np.unique(part)
                 if (got := list(fn(iter(canon.filter(pl.Series(part == p)).to_arrow()
                                          .to_batches(max_chunksize=97)))))]
        allp = pl.concat(parts)
        assert allp.height > len(want.keys)  # groups really are split across parts
        tot = (allp.group_by(list(by)).agg(pl.all().sum()) if by else allp.sum())
        got_by_key = {tuple(("nan",) if isinstance(x, float) and x != x else x
                            for x in r[:len(by)]): r[len(by):] for r in tot.iter_rows()}
        assert len(got_by_key) == len(want.keys)
        for j, k in enumerate(want.keys):
            kk = tuple(("nan",) if isinstance(x, float) and x != x else x for x in k)
            row = dict(zip(tot.columns[len(by):], got_by_key[kk], strict=True))
            assert row["#0"] == want.values["n"][j] == row["#n"]
            assert row["#1"] == want.values["units"][j]
            assert (row["#2h"] << 30) + row["#2l"] == want.values["s"][j]
            assert (row["#3h"] << 30) + row["#3l"] == want.values["q"][j]
        assert min(int(x) for x in want.values["s"]) < 0
