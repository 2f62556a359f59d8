"""Contracts of dpcert.samplers: validation, dtypes, shapes, determinism, lattice outputs."""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import pytest

from dpcert.errors import InvalidParameter
from dpcert.samplers import (
    LATTICE_BITS,
    EntropySource,
    InsecureSeededSource,
    SystemSource,
    bernoulli,
    bernoulli_exp,
    default_source,
    discrete_gaussian,
    discrete_laplace,
    geometric,
    lattice_exponent,
    lattice_gaussian,
    lattice_laplace,
    uniform_below,
)

INT_SAMPLERS = [
    (discrete_laplace, "scale"),
    (discrete_gaussian, "sigma"),
    (geometric, "gamma"),
]


@pytest.mark.parametrize(("fn", "name"), INT_SAMPLERS)
@pytest.mark.parametrize("bad", [0, -1, -1.0, float("nan"), float("inf"), "3", None, True])
def test_bad_scale_raises_naming_argument(fn, name, bad):
    with pytest.raises(InvalidParameter, match=name):
        fn(bad, 3)


@pytest.mark.parametrize(("fn", "name"), INT_SAMPLERS)
@pytest.mark.parametrize("size", [-1, 2.0, "3"])
def test_bad_size_raises(fn, name, size):
    with pytest.raises(InvalidParameter, match="size"):
        fn(1, size)


def test_bad_probabilities():
    for p in [-0.1, 1.5, float("nan")]:
        with pytest.raises(InvalidParameter, match="p="):
            bernoulli(p, 3)
    for g in [-1, float("inf")]:
        with pytest.raises(InvalidParameter, match="gamma"):
            bernoulli_exp(g, 3)
    with pytest.raises(InvalidParameter, match="n="):
        uniform_below(0, 3)
    with pytest.raises(InvalidParameter, match="scale"):
        discrete_laplace(2**53, 3)


@pytest.mark.parametrize(("fn", "param"), [
    (discrete_laplace, Fraction(3)), (discrete_laplace, 0.25), (discrete_laplace, 2**40),
    (discrete_gaussian, Fraction(5, 2)), (discrete_gaussian, 1e-9), (discrete_gaussian, 2**45),
    (geometric, 2), (uniform_below, 7), (uniform_below, 2**40),
])
def test_dtype_shape_and_determinism(fn, param):
    a = fn(param, 1000, source=InsecureSeededSource(11))
    b = fn(param, 1000, source=InsecureSeededSource(11))
    assert a.dtype == np.int64 and a.shape == (1000,)
    assert np.array_equal(a, b)
    assert fn(param, 0).shape == (0,)


def test_bool_samplers():
    for x in (bernoulli(Fraction(1, 3), 50), bernoulli_exp(Fraction(1, 3), 50),
              bernoulli(0, 5), bernoulli_exp(0, 5)):
        assert x.dtype == np.bool_
    assert not bernoulli(0, 100).any() and bernoulli(1, 100).all()
    assert bernoulli_exp(0, 100).all()
    assert not bernoulli_exp(10**6, 1000).any()


def test_float_means_decimal():
    a = bernoulli(0.1, 100, source=InsecureSeededSource(1))
    b = bernoulli(Fraction(1, 10), 100, source=InsecureSeededSource(1))
    assert np.array_equal(a, b)


def test_uniform_below_ranges():
    for n in [1, 2, 6, 2**32 + 1, 2**63]:
        x = uniform_below(n, 500, source=InsecureSeededSource(n % 97))
        assert x.min() >= 0 and int(x.max()) < n
    big = uniform_below(2**100 + 7, 50)
    assert big.dtype == object and all(0 <= int(v) < 2**100 + 7 for v in big)


def test_tiny_and_huge_scales():
    assert not discrete_laplace(Fraction(1, 100), 10_000).any()  # P(x != 0) ~ 2 e^-100
    assert not discrete_gaussian(Fraction(1, 100), 10_000).any()
    x = discrete_gaussian(2**45, 20_000, source=InsecureSeededSource(2))
    assert 0.95 < x.std() / 2**45 < 1.05


