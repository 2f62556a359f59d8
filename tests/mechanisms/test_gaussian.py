"""make_gaussian: exact zCDP maps (integer, float scalar, sized and unsized float vectors)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpcert as dp
from dpcert._directed import ceil_sqrt
from dpcert.core.events import DiscreteGaussianEvent, ZCDPEvent
from dpcert.errors import InvalidParameter
from dpcert.mechanisms._additive import MAX_UNSIZED
from dpcert.samplers import InsecureSeededSource, rounding_allowance

FV = dp.VectorDomain(dp.AtomDomain(float))


@pytest.mark.parametrize(("m", "root"), [(1, 1), (2, 2), (4, 2), (10, 4), (16, 4), (17, 5),
                                         (1024, 32), (1025, 33)])
def test_ceil_sqrt_is_the_ceiling_of_the_root(m: int, root: int) -> None:
    assert ceil_sqrt(m) == root
    assert ceil_sqrt(m) ** 2 >= m > (ceil_sqrt(m) - 1) ** 2


@pytest.mark.parametrize("d_in", [1, 3, Fraction(5, 2)])
def test_integer_maps_exact(d_in: object) -> None:
    g = dp.m.make_gaussian(dp.AtomDomain(int), dp.AbsoluteDistance(), 3)
    d = Fraction(d_in)  # type: ignore[arg-type]
    assert g.map(d_in) == d * d / 18
    vec = dp.m.make_gaussian(dp.VectorDomain(dp.AtomDomain(int)), dp.L2Distance(), 2)
    assert vec.map(d_in) == d * d / 8
    assert g.map(0) == vec.map(0) == 0


@pytest.mark.parametrize(("size", "root"), [(None, 32), (1, 1), (10, 4), (16, 4), (1000, 32)])
def test_float_vector_maps_charge_sqrt_m_allowance(size: int | None, root: int) -> None:
    sigma = Fraction(3)
    g = dp.m.make_gaussian(dp.VectorDomain(dp.AtomDomain(float), size=size), dp.L2Distance(),
                           sigma)
    k = g.params["lattice_exponent"]
    a = rounding_allowance(k)
    for d in (1, 2, 7):
        assert g.map(d) == (d + root * a) ** 2 / (2 * sigma**2)
    # the allowance stays tiny but positive
    assert 0 < root * a <= sigma * Fraction(5, 4) / 2**20
    assert isinstance(g.event(2), ZCDPEvent) and g.event(2).rho == g.map(2)


def test_float_scalar_map_and_event() -> None:
    sigma = Fraction(1, 3)
    g = dp.m.make_gaussian(dp.AtomDomain(float), dp.AbsoluteDistance(), sigma)
    k = g.params["lattice_exponent"]
    assert k == math.floor(math.log2(1 / 3)) - 20
    a, unit = rounding_allowance(k), Fraction(2) ** k
    assert g.map(2) == (2 + a) ** 2 / (2 * sigma**2)
    ev = g.event(2)
    assert ev == DiscreteGaussianEvent(sigma / unit, math.floor((2 + a) / unit))
    explicit = dp.m.make_gaussian(dp.AtomDomain(float), dp.AbsoluteDistance(), sigma, k=-10)
    assert explicit.map(1) == (1 + rounding_allowance(-10)) ** 2 * Fraction(9, 2)


@pytest.mark.parametrize("make", [dp.m.make_gaussian, dp.m.make_laplace])
def test_unsized_float_vectors_longer_than_the_allowance_are_refused(make: object) -> None:
    metric = dp.L2Distance() if make is dp.m.make_gaussian else dp.L1Distance()
    mech = make(FV, metric, 1.0)  # type: ignore[operator]
    assert len(mech(np.zeros(MAX_UNSIZED))) == MAX_UNSIZED
    with pytest.raises(InvalidParameter, match="1025 exceeds 1024"):
        mech(np.zeros(MAX_UNSIZED + 1))
    with pytest.raises(InvalidParameter, match="exceeds"):
        mech.batch_map(np.zeros(MAX_UNSIZED + 1), 2)  # type: ignore[misc]
    sized = make(dp.VectorDomain(dp.AtomDomain(float), size=2000), metric, 1.0)  # type: ignore[operator]
    assert len(sized(np.zeros(2000))) == 2000


def test_noise_scale_is_sigma_on_the_lattice() -> None:
    # the integer noise has parameter σ / 2^k: its sample standard deviation is σ (not σ·4^k)
    g = dp.m.make_gaussian(dp.AtomDomain(float), dp.AbsoluteDistance(), 2.0)
    out = np.asarray(g.batch_map(0.0, 20000))  # type: ignore[misc]
    assert 1.9 < float(np.std(out)) < 2.1
    from dpcert.samplers import lattice_gaussian
    y = lattice_gaussian(np.zeros(20000), 2.0, k=-30, source=InsecureSeededSource(3))
    assert 1.9 < float(np.std(y)) < 2.1


@pytest.mark.parametrize(("sens", "rho"), [(1, "1/2"), (6, "1/8"), (7, "3/10"), (0, "1")])
def test_gaussian_sigma_inverts_the_map(sens: int, rho: str) -> None:
    """`gaussian_sigma` is what the engine calibrates with: at that σ the integer mechanism
    costs at most ρ at Δ, and within 10⁻⁶ of it (σ is rounded up, not loosely)."""
    from fractions import Fraction

    from dpcert.core.domains import AtomDomain, VectorDomain
    from dpcert.core.metrics import L2Distance
    from dpcert.mechanisms.gaussian import gaussian_sigma, make_gaussian

    r = Fraction(rho)
    m = make_gaussian(VectorDomain(AtomDomain(int), size=3), L2Distance(),
                      gaussian_sigma(Fraction(sens), r))
    cost = m.map(sens)
    assert cost <= r and (sens == 0 or cost > r * (1 - Fraction(1, 10**6)))
