"""How good is the auditor's *choice* of pair and events, measured without estimation noise?

A bound from the auditor mixes two sources of variation: which (pair, event) the search hands to
the estimation, and the estimation's own sampling noise.  On Lyu, Su & Li's SVT Algorithm 1 (the
SVT1 row of ``bench_audit_dpsniper.py``: ε = 0.1, T = 0.5, c = 1, 10 queries) the output has
only 11 values (⊥ᵏ⊤ for k < 10, and ⊥¹⁰), whose exact probabilities are one-dimensional
integrals over the threshold noise ρ:

    P[⊥ᵏ⊤ | q] = ∫ f_ρ(r) · Π_{i<k} F_ν(T + r − q_i) · (1 − F_ν(T + r − q_k)) dr,

with ``F_ν`` the Laplace(4/ε) CDF (in closed form) and ``f_ρ`` the Laplace(2/ε) density, summed
on a fine grid.  So every event the auditor estimates has an exact ``(p, q)``, and its *value*
at the estimation's ``n`` draws per input is the bound it gives in expectation,
``ln(p/q) − z·√((1/p + 1/q)/n)`` (the Poissonized ratio bound's normal approximation, ``z`` at
the auditor's per-event level).  This script runs the auditor at the benchmark's budget and
prints, per seed, the value of the best event it chose, the value of the best event of any
pair (the oracle: the single output of largest ratio and the nested rays of each pair), and
the bound the audit actually returned.  It also prints how likely the oracle event alone is to
reach DP-Sniper's published 0.0858 at that ``n``.

    .venv/bin/python benchmarks/bench_audit_choice.py [--seeds 1 2 3] [--seconds 11.8]

The hooks wrap ``choose`` of :mod:`dpcert.audit.search.standard` and ``run_estimation`` of
:mod:`dpcert.audit.auditor` to see the chosen events; they change nothing the audit computes.
Use it to compare rules of the search on the same seeds (the search is clock-driven, so repeat
seeds: the spread between runs of one seed is part of the result).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

import dpcert as dp
import dpcert.audit.auditor as auditor_module
import dpcert.audit.search.standard as standard_module
from dpcert.audit import audit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_audit_dpsniper import subjects

EPS = 0.1
THRESHOLD = 0.5
RHO_SCALE = 2.0 / EPS          # Lyu et al. Alg. 1 with c = 1: ρ ~ Lap(2/ε), ν ~ Lap(4c/ε)
NU_SCALE = 4.0 / EPS
DPSNIPER = 0.0858
#: Events the auditor's union bound counts by default (``candidates`` 2 + ``ladder`` 4).
UNION = 6
Array = np.ndarray[Any, Any]


def _laplace_cdf(x: Array, b: float) -> Array:
    out: Array = np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0.0) / b),
                          1.0 - 0.5 * np.exp(-np.maximum(x, 0.0) / b))
    return out


def svt1_outputs(k: int) -> list[tuple[int, ...]]:
    """SVT Alg. 1's outputs on ``k`` queries as the test subject encodes them (1 = ⊤,
    0 = ⊥, −1 = after the abort): ⊥ⁱ⊤ for i < k, then ⊥ᵏ."""
    return [tuple([0] * i + [1] + [-1] * (k - i - 1)) for i in range(k)] + [tuple([0] * k)]


def svt1_probabilities(q: Array, grid: int = 600_001) -> dict[tuple[int, ...], float]:
    """Exact (to the grid's ~1e-9) output probabilities of SVT Alg. 1 on queries ``q``, keyed
    by the output row (1 = ⊤, 0 = ⊥, −1 = after the abort), as the test subject encodes it."""
    r = np.linspace(-40 * RHO_SCALE, 40 * RHO_SCALE, grid)
    dr = r[1] - r[0]
    f = np.exp(-np.abs(r) / RHO_SCALE) / (2 * RHO_SCALE) * dr
    keys = svt1_outputs(q.size)
    out: dict[tuple[int, ...], float] = {}
    survive = f.copy()              # density of ρ times P[every query so far below]
    for i in range(q.size):
        below = _laplace_cdf(THRESHOLD + r - q[i], NU_SCALE)
        out[keys[i]] = float(np.sum(survive * (1 - below)))
        survive *= below
    out[keys[-1]] = float(np.sum(survive))
    return out


class Exact:
    """Exact probabilities of every audited input, cached."""

    def __init__(self) -> None:
        self.cache: dict[tuple[float, ...], dict[tuple[int, ...], float]] = {}

    def __call__(self, x: Any) -> dict[tuple[int, ...], float]:
        key = tuple(float(v) for v in np.asarray(x, dtype=float).ravel())
        if key not in self.cache:
            self.cache[key] = svt1_probabilities(np.array(key))
        return self.cache[key]


def value(p: float, q: float, n: int, z: float) -> float:
    """The expected ratio bound of an event with probabilities ``p`` > ``q`` on ``n`` draws."""
    if p <= 0.0 or q <= 0.0 or p <= q:
        return -math.inf
    return math.log(p / q) - z * math.sqrt((1.0 / p + 1.0 / q) / n)


def oracle(pairs: list[tuple[Any, Any]], exact: Exact, n: int, z: float
           ) -> tuple[float, float, float]:
    """The best value over every pair's likelihood-ratio rays (both directions), with its
    ``p`` and ``q``."""
    best = (-math.inf, 0.0, 0.0)
    for x, xp in pairs:
        px, pxp = exact(x), exact(xp)
        a = np.array(list(px.values()))
        b = np.array([pxp[k] for k in px])
        for u, v in ((a, b), (b, a)):
            order = np.argsort(-(np.log(u) - np.log(v)))
            cu, cv = np.cumsum(u[order]), np.cumsum(v[order])
            for pu, pv in zip(cu, cv, strict=True):
                got = value(float(pu), float(pv), n, z)
                if got > best[0]:
                    best = (got, float(pu), float(pv))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="*", default=[1, 2, 3])
    ap.add_argument("--seconds", type=float, default=11.8,
                    help="the audit's budget (default: a tenth of DP-Sniper's 118 s)")
    ap.add_argument("--confidence", type=float, default=0.9)
    ap.add_argument("--workers", type=int, default=1,
                    help="processes drawing the estimation (worker w reseeds SFC64([seed, w]))")
    args = ap.parse_args()

    subject = next(s for s in subjects().SUBJECTS if s.name == "SVT1")
    seen: dict[str, Any] = {}
    choose, estimate = standard_module.choose, auditor_module.run_estimation

    def choose_hook(found: Any, k: int, ladder: int = 0) -> Any:
        seen["chosen"] = choose(found, k, ladder)
        return seen["chosen"]

    def estimate_hook(sampler: Any, pair_list: Any, chosen: Any, *rest: Any) -> Any:
        tally, n = estimate(sampler, pair_list, chosen, *rest)
        seen["pairs"], seen["n"], seen["enc"] = list(pair_list), n, rest[3]
        return tally, n

    standard_module.choose = choose_hook             # type: ignore[assignment]
    auditor_module.run_estimation = estimate_hook    # type: ignore[assignment]
    exact = Exact()
    rows = np.array(svt1_outputs(10), dtype=float)
    print("seed  chosen  oracle  audit   n/input  pairs chosen  P[oracle ≥ 0.0858]")
    chosen_values, oracle_values = [], []
    for seed in args.seeds:
        rng = np.random.Generator(np.random.SFC64(seed))
        f = subject.make(rng)

        def reseed(w: int, rng: Any = rng, seed: int = seed) -> None:
            rng.bit_generator.state = np.random.SFC64([seed, w]).state

        result = audit(f, subject.pairs, claimed=dp.PureDP(EPS), seconds=args.seconds,
                       confidence=args.confidence, input_size=subject.input_size,
                       adjacency=subject.adjacency, name="SVT1", seed=seed,
                       workers=args.workers, worker_init=reseed)
        n, chosen = int(seen["n"]), seen["chosen"]
        z = NormalDist().inv_cdf(1 - (1 - args.confidence) / UNION)
        encoded = seen["enc"].encode(rows, rows.shape[0])
        best = -math.inf
        for c in chosen:
            x, xp = seen["pairs"][c.pair]
            px, pxp = exact(x), exact(xp)
            inside = np.asarray(c.event.contains(encoded), dtype=bool)
            p = sum(px[tuple(int(v) for v in row)] for row in rows[inside])
            q = sum(pxp[tuple(int(v) for v in row)] for row in rows[inside])
            best = max(best, value(p, q, n, z) if c.forward else value(q, p, n, z))
        top, p, q = oracle(seen["pairs"], exact, n, z)
        sd = math.sqrt((1.0 / p + 1.0 / q) / n)
        reach = 1.0 - NormalDist().cdf((DPSNIPER - top) / sd)
        chosen_values.append(best)
        oracle_values.append(top)
        print(f"{seed:>4}  {best:.4f}  {top:.4f}  {result.epsilon_lower:.4f}  {n / 1e6:6.2f}M"
              f"  {sorted({c.pair for c in chosen})!s:12}  {reach:.2f}", flush=True)
    print(f"mean  {np.mean(chosen_values):.4f}  {np.mean(oracle_values):.4f}")


if __name__ == "__main__":
    main()
