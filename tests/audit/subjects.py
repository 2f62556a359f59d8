"""Test subjects for the auditor: the mechanisms of DP-Sniper's evaluation, correct and buggy.

Written from the papers' pseudo-code (Ding et al. CCS 2018 Alg. 5–8 for report-noisy-max;
Lyu, Su & Li VLDB 2017 Alg. 1–6 for the sparse vector technique; Erlingsson et al. CCS 2014 for
RAPPOR; Wang et al. PLDI 2019 for prefix sum), with the parameters of DP-Sniper's evaluation
(Bichsel et al. S&P 2021): ε = 0.1, 5 queries for report-noisy-max and histograms, 10 queries,
c = 1 for SVT.  These are *test subjects* sampled with NumPy generators (allowed in tests/), not
dpcert mechanisms.  Each ``make(rng)`` returns a vectorised black box ``f(x, n)``.

``DPSNIPER`` holds the published lower bound and run times of DP-Sniper with logistic
regression, from eval_sp2021/reference-results/dd_search_reg_data.log of
github.com/eth-sri/dp-sniper (and floating_point_data.log for the naive float Laplace).
Parameters follow dpsniper/experiments/exp_default.py: SVT1 t = 0.5, c = 1; SVT2–6 t = 1,
c = 1; SVT34Parallel and NumericalSVT c = 2; RAPPOR with DP-Sniper's murmur3 Bloom filter.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

EPS = 0.1
Array = np.ndarray[Any, Any]
Sampler = Callable[[Any, int], Array]
#: Lattice of the subjects' noise: Laplace and exponential noise are rounded to H·ℤ (a
#: post-processing of the real-valued draw), so sums with integer inputs are exact floats and
#: the subjects are as private as the real-valued mechanisms the papers analyse, up to the
#: ~1e-8 relative error of NumPy's float draws per lattice cell.  Only NaiveFloatLaplace
#: adds NumPy's float Laplace to its input, with the float holes that makes.
H = 2.0 ** -20


def lap(rng: np.random.Generator, scale: float, size: Any) -> Array:
    """Laplace noise rounded to the nearest point of H·ℤ.

    Drawn as a random sign times an exponential (ziggurat) draw, rounded: the same law as
    ``H·rint(Laplace(scale/H))`` (rounding is odd-symmetric), about 3× faster than NumPy's
    ``laplace``, which the auditor's time budgets then spend on more draws.  The sign is set
    by an XOR of the float's sign bit (a masked ``np.negative(..., where=)`` cost twice the
    exponential draw itself); the outputs are bit for bit those of the masked negation."""
    e: Array = rng.standard_exponential(size)
    e *= scale / H
    np.rint(e, out=e)
    count = e.size
    signs = np.unpackbits(np.frombuffer(rng.bytes((count + 7) // 8), dtype=np.uint8),
                          count=count).reshape(e.shape)
    bits = e.view(np.uint64)
    bits ^= signs.astype(np.uint64) << np.uint64(63)
    e *= H
    return e


def expo(rng: np.random.Generator, scale: float, size: Any) -> Array:
    """Exponential noise rounded down to H·ℕ (exactly geometric on the lattice)."""
    e: Array = rng.standard_exponential(size)
    e *= scale / H
    np.floor(e, out=e)
    e *= H
    return e


@dataclass(frozen=True)
class Subject:
    name: str
    make: Callable[[np.random.Generator], Sampler]
    claimed: float
    private: bool                    # does the claim hold?
    input_size: int | None = None    # None: scalar input, audited at 0 vs ±1
    adjacency: str = "linf"
    pairs: list[tuple[Any, Any]] | None = None   # explicit pairs (else searched)

    @property
    def dpsniper(self) -> tuple[float, float, float] | None:
        return DPSNIPER.get(self.name)


def _laplace(scale: float) -> Callable[[np.random.Generator], Sampler]:
    def make(rng: np.random.Generator) -> Sampler:
        return lambda x, n: float(x) + lap(rng, scale, n)
    return make


def _noisy_hist(scale: float) -> Callable[[np.random.Generator], Sampler]:
    def make(rng: np.random.Generator) -> Sampler:
        def f(x: Any, n: int) -> Array:
            v = np.asarray(x, dtype=float)
            return v + lap(rng, scale, (n, v.size))
        return f
    return make


def _rnm(noise: str, value: bool) -> Callable[[np.random.Generator], Sampler]:
    def make(rng: np.random.Generator) -> Sampler:
        def f(x: Any, n: int) -> Array:
            v = np.asarray(x, dtype=float)
            if noise == "laplace":
                z = v + lap(rng, 2.0 / EPS, (n, v.size))
            else:
                z = v + expo(rng, 2.0 / EPS, (n, v.size))
            if not value:
                return z.argmax(axis=1)
            top = z[:, 0].copy()      # the row maximum, a column at a time (10× a row-wise max)
            for j in range(1, z.shape[1]):
                np.maximum(top, z[:, j], out=top)
            return top
        return f
    return make


def _aborted(above: Array, c: int) -> Array:
    """``aborted[:, i]``: at least ``c`` of ``above[:, :i]`` hold (``cumsum(above) − above ≥ c``,
    a loop over the few queries vectorised over rows: 5× faster than a row-wise cumsum)."""
    n, k = above.shape
    count = np.zeros(n, dtype=np.int32)
    out = np.empty((n, k), dtype=bool)
    for i in range(k):
        np.greater_equal(count, c, out=out[:, i])
        count += above[:, i]
    return out


def _svt(variant: int, t: float = 1.0, c: int = 1) -> Callable[[np.random.Generator], Sampler]:
    """Lyu–Su–Li Algorithms 1–6; outputs 1 = ⊤, 0 = ⊥, -1 = after abort (Alg. 3: the noisy
    answer for ⊤, -1000 for ⊥, -2000 after abort)."""
    e1 = EPS / 4.0 if variant == 4 else EPS / 2.0
    e2 = EPS - e1

    def make(rng: np.random.Generator) -> Sampler:
        def f(x: Any, n: int) -> Array:
            q = np.asarray(x, dtype=float)
            k = q.size
            rho_scale = c / e1 if variant == 2 else 1.0 / e1
            rho = lap(rng, rho_scale, n)
            if variant in (1, 2):
                nu = lap(rng, 2.0 * c / e2, (n, k))
            elif variant == 3:
                nu = lap(rng, c / e2, (n, k))
            elif variant in (4, 6):
                nu = lap(rng, 1.0 / e2, (n, k))
            else:  # 5: no query noise
                nu = np.zeros((n, k))
            noisy = q + nu
            if variant != 2 or c == 1:  # one threshold: vectorised over queries too
                above = noisy >= (rho + t)[:, None]
                if variant in (5, 6):  # no abort
                    return 1.0 * above
                aborted = _aborted(above, c)   # c ⊤s before this query
                if variant == 3:
                    out: Array = np.where(aborted, -2000.0, np.where(above, noisy, -1000.0))
                    return out
                out = (above & ~aborted).astype(np.float64)
                out -= aborted                  # 1 = ⊤, 0 = ⊥, -1 after the abort
                return out
            out = np.zeros((n, k))
            count = np.zeros(n)
            aborted = np.zeros(n, dtype=bool)
            for i in range(k):  # Alg. 2: the threshold is redrawn after each ⊤
                above = noisy[:, i] >= rho + t
                out[:, i] = np.where(aborted, -1.0, 1.0 * above)
                hit = above & ~aborted
                count += hit
                rho = np.where(hit, lap(rng, rho_scale, n), rho)
                aborted |= count >= c
            return out
        return f
    return make


def _murmur3_32(data: bytes, seed: int) -> int:
    """MurmurHash3 x86_32 (signed, like ``mmh3.hash``), for RAPPOR's Bloom filter."""
    c1, c2, m = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed & m
    n4 = len(data) // 4 * 4
    for i in range(0, n4, 4):
        k = (int.from_bytes(data[i:i + 4], "little") * c1) & m
        k = (((k << 15) | (k >> 17)) & m) * c2 & m
        h ^= k
        h = ((((h << 13) | (h >> 19)) & m) * 5 + 0xE6546B64) & m
    k = 0
    for j, byte in enumerate(data[n4:]):
        k |= byte << (8 * j)
    if len(data) > n4:
        k = (k * c1) & m
        h ^= (((k << 15) | (k >> 17)) & m) * c2 & m
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & m
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & m
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def bloom_bits(value: int, hashes: int = 4, size: int = 20) -> list[int]:
    """DP-Sniper's Bloom filter: ``mmh3.hash(str(value), seed=i) % size`` for i < hashes.

    >>> bloom_bits(0), bloom_bits(1)       # 6 bits differ: the pair DP-Sniper's bound implies
    ([0, 11, 18], [3, 10, 13])
    """
    return sorted({_murmur3_32(str(int(value)).encode(), i) % size for i in range(hashes)})


