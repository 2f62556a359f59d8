"""Exact samplers for private selection, shared by the exponential-mechanism family.

All three draw with rational arithmetic only (no float ``exp`` weights):

* `exponential_index` — P(i) ∝ exp(−γᵢ) exactly, by rejection: pick ``i`` uniformly and
  accept with a ``Bernoulli(exp(−γᵢ))`` coin (Canonne, Kamath & Steinke 2020, Alg. 1).  With
  ``min γ = 0`` each trial accepts w.p. ``≥ 1/k``; trials are drawn in vectorised batches.
* `permute_and_flip_index` — McKenna & Sheldon (NeurIPS 2020): visit candidates in a
  uniformly random order and stop at the first whose ``Bernoulli(exp(−γᵢ))`` coin lands heads.
  The coins are independent of the order, so this equals: toss every coin, return a uniformly
  random head (the candidate with ``γ = 0`` always lands heads).
* `noisy_max_index` — report-noisy-max with discrete Laplace noise on integer scores,
  ties broken uniformly at random (``docs/proofs/exponential.md`` shows this is RNM with a
  continuous noise whose density ratio under integer shifts is that of the Laplace).

Run time depends on the scores (number of rejection trials; documented in the proof notes).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from dpcert._types import Array
from dpcert.samplers import bernoulli_exp, discrete_laplace, uniform_below

__all__ = [
    "exponential_index",
    "exponential_indices",
    "noisy_max_index",
    "noisy_max_indices",
    "permute_and_flip_index",
    "permute_and_flip_indices",
]


def _coins(gammas: list[Fraction], which: Array) -> Array:
    """Independent Bernoulli(exp(−γ_{which[j]})) coins, one per entry of ``which``."""
    groups: dict[Fraction, int] = {}
    gid = np.array([groups.setdefault(g, len(groups)) for g in gammas], dtype=np.int64)
    values = list(groups)
    gw = gid[np.asarray(which, dtype=np.int64)]
    order = np.argsort(gw, kind="stable")
    counts = np.bincount(gw, minlength=len(values))
    parts = [
        np.ones(int(c), dtype=np.bool_) if values[g] == 0 else
        np.asarray(bernoulli_exp(values[g], int(c)), dtype=np.bool_)
        for g, c in enumerate(counts.tolist()) if c
    ]
    out = np.empty(gw.size, dtype=np.bool_)
    out[order] = np.concatenate(parts) if parts else np.zeros(0, dtype=np.bool_)
    return out


def _uniform_among(mask: Array) -> Array:
    """Per row of a boolean matrix (each row has a True), the column of a uniformly random True."""
    counts = mask.sum(axis=1)
    pick = np.empty(mask.shape[0], dtype=np.int64)
    for v in np.unique(counts).tolist():
        rows = counts == v
        pick[rows] = uniform_below(int(v), int(rows.sum()))
    hit = (np.cumsum(mask, axis=1) == (pick + 1)[:, None]) & mask
    out: Array = hit.argmax(axis=1)
    return out


def exponential_indices(gammas: list[Fraction], n: int) -> Array:
    """``n`` independent draws of ``i`` w.p. ``exp(−γᵢ)/Σⱼ exp(−γⱼ)`` (requires ``min γ = 0``)."""
    k = len(gammas)
    out = np.empty(n, dtype=np.int64)
    pending = np.arange(n)
    t = max(4, min(max(64, 2 * k), (1 << 16) // max(n, 1)))
    while pending.size:
        p = pending.size
        idx = uniform_below(k, p * t).reshape(p, t)
        coins = _coins(gammas, idx.ravel()).reshape(p, t)
        done = coins.any(axis=1)
        first = coins.argmax(axis=1)
        out[pending[done]] = idx[done, first[done]]
        pending = pending[~done]
    return out


def exponential_index(gammas: list[Fraction]) -> int:
    """One draw of `exponential_indices`."""
    return int(exponential_indices(gammas, 1)[0])


def permute_and_flip_indices(gammas: list[Fraction], n: int) -> Array:
    """``n`` independent permute-and-flip draws: a uniform head among ``Bernoulli(e^{−γᵢ})``."""
    k = len(gammas)
    coins = _coins(gammas, np.tile(np.arange(k), n)).reshape(n, k)
    return _uniform_among(coins)


def permute_and_flip_index(gammas: list[Fraction]) -> int:
    """One draw of `permute_and_flip_indices`."""
    return int(permute_and_flip_indices(gammas, 1)[0])


def noisy_max_indices(scores: list[int], scale: Fraction, n: int) -> Array:
    """``n`` draws of argmax of ``scores + DLap(scale)``, ties broken uniformly at random."""
    k = len(scores)
    noise = np.asarray(discrete_laplace(scale, n * k)).reshape(n, k)
    big = max(abs(v) for v in scores) >= 1 << 61 or (noise.size and
                                                     int(np.abs(noise).max()) >= 1 << 61)
    base = np.array(scores, dtype=object if big else np.int64)
    noisy = (noise.astype(object) if big else noise) + base[None, :]
    best = noisy.max(axis=1)
    return _uniform_among(noisy == best[:, None])


def noisy_max_index(scores: list[int], scale: Fraction) -> int:
    """One draw of `noisy_max_indices`."""
    return int(noisy_max_indices(scores, scale, 1)[0])
