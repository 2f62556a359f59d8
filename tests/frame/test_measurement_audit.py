"""``q.measurement(budget)`` is a core Measurement on (FrameDomain, UnitDistance) that the
black-box auditor can test, with neighbours made by adding or removing one privacy unit."""

from __future__ import annotations

from typing import Any

import pytest

pl = pytest.importorskip("polars")
pytest.importorskip("dpcert.backends.polars")

import dpcert as dp  # noqa: E402
from dpcert.audit import audit  # noqa: E402
from dpcert.core.frames import FrameDomain, UnitDistance  # noqa: E402
from dpcert.transformations.frame import bound as bound_mod  # noqa: E402

DF = pl.DataFrame({"pid": [1, 1, 2, 3, 4, 5], "g": ["a", "b", "a", "b", "a", "a"],
                   "x": [1.0, 2.0, 3.0, 4.0, 5.0, 0.5]})


def query(G: int = 1, R: int = 1, keys: Any = ("a", "b")) -> Any:
    sess = dp.Session(DF, "pid", budget=dp.ApproxDP(10, 1e-5))
    return (sess.query().group_by("g", keys=list(keys) if keys != "private" else keys)
            .agg(dp.count(), dp.sum("x", (0, 5))).bound_contributions(G, R))


def test_measurement_is_a_core_measurement_that_charges_nothing() -> None:
    q = query()
    m = q.measurement(dp.PureDP(1))
    assert isinstance(m, dp.Measurement)
    assert isinstance(m.input_domain, FrameDomain) and m.input_metric == UnitDistance("pid")
    assert m.map(1) == 1 and q.session.spent == (0, 0)
    out = m(DF)
    assert out["g"] == ["a", "b"] and set(out) >= {"count", "sum_x", "sum_x_ci_high"}


def test_audit_of_a_compiled_query_is_consistent_with_its_map() -> None:
    r = audit(query().measurement(dp.PureDP(1)), samples=20_000)
    assert not r.violated and r.epsilon_lower > 0.2


def test_audit_catches_a_bounding_map_that_ignores_G_and_R(monkeypatch: Any) -> None:
    """Wrong variant: bounding claims (d, d, d) while units keep 3 groups × 3 rows; the audit
    of the resulting (under-noised) release exceeds its claim."""
    real = bound_mod.make_bound_contributions

    def lying(*args: Any, **kwargs: Any) -> Any:
        t = real(*args, **kwargs)
        return dp.Transformation(t.input_domain, t.input_metric, t.output_domain,
                                 t.output_metric, t.function, lambda d: (d, d, d),
                                 name=t.name, params=t.params)

    monkeypatch.setattr("dpcert.frame.compile.make_bound_contributions", lying)
    r = audit(query(3, 3).measurement(dp.PureDP(1)), samples=20_000)
    assert r.violated


def test_private_keys_audit() -> None:
    m = query(keys="private").measurement(dp.ApproxDP(1, 1e-3))
    r = audit(m, samples=20_000)
    assert not r.violated


def test_quantile_query_audit() -> None:
    sess = dp.Session(DF, "pid", budget=dp.PureDP(10))
    q = (sess.query().group_by("g", keys=["a", "b"])
         .agg(dp.quantile("x", 0.5, bounds=(0, 5), candidates=11)).bound_contributions(1, 1))
    m = q.measurement(dp.PureDP(1))
    assert m.map(1) == 1
    r = audit(m, samples=20_000)
    assert not r.violated
