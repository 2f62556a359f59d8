r"""Refuting (ε, δ) claims of Gaussian programs with a pair, an event and a proven enclosure.

Fragment (as `dpcert.verify.gaussian`): Gaussian noise only, one execution path, numeric
σ, ε and δ, every released value ``out_j = D_j(x) + a_j·η_j`` with its own sample
``η_j ~ N(0, σ_j²)`` (or a data-free constant).

For a neighbouring pair (x, x') let ``d_j = D_j(x) − D_j(x')``, ``u_j = |a_j|·σ_j`` and
``w_j = d_j/u_j²``.  The statistic ``T = Σ_j w_j·out_j`` is normal with variance
``μ² = Σ_j d_j²/u_j²`` under both inputs and means ``m`` (on x) and ``m − μ²`` (on x').  It is
the privacy-loss statistic, so the event ``S = {T ≥ t}`` with ``t = m' + ε + μ²/2`` is the
Neyman–Pearson optimal event at ε (Balle & Wang 2018, Thm. 8):

    P[M(x) ∈ S] − e^ε·P[M(x') ∈ S] = Φ(μ/2 − ε/μ) − e^ε·Φ(−μ/2 − ε/μ) = δ_μ(ε).

The pair is the vertex of the adjacency box (inside the input ranges) with the largest μ².
Both probabilities are enclosed with `dpcert._directed` (exact rationals), so a
reported violation ``P − e^ε·P' > δ`` is proven, not a float comparison.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

from dpcert._directed import Interval, exp_bounds, normal_cdf_interval, sqrt_bounds
from dpcert.verify.adjacency import pieces
from dpcert.verify.gaussian import gaussian_terms
from dpcert.verify.ir import Program
from dpcert.verify.linear import LinForm, fmt_frac
from dpcert.verify.loopshape import public_poly
from dpcert.verify.refute import Witness, param_values
from dpcert.verify.symexec import Unrolled, unroll

__all__ = ["GaussModel", "event_text", "gauss_model", "linear_event_probability", "optimal_event",
           "refute_gaussian"]

#: Most data atoms whose box of differences is enumerated vertex by vertex.
MAX_BOX_DIM = 12


class GaussModel:
    """A Gaussian program at one size: ``out_j = D_j + a_j·η_j`` (``D_j`` a data form)."""

    def __init__(self, u: Unrolled, terms: list[tuple[int, LinForm, Fraction, Fraction]],
                 eps: Fraction, delta: Fraction) -> None:
        self.u = u
        self.terms = terms  # (output index, data part D_j, coefficient a_j, sigma_j)
        self.eps, self.delta = eps, delta

    def means(self, data: dict[str, Fraction]) -> list[Fraction]:
        """``D_j`` at the input ``data``."""
        return [f.evaluate({a: data[a] for a in f.vars()}) for _, f, _, _ in self.terms]

    def sds(self) -> list[Fraction]:
        """``u_j = |a_j|·σ_j``."""
        return [abs(a) * s for _, _, a, s in self.terms]


def gauss_model(prog: Program, n: int) -> GaussModel | str:
    """The model of ``prog`` at size ``n``, or why it is outside the fragment."""
    u = unroll(prog, n)
    if prog.claim_delta is None:
        return "the claim has no δ: write `claim eps, delta;` for a Gaussian program"
    sizes = {s: Fraction(n) for s in prog.size_names}
    params = param_values(prog)
    eps = u.claim.evaluate(params)
    delta = public_poly(prog.claim_delta, prog).evaluate({**params, **sizes})
    if any(nz.kind != "gauss" for nz in u.noises.values()):
        return "Gaussian noise mixed with other noise is not refuted"
    if len(u.paths) != 1 or u.clamps:
        return "a Gaussian program that branches or clamps is not refuted"
    found = gaussian_terms(u)
    if isinstance(found, str):
        return found
    sig, gterms = found
    terms = [(j, data, c, sig[k]) for j, data, c, k in gterms]
    return GaussModel(u, terms, eps, delta)


def _pairs(m: GaussModel) -> list[tuple[dict[str, Fraction], dict[str, Fraction]]]:
    """Vertices of each adjacency piece, realised inside the declared input ranges."""
    u = m.u
    rng = {d.name: (d.lo, d.hi) for d in u.program.inputs}
    out = []
    for pc in pieces(u):
        box = pc.as_dict()
        atoms = sorted(box)
        if len(atoms) > MAX_BOX_DIM:
            continue
        ends = [[x for x in box[a] if x is not None] or [Fraction(1)] for a in atoms]
        for corner in itertools.product(*ends):
            x = {a: Fraction(0) for a in u.data}
            y = dict(x)
            for a, dlt in zip(atoms, corner, strict=True):
                lo, hi = rng[u.data_info[a][0]]
                lo_r = lo if lo is not None else (hi - 1 if hi is not None else Fraction(0))
                hi_r = hi if hi is not None else lo_r + max(abs(dlt), Fraction(1))
                dlt = max(min(dlt, hi_r - lo_r), lo_r - hi_r)
                x[a] = lo_r if dlt >= 0 else hi_r
                y[a] = x[a] + dlt
            out.append((x, y))
    return out


def linear_event_probability(m: GaussModel, data: dict[str, Fraction],
                             weights: tuple[tuple[int, Fraction], ...],
                             t: Fraction) -> Interval:
    """Proven enclosure of ``P[Σ w_j·out_j ≥ t]`` on input ``data``."""
    mean = dict(zip((j for j, _, _, _ in m.terms), m.means(data), strict=True))
    sd = dict(zip((j for j, _, _, _ in m.terms), m.sds(), strict=True))
    mu_t = sum((w * mean[j] for j, w in weights), Fraction(0))
    var = sum((w * w * sd[j] ** 2 for j, w in weights), Fraction(0))
    s_lo, s_hi = sqrt_bounds(var)
    num = mu_t - t  # P[T ≥ t] = Φ((mean − t)/sd)
    if s_lo <= 0:
        return (Fraction(1), Fraction(1)) if num >= 0 else (Fraction(0), Fraction(0))
    z_lo, z_hi = (num / s_hi, num / s_lo) if num >= 0 else (num / s_lo, num / s_hi)
    return normal_cdf_interval(z_lo, z_hi)


def event_text(weights: tuple[tuple[int, Fraction], ...], t: Fraction) -> str:
    if len(weights) == 1 and weights[0][1] == 1:
        return f"output #{weights[0][0]} ≥ {fmt_frac(t)}"
    lhs = " + ".join(("" if w == 1 else "−" if w == -1 else f"{fmt_frac(w)}·") + f"out[{j}]"
                     for j, w in weights)
    return f"{lhs} ≥ {fmt_frac(t)}"


def optimal_event(m: GaussModel, x: dict[str, Fraction], y: dict[str, Fraction],
                  shift: Fraction = Fraction(0)
                  ) -> tuple[tuple[tuple[int, Fraction], ...], Fraction, Fraction] | None:
    """Weights ``w``, threshold ``t`` (moved by ``shift``·μ) and μ² of the optimal event at ε."""
    dx, dy, sds = m.means(x), m.means(y), m.sds()
    d = [a - b for a, b in zip(dx, dy, strict=True)]
    mu2 = sum(((di / s) ** 2 for di, s in zip(d, sds, strict=True)), Fraction(0))
    if mu2 == 0:
        return None
    ws = [di / s**2 for di, s in zip(d, sds, strict=True)]
    # normalise: weights of the first non-zero output is ±1 (scale-free), so t is readable
    norm = next(abs(w) for w in ws if w != 0)
    weights = tuple((j, w / norm) for (j, _, _, _), w in zip(m.terms, ws, strict=True) if w != 0)
    at_y = {j: v for (j, _, _, _), v in zip(m.terms, dy, strict=True)}
    mean_y = sum((w * at_y[j] for j, w in weights), Fraction(0))
    mu_q = sqrt_bounds(mu2)[0]
    t = mean_y + (m.eps + mu2 / 2 + shift * mu_q) / norm
    return weights, t, mu2


def refute_gaussian(prog: Program, sizes: list[int]) -> tuple[Witness | None, str]:
    """A witness violating the (ε, δ) claim at the smallest of ``sizes``, or why none."""
    note = "every pair's optimal event satisfies the claim (δ_μ(ε) ≤ δ)"
    for n in sizes:
        m = gauss_model(prog, n)
        if isinstance(m, str):
            return None, m
        best: tuple[Fraction, Witness] | None = None
        for x, y in _pairs(m):
            for a, b in ((x, y), (y, x)):
                ev = optimal_event(m, a, b)
                if ev is None:
                    continue
                w = _witness(m, n, a, b, *ev[:2])
                if w is not None and w.delta_enclosure is not None and (
                        best is None or w.delta_enclosure[0] > best[0]):
                    best = (w.delta_enclosure[0], w)
        if best is not None:
            return best[1], "found"
    return None, note


def _witness(m: GaussModel, n: int, x: dict[str, Fraction], y: dict[str, Fraction],
             weights: tuple[tuple[int, Fraction], ...], t: Fraction) -> Witness | None:
    p = linear_event_probability(m, x, weights, t)
    q = linear_event_probability(m, y, weights, t)
    e_lo, e_hi = exp_bounds(m.eps)
    dl = (p[0] - e_hi * q[1], p[1] - e_lo * q[0])
    if dl[0] <= m.delta:
        return None
    # the event's ε at the claimed δ: ln((P − δ)/P') > ε, a lower bound from the enclosures
    loss = math.inf if q[1] == 0 else math.log((p[0] - m.delta) / q[1])
    u = m.u
    params = param_values(u.program)

    def vec(d: dict[str, Fraction]) -> dict[str, tuple[Fraction, ...]]:
        out: dict[str, list[Fraction]] = {}
        for a in u.data:
            out.setdefault(u.data_info[a][0], []).append(d[a])
        return {k: tuple(v) for k, v in out.items()}

    return Witness(n, params, vec(x), vec(y), event_text(weights, t), float(p[0]),
                   float(q[1]), loss, float(m.eps), claim_delta=m.delta, p_enclosure=p,
                   p_prime_enclosure=q, delta_enclosure=dl, event_lin=(weights, t))
