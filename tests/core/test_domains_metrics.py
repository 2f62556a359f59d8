"""Domains and metrics, with property tests that metric distances match the stability maps."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings

import dpcert as dp
from dpcert import errors


def test_atom_domain_members() -> None:
    d = dp.AtomDomain(float)
    assert d.member(1.0) and d.member(np.float64(2.0))
    assert not d.member(math.nan) and not d.member(math.inf) and not d.member(1)
    assert dp.AtomDomain(float, nan=True).member(math.nan)
    b = dp.AtomDomain(int, bounds=(0, 10))
    assert b.member(0) and b.member(10) and not b.member(11) and not b.member(True)
    assert dp.AtomDomain(str).member("x") and not dp.AtomDomain(str).member(1)
    assert dp.AtomDomain(bool).member(True) and not dp.AtomDomain(bool).member(1)


@pytest.mark.parametrize(
    "kwargs",
    [dict(type=list), dict(type=float, bounds=(2.0, 1.0)), dict(type=float, bounds=(0.0, math.inf)),
     dict(type=str, bounds=("a", "b")), dict(type=int, nan=True), dict(type=int, bounds=(0.5, 2))],
)
def test_atom_domain_rejects_bad_parameters(kwargs: dict[str, object]) -> None:
    with pytest.raises(errors.InvalidParameter):
        dp.AtomDomain(**kwargs)  # type: ignore[arg-type]


def test_vector_domain_members_vectorised() -> None:
    d = dp.VectorDomain(dp.AtomDomain(float, bounds=(0.0, 1.0)))
    assert d.member(np.array([0.0, 0.5, 1.0]))
    assert not d.member(np.array([0.0, 2.0]))
    assert not d.member(np.array([[0.0]]))
    assert not d.member(np.array([1, 2]))  # ints are not floats
    assert not d.member(np.array([np.nan]))
    assert d.member([0.1, 0.2]) and not d.member([0.1, 7.0]) and not d.member("abc")
    sized = dp.VectorDomain(dp.AtomDomain(int), size=2)
    assert sized.member([1, 2]) and not sized.member([1, 2, 3])
    with pytest.raises(errors.OutOfDomain, match="NaN"):
        dp.VectorDomain(dp.AtomDomain(float)).check_member([float("nan")])


def test_metrics_examples() -> None:
    u, v = [12, 10, 8, 7], [10, 10, 8, 7]
    assert dp.SymmetricDistance().distance(u, v) == 2
    assert dp.ChangeOneDistance().distance(u, v) == 1
    assert dp.HammingDistance().distance(u, v) == 1
    assert dp.HammingDistance().distance([1, 2], [2, 1]) == 2
    assert dp.ChangeOneDistance().distance([1, 2], [2, 1]) == 0
    assert dp.ChangeOneDistance().distance([1], [1, 2]) == math.inf
    assert dp.InsertDeleteDistance().distance([1, 2, 3], [2, 3, 4]) == 2
    assert dp.InsertDeleteDistance().distance([1, 2], [2, 1]) == 2
    assert dp.DiscreteDistance().distance("a", "a") == 0
    assert dp.DiscreteDistance().distance("a", "b") == 1
    assert dp.AbsoluteDistance().distance(0.1, 0.3) == abs(Fraction(0.1) - Fraction(0.3))
    assert dp.L1Distance().distance([1, 2], [2, 0]) == 3
    assert dp.L2Distance().distance([0, 0], [3, 4]) == 5
    l2 = dp.L2Distance().distance([0], [0.1])
    assert Fraction(l2) >= Fraction(0.1)
    assert dp.L2Distance().distance([0, 0], [1, 1]) >= math.sqrt(2)
    with pytest.raises(errors.InvalidParameter):
        dp.L1Distance().distance([1], [1, 2])


# --- property tests: distances of random neighbours never exceed what the maps assume ---------

from _strategies import neighbours  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(neighbours())
def test_symmetric_distance_vs_moves(case: tuple[list[float], list[float], int]) -> None:
    u, v, k = case
    d = dp.SymmetricDistance().distance(u, v)
    assert d <= k and d % 2 == (len(u) + len(v)) % 2
    assert dp.InsertDeleteDistance().distance(u, v) <= k
    assert dp.InsertDeleteDistance().distance(u, v) >= d
