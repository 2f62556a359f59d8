"""SmartNoise SQL's documented queries (benchmarks/smartnoise_examples.py) run through
``Session.sql`` unchanged apart from the table name: each releases the columns and groups the
query names, at a charge equal to the budget given (no SmartNoise needed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import polars as pl
import pytest

import dpcert as dp
from dpcert.errors import UnsupportedSQL
from dpcert.samplers import InsecureSeededSource

ROOT = Path(__file__).resolve().parents[2]


def _examples() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "smartnoise_examples", ROOT / "benchmarks" / "smartnoise_examples.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SN = _examples()
TABLE = SN.pums_like(1000, seed=7)


def _session() -> dp.Session:
    return dp.Session(TABLE, budget=dp.ApproxDP(50, 1e-4), name=SN.TABLE,
                      _source=InsecureSeededSource(41))  # type: ignore[arg-type]


@pytest.mark.parametrize("query", [q for _, q in SN.EXAMPLES])
def test_documented_query_runs_with_only_the_table_renamed(query: str) -> None:
    ours = SN.for_dpcert(query)
    assert ours.replace(SN.TABLE, "") == query.replace("PUMS.PUMS", "").replace("PUMS_large", "")
    sess = _session()
    out = sess.sql(ours, bounds=SN.BOUNDS).release(dp.ApproxDP(1.0, 1e-5)).to_polars()
    values = [c for c in out.columns if not c.endswith(("_ci_low", "_ci_high"))]
    select = query.split(" FROM ")[0]
    n_outputs = select.count(",") + 1
    assert len(values) == n_outputs
    if "GROUP BY" in query:
        key = query.split("GROUP BY ")[1].split()[0]
        assert values[0] == key
        true_keys = set(TABLE[key].unique().to_list())
        assert set(out[key].to_list()) <= true_keys  # private keys: only groups in the data
        if "TOP 2" in query:
            assert out.height <= 2
            ages = out["age"].to_list()
            assert ages == sorted(ages, reverse=True)
        if "ORDER BY sex" in query:
            assert out["sex"].to_list() == sorted(out["sex"].to_list())
    else:
        assert out.height == 1
    assert sess.spent != sess.budget.zero()


def test_select_top_is_a_limit_on_released_rows() -> None:
    sess = _session()
    q = "SELECT TOP 3 educ, COUNT(*) AS n FROM PUMS GROUP BY educ ORDER BY n DESC"
    out = sess.sql(q).release(dp.ApproxDP(1.0, 1e-5)).to_polars()
    assert out.height == 3
    assert out["n"].to_list() == sorted(out["n"].to_list(), reverse=True)


@pytest.mark.parametrize("query", [
    "SELECT TOP (SELECT 1) educ, COUNT(*) FROM PUMS GROUP BY educ",
    "SELECT TOP 10 PERCENT educ, COUNT(*) FROM PUMS GROUP BY educ",
    "SELECT TOP 2 WITH TIES educ, COUNT(*) AS n FROM PUMS GROUP BY educ ORDER BY n",
])
def test_hostile_top_is_refused_before_any_charge(query: str) -> None:
    sess = _session()
    with pytest.raises(UnsupportedSQL):
        sess.sql(query).release(dp.ApproxDP(1.0, 1e-5))
    assert sess.spent == sess.budget.zero()


def test_table_is_pums_like() -> None:
    assert TABLE.height == 1000
    assert TABLE.schema == pl.Schema({c: pl.Int64 for c in
                                      ("age", "sex", "educ", "race", "income", "married")})
