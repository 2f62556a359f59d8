r"""(ε, δ) proofs for programs with Gaussian noise, by aligning the samples with a shift.

Fragment: every sample is ``gauss(sigma)`` with a numeric σ, the program does not branch (one
path after unrolling), every released value is ``D_j(x) + a_j·η_j`` with its own sample (or a
data-free constant), and the claim ``claim eps, delta;`` is numeric.

Shifting η_j by s_j = −(D_j(x') − D_j(x))/a_j makes run 2 release exactly run 1's values, so the
outputs on x and x' are one post-processing of N(0, Σ) and N(s, Σ): a pair that is
μ-GDP with μ² = Σ_j s_j²/σ_j² (Dong, Roth & Su 2022), i.e. ρ = μ²/2 zCDP (a shift of size Δ
under N(0, σ²) costs ρ = Δ²/(2σ²)).  μ² is maximised over the adjacency (a convex quadratic on
a box: at a vertex), and the claim holds when the exact privacy profile of the Gaussian
δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018; rounded up by
`dpcert.accounting.gdp.gdp_delta`) is at most δ.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import TYPE_CHECKING

from dpcert.accounting.gdp import gdp_delta
from dpcert.verify.adjacency import pieces
from dpcert.verify.ir import Program
from dpcert.verify.linear import LinForm, fmt_frac
from dpcert.verify.symexec import Unrolled, unroll

if TYPE_CHECKING:
    from z3 import BoolRef

    from dpcert.verify.obligations import Pair, Sigma
    from dpcert.verify.relexec import RPath
    from dpcert.verify.slots import Search

__all__ = ["gauss_cost_bound", "has_gaussian", "prove_gaussian"]

#: Most data atoms whose box of differences is enumerated vertex by vertex.
MAX_BOX_DIM = 12


def has_gaussian(prog: Program) -> bool:
    """Whether the program samples ``gauss`` (at size 1)."""
    try:
        u = unroll(prog, 1)
    except Exception:  # a program that needs larger sizes: look at the text
        return "gauss(" in repr(prog.body)
    return any(nz.kind == "gauss" for nz in u.noises.values())


def _number(prog: Program, u: Unrolled, which: str) -> Fraction | str:
    from dpcert.verify.loopshape import public_poly

    e = prog.claim if which == "eps" else prog.claim_delta
    if e is None:
        return "the claim has no δ: write `claim eps, delta;` for a Gaussian program"
    p = public_poly(e, prog)
    if not p.is_const():
        return f"the claimed {which} must be a number for a Gaussian program (got {p})"
    del u
    return p.const_value()


def prove_gaussian(prog: Program, n: int) -> str | tuple[str, float]:
    """The proof text and μ for size ``n``, or the reason it is outside the fragment."""
    u = unroll(prog, n)
    eps, delta = _number(prog, u, "eps"), _number(prog, u, "delta")
    if isinstance(eps, str):
        return eps
    if isinstance(delta, str):
        return delta
    if any(nz.kind != "gauss" for nz in u.noises.values()):
        return "Gaussian noise mixed with other noise is not supported"
    if len(u.paths) != 1:
        return "a program with Gaussian noise must not branch (one execution path)"
    if u.clamps:
        return "clamp in a Gaussian program is not supported"
    found = gaussian_terms(u)
    if isinstance(found, str):
        return found
    sig, gterms = found
    terms = [(data, c, k) for _, data, c, k in gterms]
    mu2 = Fraction(0)
    worst = ""
    for pc in pieces(u):
        box = pc.as_dict()
        atoms = sorted(box)
        if len(atoms) > MAX_BOX_DIM or any(lo is None or hi is None for lo, hi in box.values()):
            return "the adjacency must bound every difference (and have few atoms)"
        ends: list[list[Fraction]] = []
        for a in atoms:
            lo, hi = box[a]
            assert lo is not None and hi is not None
            ends.append([lo, hi])
        for corner in itertools.product(*ends):
            d = dict(zip(atoms, corner, strict=True))
            m = sum((((f.evaluate({a: d.get(a, Fraction(0)) for a in f.vars()}) / c) ** 2)
                     / sig[k] ** 2 for f, c, k in terms), Fraction(0))
            if m > mu2:
                mu2 = m
                worst = pc.text
    mu = math.sqrt(mu2) * (1 + 1e-12)
    dl = gdp_delta(mu, float(eps))
    if dl > float(delta):
        return (f"the aligned Gaussian shift has μ = {mu:.6g}: δ(ε = {float(eps):.6g}) = "
                f"{dl:.6g} > claimed δ = {float(delta):.6g}")
    lines = [
        f"Theorem. {prog.name} is ({fmt_frac(eps)}, {float(delta):.6g})-DP"
        + (f" for inputs of size n = {n} (each size is checked)" if prog.size_names else "")
        + ".",
        "",
        "Gauss rule: a sample η ~ N(0, σ²) shifted by s costs ρ = s²/(2σ²) (zCDP); shifts",
        "that make run 2 release exactly run 1's values turn the pair of output distributions",
        "into one post-processing of N(0, Σ) and N(s, Σ) (μ-GDP, μ² = Σ s²/σ²).",
    ]
    for f, c, k in terms:
        s = LinForm({"Δ" + a: -w / c for a, w in f.terms.items()})
        lines.append(f"  Gauss  {k} ~ N(0, {fmt_frac(sig[k])}²): {k}⟨2⟩ = {k}⟨1⟩ + ({s})")
    lines += [
        f"  Seq    μ² = Σ s²/σ² ≤ {fmt_frac(mu2)} (maximum over the adjacency, at a vertex of "
        f"'{worst}'), i.e. ρ = {fmt_frac(mu2 / 2)}",
        f"  Conv   δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) (Balle & Wang 2018) at "
        f"ε = {fmt_frac(eps)}: {dl:.6g} ≤ {float(delta):.6g}   ✓",
    ]
    return "\n".join(lines), mu


def gauss_cost_bound(se: Search, pairs: list[Pair], inv: list[tuple[str, BoolRef]]) -> str:
    """All sizes, Gaussian noise: ``μ² = Σ s²/σ² ≤ α + β·v`` by induction, then δ_μ(ε) ≤ δ.

    Fragment: every sample is Gaussian with a numeric σ, branches test noise-free conditions
    only, no numeric variable carried around the loop holds noise, every shift is noise-free,
    the loop guard is ``i < n`` alone (a fixed number of iterations) and the claim is numeric.
    Then each run's path and state are functions of its input, so every shift s is a function
    of (x, x') alone: the
    released values on x' are those on x with the noise vector moved by a fixed s, a
    post-processing of N(0, Σ) against N(s, Σ), i.e. μ-GDP with μ² = Σ sⱼ²/σⱼ².  Each
    iteration adds at most β to μ² per increment of a counter ([i > p] for one changed element,
    else i), so at loop exit μ² ≤ α + β·max(v) + μ²(post).
    """
    from dpcert.verify.loopshape import public_poly
    from dpcert.verify.obligations import Fail, _maximize

    pv, z3 = se.pv, se.z3
    if any(k != "gauss" for k, _b, _l in pv.site_info.values()):
        raise Fail("Gaussian noise mixed with other noise")
    if pv.sh.guard_rest is not None:
        raise Fail("a program with Gaussian noise needs a loop `for i in 0 .. n` without a "
                   "further guard")
    for blk, _ph, p1s, p2s in se.blocks:
        for p in p1s + p2s:
            if any(c.noisy for c in p.cons):
                raise Fail("a program with Gaussian noise may branch on the data only (a "
                           "branch tests noise)")
            if blk != "post" and any(pv.names(p.env[v]) & pv.noise_vars
                                     for v in pv.numeric if v in p.env):
                raise Fail("a program with Gaussian noise must not keep noise in a variable "
                           "carried around the loop")
    for _blk, _ph, _p1, _p2, sig, _cons in pairs:
        if any(pv.names(val) & pv.noise_vars for _s, val in sig):
            raise Fail("a Gaussian shift depends on the noise")
    eps = public_poly(pv.prog.claim, pv.prog)
    assert pv.prog.claim_delta is not None  # Prover refuses gauss without it
    delta = public_poly(pv.prog.claim_delta, pv.prog)
    if not (eps.is_const() and delta.is_const()):
        raise Fail("a Gaussian program needs a numeric claim eps, delta")
    invp = [p for _, p in inv]

    def mu2(blk: str, p1: RPath, sig: Sigma, hyps: list[BoolRef]) -> Fraction:
        sv = {str(a): b for a, b in sig}
        tot = Fraction(0)
        for site in p1.samples:
            sgm = pv.site_info[site][1].const_value()
            s = sv[str(pv.S[(site, blk)])]
            tot += _maximize(se, hyps, z3.If(s >= 0, s, -s)) ** 2 / sgm ** 2
        return tot

    alpha = beta = post = Fraction(0)
    for blk, ph, p1, _p2, sig, _cons in pairs:
        if blk == "pre":
            alpha = max(alpha, mu2(blk, p1, sig, se.side + pv.strict(p1)))
        elif blk == "body":
            m = mu2(blk, p1, sig, se.hyps(blk, ph) + invp + pv.strict(p1))
            if pv.phase and ph != "eq" and m > 0:
                raise Fail("an iteration other than the changed one moves a Gaussian sample")
            beta = max(beta, m)
        else:
            post = max(post, mu2(blk, p1, sig, se.side + invp + [pv.exit1] + pv.strict(p1)))
    exit_h = se.side + invp + [pv.exit1]
    if pv.phase:
        name, top = "[i > p]", Fraction(1)
    else:
        name, top = "i", Fraction(0)
        if beta:
            try:
                top = _maximize(se, exit_h, z3.ToReal(pv.i1))
            except Fail:
                raise Fail(f"every iteration adds {fmt_frac(beta)} to μ², which grows with the "
                           "size: no fixed (ε, δ) holds for every size") from None
    total = alpha + beta * top + post
    mu = math.sqrt(total) * (1 + 1e-12)
    e, d = eps.const_value(), delta.const_value()
    dl = gdp_delta(mu, float(e))
    if dl > float(d):
        raise Fail(f"the aligned Gaussian shifts give μ² ≤ {fmt_frac(total)}: δ(ε = "
                   f"{float(e):.6g}) = {dl:.6g} > claimed δ = {float(d):.6g}")
    return (f"μ² = Σ s²/σ² ≤ {fmt_frac(alpha)} + {fmt_frac(beta)}·{name} + "
            f"{fmt_frac(post)} (after the loop) ≤ {fmt_frac(total)} at exit, i.e. "
            f"ρ = {fmt_frac(total / 2)} zCDP; Gauss → (ε, δ) by the exact profile "
            f"(Balle & Wang 2018): δ(ε = {fmt_frac(e)}) = {dl:.6g} ≤ {float(d):.6g}")


def gaussian_terms(u: Unrolled) -> tuple[dict[str, Fraction],
                                         list[tuple[int, LinForm, Fraction, str]]] | str:
    """σ of each sample and, per released value ``j`` of the single path, ``(j, data part,
    coefficient of its sample, sample)``; or why ``u`` is outside the fragment (a σ that is not a
    positive number, a value released without noise, two values sharing a sample)."""
    sig: dict[str, Fraction] = {}
    for k, nz in u.noises.items():
        if not nz.scale.is_const() or nz.scale.const_value() <= 0:
            return f"the standard deviation of {k} must be a positive number (got {nz.scale})"
        sig[k] = nz.scale.const_value()
    (path,) = u.paths
    used: set[str] = set()
    terms: list[tuple[int, LinForm, Fraction, str]] = []
    for j, v in enumerate(path.outputs):
        if isinstance(v, bool):
            continue
        ks = [k for k in v.vars() if k in u.noises]
        data = LinForm({a: c for a, c in v.terms.items() if a in u.data})
        if not ks:
            if data.terms:
                return "a released value depends on the data without noise"
            continue
        if len(ks) != 1 or ks[0] in used:
            return "each released value needs its own Gaussian sample"
        used.add(ks[0])
        terms.append((j, data, v.terms[ks[0]], ks[0]))
    return sig, terms
