"""One place decides what a budget's measure means for a release, and a release compiles once."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl
import pytest

import dpcert as dp
from dpcert.errors import InvalidParameter, MeasureMismatch
from dpcert.frame import compile as compile_mod
from dpcert.frame.measure_policy import measure_policy
from dpcert.samplers import InsecureSeededSource


@pytest.mark.parametrize(("budget", "norm", "mechanism", "approx"), [
    (dp.PureDP(1), "L1", "discrete_laplace", False),
    (dp.ApproxDP(1, Fraction(1, 10**6)), "L1", "discrete_laplace", True),
    (dp.ZCDP(Fraction(1, 2)), "L2", "discrete_gaussian", False)])
def test_each_measure_decides_noise_norm_and_selection(budget: dp.Measure, norm: str,
                                                       mechanism: str, approx: bool) -> None:
    p = measure_policy(budget)
    assert (p.norm, p.mechanism, p.approx) == (norm, mechanism, approx)
    assert p.split(private=False)[1] == (Fraction(1, 10**6) if approx else None)


def test_refusals_name_the_budget() -> None:
    with pytest.raises(InvalidParameter, match="cannot pay for private keys"):
        measure_policy(dp.PureDP(1)).split(private=True)
    with pytest.raises(InvalidParameter, match="delta > 0"):
        measure_policy(dp.ApproxDP(1, 0)).split(private=True)
    with pytest.raises(MeasureMismatch, match="supports PureDP, ApproxDP, ZCDP"):
        measure_policy(dp.RenyiDP())  # type: ignore[arg-type]


def test_quantile_epsilon_under_rho_is_the_zcdp_conversion_rounded_safe() -> None:
    share = Fraction(1, 8)
    eps = measure_policy(dp.ZCDP(1)).quantile_epsilon(share)
    assert eps * eps / 2 <= share and float(eps) == pytest.approx(0.5, rel=1e-9)
    assert measure_policy(dp.PureDP(1)).quantile_epsilon(share) == share


def test_a_release_compiles_its_plan_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"compile": 0, "stats": 0, "stats_in_compile": 0}
    compile_plan, plan_stats = compile_mod.compile_plan, compile_mod.plan_stats

    def counted_compile(*a: Any, **k: Any) -> Any:
        calls["compile"] += 1
        before = calls["stats"]
        out = compile_plan(*a, **k)
        calls["stats_in_compile"] += calls["stats"] - before
        return out

    def counted_stats(*a: Any, **k: Any) -> Any:
        calls["stats"] += 1
        return plan_stats(*a, **k)

    monkeypatch.setattr(compile_mod, "compile_plan", counted_compile)
    monkeypatch.setattr(compile_mod, "plan_stats", counted_stats)
    rng = np.random.default_rng(0)
    df = pl.DataFrame({"uid": np.arange(200), "g": rng.integers(0, 3, 200),
                       "x": rng.uniform(0, 10, 200)})
    sess = dp.Session(df, "uid", budget=dp.PureDP(2), _source=InsecureSeededSource(1))
    q = (sess.query().group_by("g", keys=[0, 1, 2]).agg(dp.count(), dp.mean("x", (0, 10)))
         .bound_contributions(max_groups=1, max_rows_per_group=1))
    q.release(dp.PureDP(1))
    # one compile per release, one statistics pass per compile (the certificate's component
    # table reads the plan's statistics once more, after the compile)
    assert calls["compile"] == 1 and calls["stats_in_compile"] == 1
