"""make_laplace: exact pure-DP maps and events (integer, float scalar, float vectors)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpcert as dp
from dpcert.core.events import ComposedEvent, DiscreteLaplaceEvent
from dpcert.samplers import rounding_allowance


@pytest.mark.parametrize("d_in", [1, 2, 3, Fraction(7, 2)])
def test_integer_maps_exact(d_in: object) -> None:
    m = dp.m.make_laplace(dp.AtomDomain(int), dp.AbsoluteDistance(), Fraction(1, 10))
    assert m.map(d_in) == 10 * Fraction(d_in)  # type: ignore[arg-type]
    vec = dp.m.make_laplace(dp.VectorDomain(dp.AtomDomain(int)), dp.L1Distance(), 4)
    assert vec.map(d_in) == Fraction(d_in) / 4  # type: ignore[arg-type]
    assert m.map(0) == vec.map(0) == 0
    assert m.event(3) == DiscreteLaplaceEvent(Fraction(1, 10), 3)
    assert m.event(0) == ComposedEvent(())


def test_float_scalar_map_exact() -> None:
    f = dp.m.make_laplace(dp.AtomDomain(float), dp.AbsoluteDistance(), 25.0)
    k = f.params["lattice_exponent"]
    assert k == 4 - 20
    assert f.map(12) == (12 + Fraction(5, 4) * Fraction(2) ** k) / 25
    assert f.map(1) == (1 + rounding_allowance(k)) / 25
    unit = Fraction(2) ** k
    assert f.event(3) == DiscreteLaplaceEvent(25 / unit, math.floor((3 + rounding_allowance(k))
                                                                    / unit))


@pytest.mark.parametrize(("size", "m"), [(None, 1024), (1, 1), (10, 10), (3000, 3000)])
def test_float_vector_maps_charge_m_allowances(size: int | None, m: int) -> None:
    vec = dp.m.make_laplace(dp.VectorDomain(dp.AtomDomain(float), size=size), dp.L1Distance(),
                            2.0)
    k = vec.params["lattice_exponent"]
    assert k == 1 - 20 - (m - 1).bit_length()
    for d in (1, 3):
        assert vec.map(d) == (d + m * rounding_allowance(k)) / 2
    assert m * rounding_allowance(k) <= 2 * Fraction(5, 4) / 2**20


def test_framework_example_lattice_allowance() -> None:
    space = (dp.VectorDomain(dp.AtomDomain(float)), dp.SymmetricDistance())
    m = space >> dp.t.then_clamp(0.0, 12.0) >> dp.t.then_sum() >> dp.m.then_laplace(25.0)
    assert m.map(1) == Fraction(12, 25) + Fraction(5, 2**18) / 25
    assert m.map(2) == Fraction(24, 25) + Fraction(5, 2**18) / 25


def test_noise_scale_on_the_lattice() -> None:
    # mean |noise| of Laplace(b) is b: the integer noise has scale b / 2^k, then times 2^k
    f = dp.m.make_laplace(dp.AtomDomain(float), dp.AbsoluteDistance(), 3.0)
    out = np.asarray(f.batch_map(0.0, 40000))  # type: ignore[misc]
    assert 2.85 < float(np.mean(np.abs(out))) < 3.15
    i = dp.m.make_laplace(dp.AtomDomain(int), dp.AbsoluteDistance(), 3)
    z = np.asarray(i.batch_map(0, 40000))  # type: ignore[misc]
    # discrete Laplace(3): E|Z| = 2q/(1 - q²), q = e^{-1/3}
    q = math.exp(-1 / 3)
    assert abs(float(np.mean(np.abs(z))) - 2 * q / (1 - q * q)) < 0.15


@pytest.mark.parametrize(("sens", "eps"), [(1, "1"), (6, "1/2"), (7, "3/10"), (0, "1")])
def test_laplace_scale_inverts_the_map(sens: int, eps: str) -> None:
    """`laplace_scale` is what the engine calibrates with: the integer mechanism at that scale
    costs exactly ε at Δ (and nothing at Δ = 0)."""
    from fractions import Fraction

    from dpcert.core.domains import AtomDomain, VectorDomain
    from dpcert.core.metrics import L1Distance
    from dpcert.mechanisms.laplace import laplace_scale, make_laplace

    e = Fraction(eps)
    m = make_laplace(VectorDomain(AtomDomain(int), size=3), L1Distance(),
                     laplace_scale(Fraction(sens), e))
    assert m.map(sens) == (e if sens else 0)
