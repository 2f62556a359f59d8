"""Neighbouring inputs as a finite union of boxes ("pieces") of input differences Δ = q' − q.

The declared adjacency is closed under swapping the two inputs (Δ ↦ −Δ), and split into convex
pieces; the verifier proves each piece separately (an alignment may differ between pieces).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

from dpcert.verify.linear import fmt_frac
from dpcert.verify.symexec import Unrolled

__all__ = ["Piece", "pieces"]

Bound = tuple[Fraction | None, Fraction | None]


@dataclass(frozen=True)
class Piece:
    """A box of differences: ``bounds[atom] = (lo, hi)``; atoms absent from it have Δ = 0."""

    bounds: tuple[tuple[str, Bound], ...]
    text: str

    def as_dict(self) -> dict[str, Bound]:
        """The bounds as a dict."""
        return dict(self.bounds)


def _rng(lo: Fraction | None, hi: Fraction | None) -> str:
    if lo is None and hi is None:
        return "any value"
    a = fmt_frac(lo) if lo is not None else "-∞"
    b = fmt_frac(hi) if hi is not None else "∞"
    return f"[{a}, {b}]"


def _input_pieces(u: Unrolled, name: str) -> list[Piece]:
    adj = u.program.adjacency[name]
    atoms = [a for a in u.data if u.data_info[a][0] == name]
    lo, hi = adj.lo, adj.hi
    ranges: list[Bound] = [(lo, hi)]
    if lo is not None and hi is not None and lo != -hi:
        ranges.append((-hi, -lo))
    out: list[Piece] = []
    for rlo, rhi in ranges:
        if adj.mode == "all":
            out.append(Piece(tuple((a, (rlo, rhi)) for a in atoms),
                             f"every Δ{name}[i] in {_rng(rlo, rhi)}"))
        else:
            out.extend(Piece(((a, (rlo, rhi)),), f"only Δ{a} ≠ 0, in {_rng(rlo, rhi)}")
                       for a in atoms)
    return out


def pieces(u: Unrolled) -> list[Piece]:
    """All pieces of the adjacency of ``u`` (the product over inputs)."""
    per_input = [_input_pieces(u, d.name) for d in u.program.inputs]
    out: list[Piece] = []
    for combo in itertools.product(*per_input):
        bounds = tuple(b for p in combo for b in p.bounds)
        out.append(Piece(bounds, "; ".join(p.text for p in combo)))
    return out
