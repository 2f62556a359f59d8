"""Concrete semantics for refutation: exact output probabilities of a run on a given input.

With the input and the public parameters fixed, each path of :mod:`dpcert.verify.symexec` is a
conjunction of linear constraints on the noise.  The probability of such a region is computed
when, for some *hub* noise variable h (or none), every constraint involves at most one noise
variable besides h: conditioned on h the other variables are independent and each must lie in an
interval, so

    P = ∫ f_h(r) · Π_k P(η_k ∈ [L_k(r), U_k(r)]) dr,

a one-dimensional integral of a piecewise smooth function, computed by Gauss–Legendre quadrature
between the kinks (relative error around 1e-13).  Regions that do not have this shape are
reported as not computable (``None``); nothing is sampled.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from dpcert.verify.linear import LinForm
from dpcert.verify.symexec import Constraint, Noise, Unrolled

__all__ = ["Lin", "concrete", "region_probability"]

Arr = npt.NDArray[np.float64]

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(64)


@dataclass(frozen=True)
class Lin:
    """``Σ a_k·η_k + c  op  0`` over noise only, with float coefficients."""

    coef: tuple[tuple[str, float], ...]
    const: float
    op: str


def concrete(u: Unrolled, form: LinForm, data: Mapping[str, Fraction],
             params: Mapping[str, Fraction]) -> tuple[dict[str, Fraction], Fraction]:
    """Substitute data, clamps and parameters: ``(noise coefficients, constant)``."""
    vals: dict[str, Fraction] = dict(data)
    vals.update(params)
    for name, cl in u.clamps.items():
        vals[name] = min(max(cl.arg.evaluate(vals), cl.lo), cl.hi)
    c = form.const
    coef: dict[str, Fraction] = {}
    for k, v in form.terms.items():
        if k in u.noises:
            coef[k] = v
        else:
            c += v * vals[k]
    return coef, c


def constraint_lin(u: Unrolled, con: Constraint, data: Mapping[str, Fraction],
                   params: Mapping[str, Fraction]) -> Lin | bool:
    """A path constraint at a concrete input: a noise constraint, or its truth value."""
    coef, c = concrete(u, con.form, data, params)
    if not coef:
        return {"<": c < 0, "<=": c <= 0, "==": c == 0, "!=": c != 0}[con.op]
    return Lin(tuple((k, float(v)) for k, v in sorted(coef.items())), float(c), con.op)


# ------------------------------------------------------------------------------- distributions
def _cdf(nz: Noise, scale: float, x: Arr) -> Arr:
    """P(η <= x) for continuous noise (vectorised)."""
    with np.errstate(over="ignore"):
        if nz.kind == "lap":
            return np.asarray(np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / scale),
                                       1 - 0.5 * np.exp(-np.maximum(x, 0) / scale)),
                              dtype=np.float64)
        return np.asarray(np.where(x < 0, 0.0, -np.expm1(-np.maximum(x, 0) / scale)),
                          dtype=np.float64)


def _pdf(nz: Noise, scale: float, x: Arr) -> Arr:
    if nz.kind == "lap":
        return np.asarray(np.exp(-np.abs(x) / scale) / (2 * scale), dtype=np.float64)
    return np.asarray(np.where(x < 0, 0.0, np.exp(-np.maximum(x, 0) / scale) / scale),
                      dtype=np.float64)


def _dlap_cdf(scale: float, k: Arr) -> Arr:
    """P(η <= k) for the discrete Laplace with P(j) ∝ exp(-|j|/scale), k integer."""
    p = math.exp(-1 / scale)
    norm = (1 - p) / (1 + p)
    left = norm * p ** np.abs(k) / (1 - p)  # P(η <= k) for k <= 0 ... sum_{j<=k} p^{-j}
    right = 1 - norm * p ** (np.abs(k) + 1) / (1 - p)
    return np.asarray(np.where(k <= 0, left, right), dtype=np.float64)


def _interval_prob(nz: Noise, scale: float, lo: Arr, lo_strict: Arr,
                   hi: Arr, hi_strict: Arr) -> Arr:
    if nz.kind != "dlap":
        return np.maximum(_cdf(nz, scale, hi) - _cdf(nz, scale, lo), 0.0)
    # integers j with lo (<|<=) j (<|<=) hi
    big = 1e9
    hi_i = np.where(hi_strict, np.ceil(hi) - 1, np.floor(hi))
    lo_i = np.where(lo_strict, np.floor(lo) + 1, np.ceil(lo))
    hi_i = np.clip(hi_i, -big, big)
    lo_i = np.clip(lo_i, -big, big)
    res = _dlap_cdf(scale, hi_i) - _dlap_cdf(scale, lo_i - 1)
    return np.asarray(np.where(hi_i >= lo_i, np.maximum(res, 0.0), 0.0), dtype=np.float64)


def region_probability(u: Unrolled, cons: list[Lin], scales: Mapping[str, float]) -> float | None:
    """P(all constraints hold) under independent noise; ``None`` if not of hub shape."""
    for c in cons:
        if c.op == "==" and all(u.noises[k].continuous for k, _ in c.coef):
            return 0.0
    cons = [c for c in cons if c.op != "!=" or not all(u.noises[k].continuous for k, _ in c.coef)]
    if any(c.op in {"==", "!="} for c in cons):
        return None
    used = sorted({k for c in cons for k, _ in c.coef})
    if not used:
        return 1.0
    hubs: list[str | None] = [None, *used]
    for h in hubs:
        if all(sum(1 for k, _ in c.coef if k != h) <= 1 for c in cons):
            return _integrate(u, cons, scales, h)
    return None


def _integrate(u: Unrolled, cons: list[Lin], scales: Mapping[str, float], h: str | None) -> float:
    # bounds per non-hub variable: value = (alpha + beta*r), strict flag
    lows: dict[str, list[tuple[float, float, bool]]] = {}
    highs: dict[str, list[tuple[float, float, bool]]] = {}
    hub_only: list[Lin] = []
    for c in cons:
        others = [(k, a) for k, a in c.coef if k != h]
        if not others:
            hub_only.append(c)
            continue
        (k, a), = others
        ah = dict(c.coef).get(h, 0.0) if h is not None else 0.0
        # a*η + ah*r + const op 0  ->  η op' -(ah*r + const)/a
        alpha, beta = -c.const / a, -ah / a
        strict = c.op == "<"
        (highs if a > 0 else lows).setdefault(k, []).append((alpha, beta, strict))
    vars_ = sorted(set(lows) | set(highs))

    def inner(r: Arr) -> Arr:
        out = np.ones_like(r)
        for k in vars_:
            lo = np.full_like(r, -np.inf)
            lo_s = np.zeros(r.shape, dtype=bool)
            hi = np.full_like(r, np.inf)
            hi_s = np.zeros(r.shape, dtype=bool)
            for alpha, beta, strict in lows.get(k, []):
                v = alpha + beta * r
                lo_s = np.where(v > lo, strict, np.where(v == lo, lo_s | strict, lo_s))
                lo = np.maximum(lo, v)
            for alpha, beta, strict in highs.get(k, []):
                v = alpha + beta * r
                hi_s = np.where(v < hi, strict, np.where(v == hi, hi_s | strict, hi_s))
                hi = np.minimum(hi, v)
            out = out * _interval_prob(u.noises[k], scales[k], lo, lo_s, hi, hi_s)
        for c in hub_only:
            a = dict(c.coef)[h] if h is not None else 0.0
            v = a * r + c.const
            out = out * ((v < 0) if c.op == "<" else (v <= 0))
        return out

    if h is None:
        return float(inner(np.zeros(1))[0])
    nz, b = u.noises[h], scales[h]
    if nz.kind == "dlap":
        span = 80 * b + 50
        pts = [0.0]
        for lst in (*lows.values(), *highs.values()):
            for alpha, beta, _ in lst:
                if beta != 0:
                    pts.append(-alpha / beta)
        lo_r, hi_r = math.floor(min(pts) - span), math.ceil(max(pts) + span)
        r = np.arange(lo_r, hi_r + 1, dtype=float)
        p = (1 - math.exp(-1 / b)) / (1 + math.exp(-1 / b)) * np.exp(-np.abs(r) / b)
        return float(np.sum(p * inner(r)))
    # kinks: where bounds of the same variable cross, where a bound is 0, and r = 0
    bps = {0.0}
    for k in vars_:
        lst = lows.get(k, []) + highs.get(k, [])
        for i, (a1, b1, _) in enumerate(lst):
            if b1 != 0:
                bps.add(-a1 / b1)
            for a2, b2, _ in lst[i + 1:]:
                if b1 != b2:
                    bps.add((a2 - a1) / (b1 - b2))
    for c in hub_only:
        bps.add(-c.const / dict(c.coef)[h])
    pts = sorted(bps)
    tail = 60 * b
    grid = [pts[0] - tail, *pts, pts[-1] + tail]
    edges: list[float] = []
    for x0, x1 in itertools.pairwise(grid):
        m = max(1, math.ceil((x1 - x0) / (4 * b)))
        edges.extend(np.linspace(x0, x1, m + 1)[:-1].tolist())
    edges.append(grid[-1])
    e = np.asarray(edges)
    mid, half = (e[:-1] + e[1:]) / 2, (e[1:] - e[:-1]) / 2
    r = (mid[:, None] + half[:, None] * _NODES[None, :]).ravel()
    w = (half[:, None] * _WEIGHTS[None, :]).ravel()
    return float(np.sum(w * _pdf(nz, b, r) * inner(r)))
