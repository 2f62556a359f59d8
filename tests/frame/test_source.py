"""A source's resolved location and schema fingerprint: the same file read the same way has the
same fingerprint; a schema change changes it; no row value enters it."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from dpcert.errors import InvalidParameter
from dpcert.frame.source import resolve_source, schema_fingerprint


def _csv(path: Path, ages: list[int], name: str = "age") -> Path:
    pl.DataFrame({"pid": range(len(ages)), name: ages}).write_csv(path)
    return path


def test_rows_do_not_change_the_fingerprint(tmp_path: Path) -> None:
    a = _csv(tmp_path / "a.csv", [30, 41])
    b = _csv(tmp_path / "b.csv", [1, 2, 3, 99])
    assert schema_fingerprint(a) == schema_fingerprint(b)


@pytest.mark.parametrize("change", ["rename", "retype", "declared"])
def test_a_schema_change_changes_it(tmp_path: Path, change: str) -> None:
    a = _csv(tmp_path / "a.csv", [30, 41])
    if change == "rename":
        other = schema_fingerprint(_csv(tmp_path / "b.csv", [30, 41], name="years"))
    elif change == "retype":
        pl.DataFrame({"pid": [0, 1], "age": ["x", "y"]}).write_csv(tmp_path / "b.csv")
        other = schema_fingerprint(tmp_path / "b.csv")
    else:
        other = schema_fingerprint(a, {"age": "float"})
    assert other != schema_fingerprint(a)


def test_parquet_and_locations(tmp_path: Path) -> None:
    pq = tmp_path / "t.parquet"
    pl.DataFrame({"pid": [1], "age": [3]}).write_parquet(pq)
    assert schema_fingerprint(pq).startswith("sha256:")
    link = tmp_path / "link.parquet"
    link.symlink_to(pq)
    assert resolve_source(link) == os.path.realpath(pq)
    with pytest.raises(InvalidParameter, match="no such file"):
        resolve_source(tmp_path / "missing.csv")
    (tmp_path / "t.txt").write_text("x")
    with pytest.raises(InvalidParameter, match=r"expected a \.csv or \.parquet"):
        resolve_source(tmp_path / "t.txt")
    with pytest.raises(InvalidParameter, match="each type must be one of"):
        schema_fingerprint(_csv(tmp_path / "c.csv", [1]), {"age": "integer"})