def _rappor(f: float, p: float | None, q: float | None) -> Callable[[np.random.Generator], Sampler]:
    """RAPPOR's bits are independent given the Bloom filter: bit ``i`` is 1 with probability
    ``(f/2 + (1−f)·b_i)·q + (1 − f/2 − (1−f)·b_i)·p`` (permanent then instantaneous randomized
    response; ``f/2 + (1−f)·b_i`` for one-time RAPPOR), so one uniform per bit draws it."""
    keep = (f / 2.0, f / 2.0 + (1.0 - f))       # P[permanent bit = 1] for b = 0, 1
    prob = keep if p is None or q is None else tuple(k * q + (1.0 - k) * p for k in keep)

    def make(rng: np.random.Generator) -> Sampler:
        def sample(x: Any, n: int) -> Array:
            row = np.full(20, prob[0])
            row[bloom_bits(int(np.asarray(x).ravel()[0]))] = prob[1]
            return (rng.random((n, 20)) < row).astype(np.float64)
        return sample
    return make


def _prefix_sum(rng: np.random.Generator) -> Sampler:
    def f(x: Any, n: int) -> Array:
        v = np.asarray(x, dtype=float)
        return np.cumsum(v + lap(rng, 1.0 / EPS, (n, v.size)), axis=1)
    return f


