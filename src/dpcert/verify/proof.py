"""Rendering a found alignment as a chain of apRHL rules (Gaboardi & Stoughton's notation)."""

from __future__ import annotations

from fractions import Fraction

from dpcert.verify.linear import LinForm, Monomial, PublicPoly, fmt_frac
from dpcert.verify.search import ClassProof
from dpcert.verify.symexec import Unrolled

__all__ = ["render_proof"]


def _mono(m: Monomial, c: Fraction) -> str:
    return str(PublicPoly({m: c})) if c != 0 else "0"


def _cost_text(u: Unrolled, k: str, s: LinForm) -> str:
    nz = u.noises[k]
    inv = nz.scale.reciprocal()
    ((m, r),) = inv.terms.items()
    unit = _mono(m, Fraction(1))
    if s.is_const():
        v = abs(s.const) if nz.kind != "expo" else max(s.const, Fraction(0))
        return f"{_mono(m, v * r)}"
    mag = "max(·, 0)" if nz.kind == "expo" else "|·|"
    return f"{mag} of the shift × {fmt_frac(r)}·{unit}"


def render_proof(u: Unrolled, proofs: list[ClassProof], n_paths: int) -> str:
    """The proof text: one apRHL derivation per (adjacency piece, output class)."""
    prog = u.program
    name = prog.name
    claim = str(u.claim)
    sized = bool(prog.size_names)
    lines = [
        f"Theorem. ⊢_({claim}, 0) {name} ~ {name} : Adj(x⟨1⟩, x⟨2⟩) ⇒ ={{out}}"
        + (f"   [bounded: n = {u.n}]" if sized else ""),
        f"  i.e. {name} is ({claim}, 0)-DP"
        + (f" for inputs of size n = {u.n}" if sized else "")
        + " and every value of the public parameters.",
        "",
        f"Program: {n_paths} execution path(s) after unrolling every loop (n = {u.n});",
        f"noise: {', '.join(f'{k} ~ {nz.describe()}' for k, nz in u.noises.items())}.",
        "Δa denotes a⟨2⟩ − a⟨1⟩ for a data atom a.",
        "",
        "Pointwise rule (Barthe, Gaboardi, Grégoire, Hsu, Strub, LICS 2016): it suffices, for",
        "every output class o (outputs that share their discrete part), to give an injective",
        "coupling of the noise under which out⟨1⟩ ∈ o ⇒ out⟨2⟩ = out⟨1⟩, at cost ≤ claim.",
    ]
    for pr in proofs:
        lines += ["", f"Piece of Adj: {pr.piece.text}.  Output class o = {pr.cls.label} "
                  f"({len(pr.cls.paths)} path(s))."]
        for k in sorted(pr.shifts, key=lambda s: (u.noises[s].line, s)):
            s = pr.shifts[k]
            nz = u.noises[k]
            rule = "Lap" if nz.kind == "lap" else ("DLap" if nz.kind == "dlap" else "Expo")
            if s.is_const() and s.const == 0:
                lines.append(f"  {rule:<6} {k} := {nz.describe()} ~ same  with shift 0   "
                             "(identity coupling, cost 0)")
            else:
                lines.append(f"  {rule:<6} {k} := {nz.describe()} ~ same  with "
                             f"{k}⟨2⟩ = {k}⟨1⟩ + ({s})   cost {_cost_text(u, k, s)}")
        lines.append("  Assign / Cond / While: guards and outputs are linear expressions;")
        lines.append("         z3 proved (over the rationals, every input pair of this piece,")
        lines.append("         every parameter and noise value, run-1 noisy comparisons strict)")
        lines.append("         that")
        lines.append(f"         each of the {len(pr.cls.paths)} run-1 path(s) of class "
                     f"{pr.cls.label} is mapped to a run-2 path")
        lines.append("         with the same output.")
        total = " + ".join(_mono(m, c) for m, c in sorted(pr.cost.items()) if c != 0) or "0"
        lines.append(f"  Seq    total cost (maximum over the piece): {total}")
        lines.append(f"  Conseq {total} ≤ {claim}   ✓")
    lines += ["", f"Conclusion: every class of every piece costs at most {claim}; by the",
              "pointwise rule the program is "
              f"({claim}, 0)-differentially private" + (f" for n = {u.n}" if sized else "")
              + ".  ∎"]
    return "\n".join(lines)
