"""Deterministic checks of sampler internals where a one-ulp error is invisible to statistics:
rational thresholds bracket p, uniform_below rejects the biased top words, and the cell engine's
float filter never decides against the exact acceptance rule."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpcert.samplers import InsecureSeededSource, uniform_below
from dpcert.samplers._cells import cell_sampler
from dpcert.samplers.coins import _rational_table
from dpcert.samplers.entropy import EntropySource


class Words(EntropySource):
    """Replays fixed 64-bit words (then zeros): for deterministic sampler tests only."""

    def __init__(self, words: list[int]) -> None:
        self.words = list(words)

    def random_uint64(self, n: int) -> np.ndarray:
        out = [self.words.pop(0) if self.words else 0 for _ in range(n)]
        return np.array(out, dtype=np.uint64)


@pytest.mark.parametrize("p", [Fraction(1, 3), Fraction(2, 7), Fraction(999, 1000),
                               Fraction(1, 2**40 + 1)])
@pytest.mark.parametrize("prec", [32, 64, 97, 128, 256])
def test_bernoulli_thresholds_bracket_p(p: Fraction, prec: int) -> None:
    lo, hi = _rational_table(p).threshold_bounds(0, prec)
    assert lo <= p * 2**prec <= hi and hi - lo <= 1


def test_uniform_below_rejects_the_biased_top_words() -> None:
    # 2^64 mod 6 = 4: the top four words must be rejected, or small values are over-weighted
    top = 2**64 - 2
    assert uniform_below(6, 1, source=Words([top, 7]))[0] == 1
    assert uniform_below(6, 1, source=Words([2**64 - 5, 7]))[0] == (2**64 - 5) % 6
    assert uniform_below(8, 1, source=Words([2**63]))[0] == 4  # power of two: top bits


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
@pytest.mark.parametrize("scale", [Fraction(128), Fraction(4096), Fraction(10**6 + 1, 3)])
def test_cell_filter_agrees_with_the_exact_rule(kind: str, scale: Fraction) -> None:
    # For random cells v (both signs), offsets r and 16-bit prefixes u whose answer is decided by
    # u alone (u + 1 ≤ 2^16·p or u ≥ 2^16·p), _accept must return exactly "u/2^16 < p" with
    # p = exp(−(f(m_v + d) − f(m_v))), d = r (v ≥ 0) or t − 1 − r (v < 0).
    cs = cell_sampler(kind, scale, False)
    rng = np.random.default_rng(5)  # chooses test inputs only
    n = 200_000
    v = rng.integers(cs.vmin, cs.jr, size=n)
    r = rng.integers(0, cs.t, size=n)
    u = rng.integers(0, 2**16, size=n)
    idx = v - (cs.vmin - 1)
    acc = cs._accept(v, idx, r, u, InsecureSeededSource(1))
    # cell v covers x in [t·v, t·v + t − 1]; its inner end is |x| = m_v (the spec, in closed form)
    m = np.where(v >= 0, cs.t * v, -cs.t * v - cs.t + 1).astype(np.float64)
    d = np.where(v >= 0, r, cs.t - 1 - r).astype(np.float64)
    s = float(scale)
    z = d / s if kind == "laplace" else d * (d + 2 * m) / (2 * s * s)
    p = np.exp(-z) * 2**16
    yes = u + 1 <= p - 1e-6
    no = u >= p + 1e-6
    assert acc[yes].all() and not acc[no].any()
    checked = int(yes.sum() + no.sum())
    assert [cs.m_of(x) for x in (0, 2, -1, -3)] == [0, 2 * cs.t, 1, 2 * cs.t + 1]
    assert checked > n * 0.99
    assert math.isfinite(float(scale))