def _truncated_geometric(rng: np.random.Generator) -> Sampler:
    """Balcer & Vadhan 2018 Alg. 4.8 GeoSample(ε = 0.1, n = 5) on a count c ∈ [0, 5]."""
    k, size = math.ceil(math.log(2.0 / EPS)), 5
    d = (2 ** (k + 1) + 1) * (2 ** k + 1) ** (size - 1)

    def cdf(c: int) -> Array:
        f = [2 ** (k * (c - z)) * (2 ** k + 1) ** (size - (c - z)) for z in range(c)]
        f += [d - 2 ** (k * (z - c + 1)) * (2 ** k + 1) ** (size - 1 - (z - c))
              for z in range(c, size)]
        return np.array([*f, d], dtype=np.int64)

    def f(x: Any, n: int) -> Array:
        u = rng.integers(1, d + 1, n)
        return np.searchsorted(cdf(int(np.asarray(x).ravel()[0])), u).astype(np.float64)
    return f


def _parallel(*parts: Callable[[np.random.Generator], Sampler]
              ) -> Callable[[np.random.Generator], Sampler]:
    def make(rng: np.random.Generator) -> Sampler:
        fs = [p(rng) for p in parts]

        def f(x: Any, n: int) -> Array:
            return np.column_stack([g(x, n) for g in fs])
        return f
    return make


def _numerical_svt(c: int = 2, t: float = 1.0) -> Callable[[np.random.Generator], Sampler]:
    """Wang et al. PLDI 2019 NumericalSVT: the noisy answer (fresh noise) for ⊤, 0 for ⊥,
    -1000 after the c-th ⊤."""
    def make(rng: np.random.Generator) -> Sampler:
        def f(x: Any, n: int) -> Array:
            q = np.asarray(x, dtype=float)
            rho1 = lap(rng, 3.0 / EPS, (n, 1))
            above = q + lap(rng, 6.0 * c / EPS, (n, q.size)) >= t + rho1
            z = q + lap(rng, 3.0 * c / EPS, (n, q.size))
            out = np.where(above, z, 0.0)
            return np.where(_aborted(above, c), -1000.0, out)   # c ⊤s before the query
        return f
    return make


def _naive_float_laplace(rng: np.random.Generator) -> Sampler:
    """``numpy.random.laplace(x, 1/ε)``: textbook float Laplace, not private (Mironov 2012)."""
    return lambda x, n: rng.laplace(float(np.asarray(x).ravel()[0]), 1.0 / EPS, n)  # insecure-ok


