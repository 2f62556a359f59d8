"""The test subjects' fast code paths against plain reference code: bit-identical outputs.

The subjects (tests/audit/subjects.py) are sampled with tricks for speed (a sign-bit XOR,
column loops); these references are the straightforward NumPy versions (a masked negation, a
row-wise cumulative sum, a row-wise max) the subjects were first written with.  Same generator
seed, same draws, same outputs bit for bit, so the distributions are the same."""

from __future__ import annotations

from typing import Any

import audit_subjects as subjects  # registered by tests/audit/conftest.py
import numpy as np
import pytest

H, EPS = subjects.H, subjects.EPS


def _lap(rng: np.random.Generator, scale: float, size: Any) -> np.ndarray:
    e = rng.standard_exponential(size)
    e *= scale / H
    np.rint(e, out=e)
    count = e.size
    signs = np.unpackbits(np.frombuffer(rng.bytes((count + 7) // 8), dtype=np.uint8),
                          count=count).view(bool).reshape(e.shape)
    np.negative(e, out=e, where=signs)
    return e * H


def _svt(rng: np.random.Generator, x: Any, n: int, variant: int, t: float, c: int
         ) -> np.ndarray:
    e1 = EPS / 4.0 if variant == 4 else EPS / 2.0
    e2 = EPS - e1
    q = np.asarray(x, dtype=float)
    rho = _lap(rng, 1.0 / e1, n)
    scale = {1: 2.0 * c / e2, 3: c / e2, 4: 1.0 / e2, 6: 1.0 / e2}[variant]
    noisy = q + _lap(rng, scale, (n, q.size))
    above = noisy >= (rho + t)[:, None]
    col = np.where(above, noisy, -1000.0) if variant == 3 else 1.0 * above
    if variant == 6:
        return col
    aborted = np.cumsum(above, axis=1) - above >= c
    return np.where(aborted, -2000.0 if variant == 3 else -1.0, col)


def _rnm(rng: np.random.Generator, x: Any, n: int, value: bool) -> np.ndarray:
    v = np.asarray(x, dtype=float)
    z = v + _lap(rng, 2.0 / EPS, (n, v.size))
    return z.max(axis=1) if value else z.argmax(axis=1)


def _numerical_svt(rng: np.random.Generator, x: Any, n: int, c: int = 2) -> np.ndarray:
    q = np.asarray(x, dtype=float)
    rho1 = _lap(rng, 3.0 / EPS, (n, 1))
    above = q + _lap(rng, 6.0 * c / EPS, (n, q.size)) >= 1.0 + rho1
    z = q + _lap(rng, 3.0 * c / EPS, (n, q.size))
    before = np.cumsum(above, axis=1) - above
    return np.where(before >= c, -1000.0, np.where(above, z, 0.0))


X = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
CASES = [
    ("SVT1", lambda r, n: _svt(r, X, n, 1, 0.5, 1)),
    ("SVT3", lambda r, n: _svt(r, X, n, 3, 1.0, 1)),
    ("SVT4", lambda r, n: _svt(r, X, n, 4, 1.0, 1)),
    ("SVT6", lambda r, n: _svt(r, X, n, 6, 1.0, 1)),
    ("ReportNoisyMax1", lambda r, n: _rnm(r, X[:5], n, False)),
    ("ReportNoisyMax3", lambda r, n: _rnm(r, X[:5], n, True)),
    ("NumericalSVT", lambda r, n: _numerical_svt(r, X, n)),
]


@pytest.mark.parametrize(("name", "reference"), CASES, ids=[c[0] for c in CASES])
def test_fast_subjects_match_the_reference_bit_for_bit(name: str, reference: Any) -> None:
    x = X[:5] if name.startswith("Report") else X
    fast = subjects.BY_NAME[name].make(np.random.default_rng(3))
    got = np.asarray(fast(x, 20_000))
    want = reference(np.random.default_rng(3), 20_000)
    assert got.shape == want.shape
    assert np.array_equal(got.view(np.uint64) if got.dtype == np.float64 else got,
                          want.view(np.uint64) if want.dtype == np.float64 else want)
    assert len(np.unique(got)) >= 2    # not a constant output


def test_lap_signs_and_lattice() -> None:
    e = subjects.lap(np.random.default_rng(0), 10.0, 200_000)
    ref = _lap(np.random.default_rng(0), 10.0, 200_000)
    assert np.array_equal(e.view(np.uint64), ref.view(np.uint64))
    assert np.all(e / H == np.rint(e / H))            # on the lattice H·ℤ
    assert abs(float(np.mean(e < 0)) - 0.5) < 0.01    # symmetric (5 sd: 0.0056)
    assert abs(float(np.mean(np.abs(e))) - 10.0) < 0.15   # E|L| = scale (sd ≈ 0.022)
