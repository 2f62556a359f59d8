"""Privacy measures: values, comparison and composition."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcert as dp
from dpcert import errors


def test_budget_values_are_exact() -> None:
    assert dp.PureDP(0.2).value == Fraction(1, 5)
    assert dp.ApproxDP(1.0, 1e-6).value == (Fraction(1), Fraction(1, 10**6))
    assert dp.ZCDP(0.5).value == Fraction(1, 2)
    assert dp.PureDP().value is None
    assert dp.PureDP(1.0) == dp.PureDP(1)
    assert dp.PureDP(1.0).same_kind(dp.PureDP()) and not dp.PureDP().same_kind(dp.ZCDP())


@pytest.mark.parametrize(
    ("ctor", "args", "match"),
    [(dp.PureDP, (0,), "epsilon=0"), (dp.PureDP, (-1.0,), "epsilon=-1.0"),
     (dp.ApproxDP, (1.0, 1.0), "delta=1.0"), (dp.ApproxDP, (1.0, -1e-9), "delta"),
     (dp.ApproxDP, (1.0,), "both"), (dp.ZCDP, (float("nan"),), "rho=nan"),
     (dp.PureDP, ("1",), "epsilon='1'")],
)
def test_bad_budgets(ctor: type, args: tuple[object, ...], match: str) -> None:
    with pytest.raises(errors.InvalidParameter, match=match):
        ctor(*args)


def test_compare_and_compose() -> None:
    pure = dp.PureDP()
    assert pure.compare(Fraction(1, 2), 0.5) and not pure.compare(0.6, 0.5)
    assert pure.compose([0.2] * 5) == 1
    approx = dp.ApproxDP()
    assert approx.compare((0.5, 1e-7), (0.5, 1e-6)) and not approx.compare((0.5, 1e-5), (1, 1e-6))
    assert approx.compose([(0.5, 1e-6), (0.5, 1e-6)]) == (1, Fraction(2, 10**6))
    with pytest.raises(errors.InvalidParameter):
        approx.compare(0.5, (0.5, 0))
    z = dp.ZCDP()
    assert z.compose([0.1, 0.2]) == Fraction(3, 10)
    assert z.describe(Fraction(1, 3)).startswith("ρ = 0.333")
    with pytest.raises(errors.MeasureMismatch):
        pure.check_same_kind(z)


def test_renyi_curves() -> None:
    r = dp.RenyiDP()
    a = dp.RenyiCurve.constant_rho(Fraction(1, 10))
    b = dp.RenyiCurve.constant_rho(Fraction(1, 5))
    assert r.compare(a, b) and not r.compare(b, a)
    both = r.compose([a, a])
    assert all(both(o) == b(o) for o in r.orders)
    with pytest.raises(errors.InvalidParameter, match="alpha"):
        a(1)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.fractions(0, 5), st.fractions(0, Fraction(1, 100))), min_size=1,
                max_size=6))
def test_approx_composition_adds_both_coordinates_property(parts: list[tuple[Any, Any]]) -> None:
    """Basic composition (Dwork & Roth 2014, Thm 3.16): Σε and Σδ, and any (ε, δ) with a
    larger δ does not fit a budget equal to the composed amount."""
    m = dp.ApproxDP()
    e, d = m.compose(parts)
    assert e == sum((p[0] for p in parts), Fraction(0))
    assert d == min(Fraction(1), sum((p[1] for p in parts), Fraction(0)))
    if d < 1:
        assert not m.compare((e, d + Fraction(1, 10**12)), (e, d))
        assert not m.compare((e + Fraction(1, 10**12), d), (e, d))
    assert m.compare((e, d), (e, d))


def test_require_value_is_typed_by_the_measure_and_refuses_a_bare_one() -> None:
    from dpcert.core.measures import basic_loss, pair_loss, scalar_loss

    assert dp.PureDP(0.5).require_value() == Fraction(1, 2)
    assert dp.ApproxDP(1, 1e-6).require_value() == (Fraction(1), Fraction(1, 10**6))
    with pytest.raises(errors.InvalidParameter, match="carries no amount"):
        dp.ZCDP().require_value()
    curve = dp.RenyiDP().zero()
    assert scalar_loss(Fraction(1)) == 1 and pair_loss((Fraction(1), Fraction(0)))[1] == 0
    with pytest.raises(errors.InvalidParameter):
        basic_loss(curve)
    with pytest.raises(errors.InvalidParameter):
        scalar_loss((Fraction(1), Fraction(0)))
    with pytest.raises(errors.InvalidParameter):
        pair_loss(Fraction(1))


def test_group_privacy_map_follows_the_measure() -> None:
    assert dp.c.group_privacy_map(dp.PureDP(), Fraction(1, 2), 3) == Fraction(3, 2)
    e, d = dp.c.group_privacy_map(dp.ApproxDP(), (Fraction(1, 2), Fraction(0)), 2)
    assert (e, d) == (Fraction(1), Fraction(0))
    assert dp.c.group_privacy_map(dp.ZCDP(), Fraction(1, 8), 0) == 0
