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
:func:`dpcert.accounting.gdp.gdp_delta`) is at most δ.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

from dpcert.accounting.gdp import gdp_delta
from dpcert.verify.adjacency import pieces
from dpcert.verify.ir import Program
from dpcert.verify.linear import LinForm, fmt_frac
from dpcert.verify.symexec import Unrolled, unroll

__all__ = ["has_gaussian", "prove_gaussian"]

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
    sig: dict[str, Fraction] = {}
    for k, nz in u.noises.items():
        if not nz.scale.is_const() or nz.scale.const_value() <= 0:
            return f"the standard deviation of {k} must be a positive number (got {nz.scale})"
        sig[k] = nz.scale.const_value()
    (path,) = u.paths
    used: set[str] = set()
    terms: list[tuple[LinForm, Fraction, str]] = []  # (data part, coefficient, sample)
    for v in path.outputs:
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
        terms.append((data, v.terms[ks[0]], ks[0]))
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
