"""Planning answers: ``Query.accuracy`` gives an interval for every output (issue 44 item 2)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import polars as pl

import dpcert as dp
from dpcert.frame.planning import smallest_kept
from dpcert.mechanisms.threshold import laplace_tail


def _query(keys: object = ("a", "b")) -> object:
    rng = np.random.default_rng(0)
    df = pl.DataFrame({"g": rng.choice(["a", "b"], 2000).tolist(),
                       "x": rng.uniform(0, 100, 2000)})
    sess = dp.Session(df, budget=dp.ApproxDP(1.0, 1e-6))
    return (sess.query().group_by("g", keys=list(keys) if keys != "private" else keys)
            .agg(dp.count(), dp.mean("x", (0, 100)), dp.variance("x", (0, 100)),
                 dp.median("x", (0, 100))))


def test_every_output_gets_an_interval_that_shrinks_with_n() -> None:
    q = _query()
    small, big = q.accuracy(0.05, n=100), q.accuracy(0.05, n=10_000)  # type: ignore[attr-defined]
    assert small["output"].to_list() == ["count", "mean_x", "variance_x", "median_x"]
    assert small["half_width"][0] == big["half_width"][0]  # a count's is data-independent
    for i in (1, 2):  # mean, variance: finite, and ~1/n
        assert 0 < big["half_width"][i] < small["half_width"][i] / 50
    assert small["rank_error"][3] == big["rank_error"][3] > 0
    assert 0 < big["half_width"][3] < small["half_width"][3] <= 100  # a value half-width
    assert "endpoints at ranks q·n ∓" in small["interval"][3] and \
        "grid step 0.09766" in small["interval"][3]
    # the mean's and the median's half-widths are those a release gives a group of that size
    # (the data are uniform on the bounds, as the median's figure assumes)
    rel = q.release(dp.ApproxDP(1.0, 1e-6)).to_polars(tidy=False)  # type: ignore[attr-defined]
    at_1000 = q.accuracy(0.05, n=1000)["half_width"]  # type: ignore[attr-defined]
    for i, name in ((1, "mean_x"), (3, "median_x")):
        width = ((rel[f"{name}_ci_high"] - rel[f"{name}_ci_low"]) / 2).to_list()
        assert all(0.5 * at_1000[i] < w < 2 * at_1000[i] for w in width)  # ~1000 rows each


def test_private_keys_state_the_threshold_and_the_smallest_kept_count() -> None:
    acc = _query("private").accuracy(0.05)  # type: ignore[attr-defined]
    row = acc.filter(pl.col("kind") == "select")
    assert row.height == 1 and "τ = " in row["interval"][0]
    tau = int(row["interval"][0].split("τ = ")[1].split(";")[0])
    assert row["n"][0] > tau


def test_smallest_kept_is_the_least_count_with_the_stated_probability() -> None:
    for scale, a in ((2, Fraction(1, 20)), (Fraction(7, 3), Fraction(1, 100)), (10, 0.05)):
        k = smallest_kept(scale, 50, a)
        t = k - 50 + 1  # kept iff Z >= 50 - k, i.e. missed iff Z >= t (symmetric noise)
        assert laplace_tail(scale, t) <= Fraction(a) < laplace_tail(scale, t - 1)
