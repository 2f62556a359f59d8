"""Concrete semantics for refutation: exact output probabilities of a run on a given input.

With the input and the public parameters fixed, each path of `dpcert.verify.symexec` is a
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
# Interval masses are computed from the nearer tail (``e^(-lo/b)·(1 − e^(−(hi−lo)/b))`` above
# the centre), never as a difference of two CDF values near 1: that difference loses every
# digit of a mass below 1e-16 and a few of one near 1e-12, enough to fake a loss above a tight
# claim (a class reached only deep in a tail, e.g. an output 2^k of a noisy k).
def _tail(kind: str, scale: float, x: Arr) -> Arr:
    """P(η > x) for x ≥ 0 (Laplace, exponential; 0-based)."""
    with np.errstate(over="ignore"):
        t = np.exp(-np.maximum(x, 0) / scale)
        return np.asarray(0.5 * t if kind == "lap" else t, dtype=np.float64)


def _pdf(nz: Noise, scale: float, x: Arr) -> Arr:
    if nz.kind == "lap":
        return np.asarray(np.exp(-np.abs(x) / scale) / (2 * scale), dtype=np.float64)
    return np.asarray(np.where(x < 0, 0.0, np.exp(-np.maximum(x, 0) / scale) / scale),
                      dtype=np.float64)


def _cont_interval(nz: Noise, scale: float, lo: Arr, hi: Arr) -> Arr:
    """P(lo < η ≤ hi) for Laplace or exponential noise, accurate in both tails."""
    with np.errstate(over="ignore", invalid="ignore"):
        if nz.kind != "lap":
            lo = np.maximum(lo, 0.0)
        width = np.maximum(hi - lo, 0.0)
        frac = -np.expm1(-width / scale)  # 1 − e^(−(hi − lo)/b)
        upper = _tail(nz.kind, scale, lo) * frac  # 0 ≤ lo: mass above lo, cut at hi
        lower = _tail(nz.kind, scale, -hi) * frac  # hi ≤ 0 (Laplace: symmetric)
        mid = 1 - _tail(nz.kind, scale, -lo) - _tail(nz.kind, scale, hi)
        if nz.kind != "lap":
            return np.asarray(np.where(hi <= lo, 0.0, upper), dtype=np.float64)
        out = np.where(lo >= 0, upper, np.where(hi <= 0, lower, mid))
        return np.asarray(np.where(hi <= lo, 0.0, np.maximum(out, 0.0)), dtype=np.float64)


def _dlap_interval(scale: float, lo: Arr, hi: Arr) -> Arr:
    """P(lo ≤ η ≤ hi) over the integers, P(j) ∝ exp(−|j|/scale), from the nearer tail."""
    p = math.exp(-1 / scale)
    norm = (1 - p) / (1 + p)
    with np.errstate(over="ignore", invalid="ignore"):
        count = np.maximum(hi - lo + 1, 0.0)
        frac = -np.expm1(count * math.log(p))  # 1 − p^count
        upper = norm * p ** np.maximum(lo, 0) / (1 - p) * frac  # 1 ≤ lo
        lower = norm * p ** np.maximum(-hi, 0) / (1 - p) * frac  # hi ≤ −1
        # lo ≤ 0 ≤ hi: 1 − P(η ≤ lo − 1) − P(η ≥ hi + 1)
        mid = 1 - norm * p ** np.maximum(1 - lo, 0) / (1 - p) \
            - norm * p ** np.maximum(hi + 1, 0) / (1 - p)
        out = np.where(lo >= 1, upper, np.where(hi <= -1, lower, mid))
        return np.asarray(np.where(hi >= lo, np.maximum(out, 0.0), 0.0), dtype=np.float64)


def _snap(x: Arr) -> Arr:
    """Values within 1e-9 (relative) of an integer, as that integer (float rounding)."""
    with np.errstate(invalid="ignore"):
        r = np.round(x)
        return np.asarray(np.where(np.abs(x - r) <= 1e-9 * (1 + np.abs(r)), r, x),
                          dtype=np.float64)


def _interval_prob(nz: Noise, scale: float, lo: Arr, lo_strict: npt.NDArray[np.bool_],
                   hi: Arr, hi_strict: npt.NDArray[np.bool_]) -> Arr:
    if nz.kind != "dlap":
        return _cont_interval(nz, scale, lo, hi)
    # integers j with lo (<|<=) j (<|<=) hi; bounds within rounding of an integer are one
    lo, hi = _snap(lo), _snap(hi)
    big = 1e9
    hi_i = np.where(hi_strict, np.ceil(hi) - 1, np.floor(hi))
    lo_i = np.where(lo_strict, np.floor(lo) + 1, np.ceil(lo))
    hi_i = np.clip(hi_i, -big, big)
    lo_i = np.clip(lo_i, -big, big)
    return _dlap_interval(scale, lo_i, hi_i)


def region_probability(u: Unrolled, cons: list[Lin], scales: Mapping[str, float]) -> float | None:
    """P(all constraints hold) under independent noise; ``None`` if not of hub shape."""
    # a continuous variable in an (in)equation: given the others it is one point, of
    # probability 0; equations over discrete noise only are kept, on the lattice
    for c in cons:
        if c.op == "==" and any(u.noises[k].continuous for k, _ in c.coef):
            return 0.0
    cons = [c for c in cons if c.op != "!=" or not any(u.noises[k].continuous for k, _ in c.coef)]
    used = sorted({k for c in cons for k, _ in c.coef})
    if not used:
        return 1.0
    hubs: list[str | None] = [None, *used]
    for h in hubs:
        if all(sum(1 for k, _ in c.coef if k != h) <= 1 for c in cons) and _at_most_one_gap(
                cons, h):
            return _integrate(u, cons, scales, h)
    return None


def _at_most_one_gap(cons: list[Lin], h: str | None) -> bool:
    """At most one ``!=`` per non-hub variable (its point is taken out of its interval)."""
    seen: set[str] = set()
    for c in cons:
        if c.op != "!=":
            continue
        others = [k for k, _ in c.coef if k != h]
        if others and others[0] in seen:
            return False
        seen.update(others)
    return True


def _integrate(u: Unrolled, cons: list[Lin], scales: Mapping[str, float], h: str | None) -> float:
    # bounds per non-hub variable: value = (alpha + beta*r), strict flag
    lows: dict[str, list[tuple[float, float, bool]]] = {}
    highs: dict[str, list[tuple[float, float, bool]]] = {}
    gaps: dict[str, tuple[float, float]] = {}  # η ≠ alpha + beta*r (discrete noise only)
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
        if c.op == "!=":
            gaps[k] = (alpha, beta)
            continue
        strict = c.op == "<"
        if c.op == "==":  # η = alpha + beta*r: both bounds, on the lattice
            lows.setdefault(k, []).append((alpha, beta, False))
        (highs if a > 0 or c.op == "==" else lows).setdefault(k, []).append((alpha, beta, strict))
    vars_ = sorted(set(lows) | set(highs) | set(gaps))

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
            pr = _interval_prob(u.noises[k], scales[k], lo, lo_s, hi, hi_s)
            if k in gaps:  # minus the excluded point's mass when it lies in the interval
                alpha, beta = gaps[k]
                v = _snap(alpha + beta * r)
                pt = _interval_prob(u.noises[k], scales[k], np.maximum(lo, v), lo_s & (v <= lo),
                                    np.minimum(hi, v), hi_s & (v >= hi))
                pr = np.maximum(pr - pt, 0.0)
            out = out * pr
        for c in hub_only:
            a = dict(c.coef)[h] if h is not None else 0.0
            v = a * r + c.const
            near = np.abs(v) <= 1e-9 * (1 + np.abs(c.const))
            out = out * {"<": v < 0, "<=": v <= 0, "==": near, "!=": ~near}[c.op]
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