def test_entropy_sources():
    s = SystemSource()
    w = s.random_uint64(10)
    assert w.dtype == np.uint64 and w.shape == (10,)
    big = s.random_uint64(300_000)  # bypasses the buffer
    assert big.shape == (300_000,) and len(np.unique(big)) == 300_000
    assert isinstance(default_source(), EntropySource)
    assert default_source() is default_source()
    assert s.random_uint32(5).dtype == np.uint32 and s.random_uint16(7).shape == (7,)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_gets_fresh_bytes():
    s = default_source()
    s.random_uint64(1)  # fill the buffer
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.write(w, default_source().random_uint64(4).tobytes())
        os._exit(0)
    os.waitpid(pid, 0)
    child = np.frombuffer(os.read(r, 32), dtype=np.uint64)
    assert not np.array_equal(child, s.random_uint64(4))


def test_lattice_exponent_is_exact():
    assert LATTICE_BITS == 40
    assert lattice_exponent(1) == -40
    assert lattice_exponent(Fraction(2**50 - 1)) == 49 - 40
    assert lattice_exponent(Fraction(2**50)) == 50 - 40
    assert lattice_exponent(Fraction(1, 3)) == -2 - 40
    for s in [Fraction(7, 3), Fraction(10**30, 7), Fraction(1, 10**20)]:
        k = lattice_exponent(s)
        assert Fraction(2) ** k <= s * Fraction(1, 2**40) < Fraction(2) ** (k + 1)


ATTACK_INPUTS = np.array([0.0, 0.1, 1e-300, 123.456, 1e20, -1e20, -0.1, 5e-324, np.inf, -np.inf])


@pytest.mark.parametrize("fn", [lattice_laplace, lattice_gaussian])
@pytest.mark.parametrize("scale", [1.0, Fraction(1, 3), 2.5e6, 1e-200])
def test_lattice_outputs_share_one_lattice(fn, scale):
    k = lattice_exponent(scale)
    ys = fn(np.repeat(ATTACK_INPUTS, 200), scale, source=InsecureSeededSource(3))
    assert ys.dtype == np.float64 and ys.shape == (2000,)
    assert np.isfinite(ys).all()
    n = np.ldexp(ys, -k)
    assert (n == np.rint(n)).all() and (np.abs(n) <= 2**53 - 1).all()
    for y in ys[::37].tolist():  # exact multiples of 2^k, as exact rationals
        q = Fraction(y) / Fraction(2) ** k
        assert q.denominator == 1


def test_lattice_scalar_and_explicit_k():
    y = lattice_laplace(0.1, 1.0, k=-30, source=InsecureSeededSource(0))
    assert isinstance(y, float) and (y * 2**30).is_integer()
    ys = lattice_gaussian([0.0, 0.1], 2.0, source=InsecureSeededSource(0))
    assert ys.shape == (2,)
    # the noise is centred on the input rounded to the lattice
    z = lattice_laplace(np.full(20_000, 0.1), 1e-4, source=InsecureSeededSource(5))
    assert abs(z.mean() - 0.1) < 1e-5
    # beyond 2**(k + 51) (here about 2048 * scale) inputs are clamped: pass a larger k for them
    far = lattice_laplace(np.full(100, 1e6), 1e-4, k=-10, source=InsecureSeededSource(5))
    assert abs(far.mean() - 1e6) < 1e-3


def test_lattice_clamps_to_the_documented_bound():
    k = lattice_exponent(1.0)
    y = lattice_laplace(np.array([1e300, -1e300]), 1.0, source=InsecureSeededSource(0))
    assert math.isclose(y[0], 2.0 ** (k + 51), abs_tol=50)
    assert math.isclose(y[1], -(2.0 ** (k + 51)), abs_tol=50)


@pytest.mark.parametrize("bad", [np.zeros((2, 2)), "abc", [np.nan], None])
def test_lattice_bad_values(bad):
    with pytest.raises(InvalidParameter, match="values"):
        lattice_laplace(bad, 1.0)


def test_lattice_bad_k():
    with pytest.raises(InvalidParameter, match="k="):
        lattice_laplace(0.0, 1.0, k=2000)
    with pytest.raises(InvalidParameter, match="k="):
        lattice_laplace(0.0, 1.0, k=-100)  # scale / 2^k = 2^100 too big
    with pytest.raises(InvalidParameter, match="sigma"):
        lattice_gaussian(0.0, -1.0)
