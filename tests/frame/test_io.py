"""What a Session accepts (issue 18.3): Polars, pandas, Arrow, str/Path CSV and Parquet; CSV
read so that no cell can raise (issue 12.5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import dpcert as dp
from dpcert import errors
from dpcert.frame.io import read_csv_safely, to_lazy
from dpcert.samplers import InsecureSeededSource

DF = pl.DataFrame({"uid": [1, 1, 2, 3], "g": ["a", "b", "a", "b"], "x": [1.0, 2.0, 3.0, 4.0]})


def release(data: object) -> pl.DataFrame:
    sess = dp.Session(data, "uid", budget=dp.PureDP(1e4), _source=InsecureSeededSource(0))
    return (sess.query().group_by("g", keys=["a", "b"]).agg(dp.count(), dp.sum("x", (0, 5)))
            .bound_contributions(2, 2).release(dp.PureDP(1e3))).to_polars(tidy=False)


def test_pandas_arrow_polars_and_paths_of_either_type_give_the_same_release(
        tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    DF.write_csv(tmp_path / "p.csv")
    DF.write_parquet(tmp_path / "p.parquet")
    expect = release(DF)
    inputs = [DF.lazy(), DF.to_pandas(), pa.table(DF.to_dict(as_series=False)),
              str(tmp_path / "p.csv"), tmp_path / "p.csv", str(tmp_path / "p.parquet"),
              tmp_path / "p.parquet", pd.DataFrame(DF.to_dict(as_series=False))]
    for data in inputs:  # same keys and columns; values equal up to the (tiny) fresh noise
        got = release(data)
        assert got.columns == expect.columns and got["g"].equals(expect["g"]), type(data)
        for c in expect.columns[1:]:
            diff = (got[c] - expect[c]).abs().max()
            assert isinstance(diff, float) and diff < 2.0, (type(data), c)


def test_arrow_input_is_zero_copy() -> None:
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"x": np.arange(1000.0)})
    lf = to_lazy(table)
    buf = table.column("x").chunks[0].buffers()[1]
    out = lf.collect()["x"].to_arrow()
    assert out.buffers()[1].address == buf.address


def test_unsupported_inputs_name_what_is_accepted(tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidParameter, match="pandas DataFrame, a PyArrow Table"):
        dp.Session([1, 2, 3], budget=dp.PureDP(1.0))
    with pytest.raises(errors.InvalidParameter, match=r"\.csv or \.parquet"):
        dp.Session(tmp_path / "data.txt", budget=dp.PureDP(1.0))


def test_csv_cells_that_do_not_parse_become_null(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,b,c,d\n1,2.5,true,2024-01-02\nBOB,x,maybe,never\n3\n4,5,6,7,8\n")
    df = read_csv_safely(str(path), {"a": pl.Int64, "b": pl.Float64, "c": pl.Boolean,
                                     "d": pl.Date}).collect()
    assert df["a"].to_list() == [1, None, 3, 4]
    assert df["b"].to_list() == [2.5, None, None, 5.0]
    assert df["c"].to_list() == [True, None, None, None]
    assert df["d"].null_count() == 3
    with pytest.raises(errors.InvalidParameter, match="does not have"):
        read_csv_safely(str(path), {"zz": pl.Int64})
