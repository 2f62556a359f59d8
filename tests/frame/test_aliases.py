"""The named types of `dpcert.frame.aliases` resolve to real types (their strings are only read by
type checkers, so a misspelt name would otherwise go unnoticed)."""

from __future__ import annotations

import datetime as dt
import typing
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from os import PathLike

import polars as pl
import pytest

from dpcert.frame import aliases


def _namespace() -> dict[str, object]:
    duckdb = pytest.importorskip("duckdb")
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    spark_sql = pytest.importorskip("pyspark.sql")
    from dpcert.backends.duckdb import DuckTable

    return {"pl": pl, "pd": pd, "pa": pa, "dt": dt, "Decimal": Decimal, "PathLike": PathLike,
            "Callable": Callable, "Mapping": Mapping, "Sequence": Sequence,
            "DuckDBPyConnection": duckdb.DuckDBPyConnection,
            "DuckDBPyRelation": duckdb.DuckDBPyRelation,
            "SparkDataFrame": spark_sql.DataFrame, "DuckTable": DuckTable}


def _resolved() -> dict[str, object]:
    """Every alias evaluated, aliases it names first."""
    ns = _namespace()
    todo = {name: getattr(aliases, name) for name in aliases.__all__}
    while todo:
        ready = {n: t for n, t in todo.items()
                 if not any(other in t for other in todo if other != n)}
        assert ready, f"aliases name each other in a cycle: {sorted(todo)}"
        for name, text in ready.items():
            ns[name] = eval(text, ns)  # the alias strings of our own module
            del todo[name]
    return ns


def test_every_alias_names_real_types() -> None:
    ns = _resolved()
    for name in aliases.__all__:
        args = typing.get_args(ns[name])
        assert ns[name] is not None and (args or isinstance(ns[name], type)
                                         or typing.get_origin(ns[name]) is not None), name


def test_frame_like_holds_every_accepted_input() -> None:
    ns = _resolved()
    members = set(typing.get_args(ns["FrameLike"]))
    for kind in ("pl", "pd"):
        assert ns[kind].DataFrame in members
    assert pl.LazyFrame in members and str in members and ns["SparkDataFrame"] in members
