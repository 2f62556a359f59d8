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


def test_a_session_on_a_bound_dataset_reads_the_bound_source(tmp_path: Path) -> None:
    import dpcert as dp
    from dpcert.accounting.binding import Binding, create_bound
    from dpcert.accounting.ledger import Ledger
    from dpcert.errors import BindingMismatch

    bound = _csv(tmp_path / "bound.csv", [30, 41, 52])
    other = _csv(tmp_path / "other.csv", [1, 2, 3])
    led = str(tmp_path / "l.sqlite")
    create_bound(Ledger(led), "p", dp.PureDP(1),
                 Binding(resolve_source(bound), schema_fingerprint(bound), "pure", "pid"))
    with pytest.raises(BindingMismatch, match="is not the source bound"):
        dp.Session(str(other), "pid", budget=dp.PureDP(1), ledger=led, dataset="p")
    with pytest.raises(BindingMismatch, match="protects privacy_unit='pid'"):
        dp.Session(str(bound), None, budget=dp.PureDP(1), ledger=led, dataset="p")
    with pytest.raises(BindingMismatch, match="schema fingerprint"):  # read another way
        dp.Session(str(bound), "pid", budget=dp.PureDP(1), ledger=led, dataset="p",
                   schema={"age": pl.Float64})
    assert Ledger(led).history("p") == []
    sess = dp.Session(bound, "pid", budget=dp.PureDP(1), ledger=led, dataset="p")
    sess.query().agg(dp.count()).bound_contributions(1, 1).release(dp.PureDP(0.5))
    assert len(Ledger(led).history("p")) == 1
    from dpcert.frame.ledger import BudgetMismatchWarning

    with pytest.warns(BudgetMismatchWarning):  # a frame has no location: the curator vouches
        dp.Session(pl.read_csv(other), "pid", budget=dp.PureDP(1), ledger=led, dataset="p")
