"""Test subjects for the auditor: the mechanisms of DP-Sniper's evaluation, correct and buggy.

Written from the papers' pseudo-code (Ding et al. CCS 2018 Alg. 5–8 for report-noisy-max;
Lyu, Su & Li VLDB 2017 Alg. 1–6 for the sparse vector technique; Erlingsson et al. CCS 2014 for
RAPPOR; Wang et al. PLDI 2019 for prefix sum), with the parameters of DP-Sniper's evaluation
(Bichsel et al. S&P 2021): ε = 0.1, 5 queries for report-noisy-max and histograms, 10 queries,
c = 1 for SVT.  These are *test subjects* sampled with NumPy generators (allowed in tests/), not
dpcert mechanisms.  Each ``make(rng)`` returns a vectorised black box ``f(x, n)``.

``dpsniper`` holds the published lower bound and run time (seconds, search + final estimate)
of DP-Sniper with logistic regression, from eval_sp2021/reference-results/dd_search_reg_data.log
of github.com/eth-sri/dp-sniper.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

EPS = 0.1
Array = np.ndarray[Any, Any]
Sampler = Callable[[Any, int], Array]


@dataclass(frozen=True)
class Subject:
    name: str
    make: Callable[[np.random.Generator], Sampler]
    claimed: float
    private: bool                    # does the claim hold?
    input_size: int | None = None    # None: scalar input, audited at 0 vs ±1
    adjacency: str = "linf"
    dpsniper: tuple[float, float] | None = None


def _laplace(scale: float) -> Callable[[np.random.Generator], Sampler]:
    def make(rng: np.random.Generator) -> Sampler:
        return lambda x, n: float(x) + rng.laplace(0.0, scale, n)
    return make


def _noisy_hist(scale: float) -> Callable[[np.random.Generator], Sampler]:
    def make(rng: np.random.Generator) -> Sampler:
        def f(x: Any, n: int) -> Array:
            v = np.asarray(x, dtype=float)
            return v + rng.laplace(0.0, scale, (n, v.size))
        return f
    return make


def _rnm(noise: str, value: bool) -> Callable[[np.random.Generator], Sampler]:
    def make(rng: np.random.Generator) -> Sampler:
        def f(x: Any, n: int) -> Array:
            v = np.asarray(x, dtype=float)
            if noise == "laplace":
                z = v + rng.laplace(0.0, 2.0 / EPS, (n, v.size))
            else:
                z = v + rng.exponential(2.0 / EPS, (n, v.size))
            return z.max(axis=1) if value else z.argmax(axis=1)
        return f
    return make


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
            rho = rng.laplace(0.0, rho_scale, n)
            if variant in (1, 2):
                nu = rng.laplace(0.0, 2.0 * c / e2, (n, k))
            elif variant == 3:
                nu = rng.laplace(0.0, c / e2, (n, k))
            elif variant in (4, 6):
                nu = rng.laplace(0.0, 1.0 / e2, (n, k))
            else:  # 5: no query noise
                nu = np.zeros((n, k))
            noisy = q + nu
            out = np.zeros((n, k))
            count = np.zeros(n)
            aborted = np.zeros(n, dtype=bool)
            for i in range(k):  # loop over the queries; vectorised over the n samples
                above = noisy[:, i] >= rho + t
                col = np.where(above, noisy[:, i], -1000.0) if variant == 3 else 1.0 * above
                if variant in (5, 6):  # no abort
                    out[:, i] = col
                    continue
                col = np.where(aborted, -2000.0 if variant == 3 else -1.0, col)
                out[:, i] = col
                hit = above & ~aborted
                count += hit
                if variant == 2:
                    fresh = rng.laplace(0.0, rho_scale, n)
                    rho = np.where(hit, fresh, rho)
                aborted |= count >= c
            return out
        return f
    return make


def _bits(value: int) -> list[int]:
    # Bloom-filter bits (4 "hashes" into 20 bits); the filters of 0 and 1 differ in 6 bits.
    return {0: [0, 1, 2, 3], 1: [3, 4, 5, 6]}.get(int(value), [7, 8, 9, 10])


def _rappor(f: float, p: float | None, q: float | None) -> Callable[[np.random.Generator], Sampler]:
    def make(rng: np.random.Generator) -> Sampler:
        def sample(x: Any, n: int) -> Array:
            b = np.zeros((n, 20))
            b[:, _bits(x)] = 1.0
            u = rng.random((n, 20))
            b = np.where(u < f / 2, 1.0, np.where(u < f, 0.0, b))   # permanent RR
            if p is None or q is None:
                return b
            v = rng.random((n, 20))
            return (v < np.where(b == 1.0, q, p)).astype(float)    # instantaneous RR
        return sample
    return make


def _prefix_sum(rng: np.random.Generator) -> Sampler:
    def f(x: Any, n: int) -> Array:
        v = np.asarray(x, dtype=float)
        return np.cumsum(v + rng.laplace(0.0, 1.0 / EPS, (n, v.size)), axis=1)
    return f


SUBJECTS: tuple[Subject, ...] = (
    Subject("Laplace", _laplace(1.0 / EPS), EPS, True, None, dpsniper=(0.0968, 21.4)),
    Subject("LaplaceWrongScale", _laplace(0.8 / EPS), EPS, False),
    Subject("NoisyHist1", _noisy_hist(1.0 / EPS), EPS, True, 5, "l1", (0.0978, 37.7)),
    Subject("NoisyHist2", _noisy_hist(EPS), EPS, False, 5, "l1", (4.602, 40.6)),
    Subject("ReportNoisyMax1", _rnm("laplace", False), EPS, True, 5, dpsniper=(0.0923, 61.8)),
    Subject("ReportNoisyMax2", _rnm("exp", False), EPS, True, 5, dpsniper=(0.0975, 58.4)),
    Subject("ReportNoisyMax3", _rnm("laplace", True), EPS, False, 5, dpsniper=(0.2478, 62.4)),
    Subject("ReportNoisyMax4", _rnm("exp", True), EPS, False, 5, dpsniper=(0.3463, 62.9)),
    Subject("SVT1", _svt(1, t=0.5), EPS, True, 10, dpsniper=(0.0858, 126.0)),
    Subject("SVT2", _svt(2), EPS, True, 10, dpsniper=(0.0859, 159.9)),
    Subject("SVT3", _svt(3), EPS, False, 10, dpsniper=(0.1716, 160.3)),
    Subject("SVT4", _svt(4), EPS, False, 10, dpsniper=(0.1687, 130.5)),
    Subject("SVT5", _svt(5), EPS, False, 10, dpsniper=(1.761, 58.9)),
    Subject("SVT6", _svt(6), EPS, False, 10, dpsniper=(0.2720, 95.5)),
    Subject("Rappor", _rappor(0.75, 0.45, 0.55), 0.4, True, None, dpsniper=(0.2930, 144.8)),
    Subject("OneTimeRappor", _rappor(0.95, None, None), 0.8, True, None,
            dpsniper=(0.5978, 89.1)),
    Subject("PrefixSum", _prefix_sum, 1.0, True, 10, dpsniper=(0.5040, 97.0)),
)
"""The claims: ε = 0.1 for the report-noisy-max, histogram, SVT and Laplace subjects (DP-Sniper
audits them against 0.1); RAPPOR's analytic ε for these filters is 6·ln(0.5125/0.4875) ≈ 0.30
(claimed 0.4, a bound), one-time RAPPOR's 6·ln(0.525/0.475) ≈ 0.60 (claimed 0.8), and prefix sum
over 10 ℓ∞-neighbouring answers is 10·ε = 1.0-DP."""

BY_NAME = {s.name: s for s in SUBJECTS}


def rappor_pairs() -> list[tuple[int, int]]:
    return [(0, 1)]
