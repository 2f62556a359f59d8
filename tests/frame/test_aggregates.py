"""User-facing aggregate constructors (``dp.median``)."""

from __future__ import annotations

import polars as pl

import dpcert as dp
from dpcert.frame.plan import Quantile


def test_median_is_the_half_quantile_named_median() -> None:
    m = dp.median("x", bounds=(0, 10))
    assert isinstance(m, Quantile) and m.qs == (0.5,) and m.names() == ["median_x"]
    assert dp.median("x", (0, 10)).alias("mid").names() == ["mid"]
    df = pl.DataFrame({"x": [float(i % 10) for i in range(200)]})
    out = (dp.Session(df, budget=dp.PureDP(1.0)).query().agg(dp.median("x", (0, 10)))
           .release(dp.PureDP(1.0)).to_polars())
    assert "median_x" in out.columns and "median_x_rank_error" in out.columns