#: DP-Sniper's published results (logistic regression, eval_sp2021/reference-results/
#: dd_search_reg_data.log; the float Laplace: floating_point_data.log, an MLP on bit features):
#: (ε lower bound at confidence 0.9, search seconds, search + final-estimate seconds).
DPSNIPER: dict[str, tuple[float, float, float]] = {
    "Laplace": (0.0968, 19.6, 21.4),
    "TruncatedGeometric": (0.1156, 17.9, 19.5),
    "NoisyHist1": (0.0978, 34.8, 37.7),
    "NoisyHist2": (4.6020, 37.8, 40.6),
    "ReportNoisyMax1": (0.0923, 58.8, 61.8),
    "ReportNoisyMax2": (0.0975, 55.7, 58.4),
    "ReportNoisyMax3": (0.2478, 59.4, 62.4),
    "ReportNoisyMax4": (0.3463, 59.8, 62.9),
    "SVT1": (0.0858, 118.0, 126.0),
    "SVT2": (0.0859, 148.1, 159.9),
    "SVT3": (0.1716, 149.8, 160.3),
    "SVT4": (0.1687, 122.7, 130.5),
    "SVT5": (1.7612, 56.3, 58.9),
    "SVT6": (0.2720, 90.7, 95.5),
    "Rappor": (0.2930, 130.6, 144.9),
    "OneTimeRappor": (0.5978, 79.9, 89.1),
    "LaplaceParallel": (0.0350, 96.5, 104.4),
    "SVT34Parallel": (0.2610, 341.3, 363.9),
    "PrefixSum": (0.5040, 92.1, 97.0),
    "NumericalSVT": (0.0343, 142.2, 151.7),
    "NaiveFloatLaplace": (0.2521, 1816.8, 2124.6),
}

_VAL = [(1, 0), (0, 1), (1, 2), (2, 1)]   # DP-Sniper's patterns for one integer input

SUBJECTS: tuple[Subject, ...] = (
    Subject("Laplace", _laplace(1.0 / EPS), EPS, True),
    Subject("LaplaceWrongScale", _laplace(0.8 / EPS), EPS, False),
    Subject("TruncatedGeometric", _truncated_geometric, math.log(1 + 2.0 ** -3), True,
            pairs=_VAL),
    Subject("NoisyHist1", _noisy_hist(1.0 / EPS), EPS, True, 5, "l1"),
    Subject("NoisyHist2", _noisy_hist(EPS), EPS, False, 5, "l1"),
    Subject("ReportNoisyMax1", _rnm("laplace", False), EPS, True, 5),
    Subject("ReportNoisyMax2", _rnm("exp", False), EPS, True, 5),
    Subject("ReportNoisyMax3", _rnm("laplace", True), EPS, False, 5),
    Subject("ReportNoisyMax4", _rnm("exp", True), EPS, False, 5),
    Subject("SVT1", _svt(1, t=0.5), EPS, True, 10),
    Subject("SVT2", _svt(2), EPS, True, 10),
    Subject("SVT3", _svt(3), EPS, False, 10),
    Subject("SVT4", _svt(4), EPS, False, 10),
    Subject("SVT5", _svt(5), EPS, False, 10),
    Subject("SVT6", _svt(6), EPS, False, 10),
    Subject("Rappor", _rappor(0.75, 0.45, 0.55), 6 * math.log(0.5125 / 0.4875), True,
            pairs=_VAL),
    Subject("OneTimeRappor", _rappor(0.95, None, None), 6 * math.log(0.525 / 0.475), True,
            pairs=_VAL),
    Subject("LaplaceParallel", _parallel(*[_laplace(200.0)] * 20), 20 * 0.005, True),
    Subject("SVT34Parallel", _parallel(_svt(3, c=2), _svt(4, c=2)), EPS, False, 10),
    Subject("PrefixSum", _prefix_sum, 1.0, True, 10),
    Subject("NumericalSVT", _numerical_svt(), EPS, True, 10),
    Subject("NaiveFloatLaplace", _naive_float_laplace, EPS, False),
)
"""The claims: ε = 0.1 for the report-noisy-max, histogram, SVT and Laplace subjects (DP-Sniper
audits them against 0.1; SVT34Parallel composes two ε = 0.1 runs but is audited against 0.1 as
DP-Sniper does); RAPPOR's ε for the filters of 1 and 0 (6 differing bits) is
6·ln(0.5125/0.4875) ≈ 0.300, one-time RAPPOR's 6·ln(0.525/0.475) ≈ 0.600; truncated geometric
is ln(1 + 2^-3)-DP (Balcer–Vadhan Thm. 4.7); LaplaceParallel runs 20 Laplace(1/0.005) on one
input (ε = 0.1); prefix sum over 10 ℓ∞-neighbouring answers is 10·ε = 1.0-DP."""

BY_NAME = {s.name: s for s in SUBJECTS}
