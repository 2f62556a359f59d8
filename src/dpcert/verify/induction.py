r"""All-sizes proofs: randomness alignment closed by an inductive loop invariant.

A program of the form ``pre; while (i < n [&& g]) { body; i := i + 1; } post; return ...`` is
proved ε-DP for *every* size n (LightDP, Zhang & Kifer POPL 2017; ShadowDP, Wang et al. PLDI
2019; CheckDP, Wang et al. CCS 2020).  Each block is executed once symbolically
(`dpcert.verify.relexec`) in two runs: run 1 on x with noise η, run 2 on the neighbour x'
with noise η + S, where the *shift* S of a sample is chosen per sampling site and per class of
run-1 paths (a constant, or the "exact" difference that makes a guard or an output of run 2
equal to run 1's).  A loop invariant Inv over the loop-head state of both runs is found by
Houdini (Flanagan & Leino 2001) among candidate facts (``x⟨2⟩ − x⟨1⟩ ∈ [a, b]``, ``count⟨1⟩ ≤ c``,
guarded by the phase ``i < p``/``i = p``/``i > p`` of a changed index or of the released
argmax), and z3 discharges, with n, i and p symbolic:

* base: ``pre`` establishes Inv;  step: Inv ∧ guard ∧ body ⇒ Inv', both runs take the guard
  alike and every list element appended is equal in both runs;
* cost: the aligned cost of an iteration is at most β times the increment of a counter v
  (``count``, ``i`` or the indicator ``[i > p]``), so ``cost ≤ α + β·v`` is invariant;
* exit: Inv ∧ ¬guard ∧ post ⇒ equal outputs and ``α + β·v + cost(post) ≤ claim``.

The argmax *prophecy*: when the output ``best`` is assigned only ``best := i``, the proof is
split by p = the last iteration that assigns it (run 1 must assign at i = p and not after),
which is a function of the output, so the pointwise rule applies class by class.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from dpcert.verify.alignment import Prover
from dpcert.verify.gaussian import gauss_cost_bound
from dpcert.verify.ir import Program
from dpcert.verify.loopshape import (
    LoopShape,
    adjacency_ranges,
    argmax_var,
    claim_poly,
    divides_by_size,
    loop_shape,
    public_poly,
)
from dpcert.verify.obligations import (
    Fail,
    NoCounter,
    Pair,
    aligned_pairs,
    argmax_class_empty,
    check_obligations,
    cost_bound,
    houdini,
)
from dpcert.verify.potential import potential_bound
from dpcert.verify.relexec import Unsupported
from dpcert.verify.slots import PHASE_TEXT, Search, Slot
from dpcert.verify.topgap import TopGapProof, prove_top_gap

if TYPE_CHECKING:
    from collections.abc import Iterator

    from z3 import ArithRef, BoolRef

__all__ = ["AllSizesProof", "claim_poly", "prove_all_sizes", "prove_free_gap"]

#: Largest sum of candidate ranks tried (0 = all shifts 0).
MAX_RANK = 6


@dataclass(frozen=True)
class AllSizesProof:
    """A checked all-sizes proof: the invariant, shifts and cost bound, as text."""

    text: str
    invariant: tuple[str, ...]
    shifts: tuple[str, ...]
    cost: str


def _search(se: Search
            ) -> tuple[dict[Slot, ArithRef], list[tuple[str, BoolRef]], str] | str:
    pv = se.pv
    if se.argmax is not None and not argmax_class_empty(se):
        return f"the argmax split needs every run to assign {se.argmax}"
    free = list(se.free)
    reason = "no alignment found"
    sizes = [len(se.free[f]) for f in free]
    first = tuple(1 for _ in free)  # every free slot at its most likely value, early
    # all 0, every slot at its first value, then that with one or two slots at 0 (the ⊥ class
    # of a sparse vector shifts nothing), then by increasing sum of ranks
    zeroed = [tuple(0 if k in ks else 1 for k in range(len(free)))
              for m in (1, 2) for ks in itertools.combinations(range(len(free)), m)]
    early = list(dict.fromkeys([tuple(0 for _ in free), first, *zeroed]))
    order = itertools.chain(early, (r for r in _by_rank_sum(sizes, MAX_RANK)
                                    if r not in set(early)))
    for ranks in order:
        if time.monotonic() > pv.deadline:
            raise TimeoutError
        assign = dict(se.forced)
        assign.update({f: se.free[f][r - 1] for f, r in zip(free, ranks, strict=True) if r})
        try:
            pairs = aligned_pairs(se, assign)
            inv = houdini(se, pairs)
            check_obligations(se, pairs, inv)
            cost = _cost_bound(se, pairs, inv)
        except Fail as e:
            reason = str(e)
            continue
        return assign, inv, cost
    return reason


def _cost_bound(se: Search, pairs: list[Pair], inv: list[tuple[str, BoolRef]]) -> str:
    """Gaussian: μ² by the counter rule; else one counter, failing that a potential."""
    if any(k == "gauss" for k, _b, _l in se.pv.site_info.values()):
        return gauss_cost_bound(se, pairs, inv)
    try:
        return cost_bound(se, pairs, inv)
    except NoCounter as e:
        return potential_bound(se, pairs, inv, e.alpha, e.mons, e.claim)


def _by_rank_sum(sizes: list[int], most: int) -> Iterator[tuple[int, ...]]:
    """Tuples r with 0 ≤ r_k ≤ sizes[k] (0: shift 0, j: the j-th value) by increasing sum."""
    def gen(k: int, left: int) -> Iterator[tuple[int, ...]]:
        if k == len(sizes):
            if left == 0:
                yield ()
            return
        for r in range(min(left, sizes[k]) + 1):
            for rest in gen(k + 1, left - r):
                yield (r, *rest)
    for t in range(most + 1):
        yield from gen(0, t)


def prove_free_gap(prog: Program, deadline: float) -> AllSizesProof | None:
    """The free-gap argmax rule alone (cheap): an all-sizes proof, or ``None``.

    Raises
    ------
    TimeoutError
        When ``deadline`` (a `time.monotonic` value) passes.
    """
    if not prog.size_names:
        return None
    try:
        sh = loop_shape(prog)
    except Unsupported:
        return None
    tg = prove_top_gap(prog, sh, deadline)
    return AllSizesProof(tg.text, tg.invariant, tg.shifts, tg.cost) \
        if isinstance(tg, TopGapProof) else None


def prove_all_sizes(prog: Program, deadline: float) -> AllSizesProof | str:
    """An inductive proof for every size, or the reason why none was found.

    Raises
    ------
    TimeoutError
        When ``deadline`` (a `time.monotonic` value) passes.
    """
    if not prog.size_names:
        return "the program has no input of unknown size"
    try:
        sh = loop_shape(prog)
    except Unsupported as e:
        return f"outside the all-sizes fragment: {e}"
    adj = prog.adjacency[prog.inputs[0].name]
    tg = prove_top_gap(prog, sh, deadline)  # a released argmax and its gap (free gap)
    if isinstance(tg, TopGapProof):
        return AllSizesProof(tg.text, tg.invariant, tg.shifts, tg.cost)
    if isinstance(tg, str):  # the rule applies (an argmax and its gap) but fails
        return tg
    argmax = argmax_var(prog, sh)
    kinds: list[str | None] = ["one"] if adj.mode == "one" else [None]
    if argmax is not None and adj.mode == "all":
        kinds.insert(0, "argmax")
    sections: list[str] = []
    invs: list[str] = []
    shifts: list[str] = []
    costs: list[str] = []
    for lo, hi in adjacency_ranges(adj.lo, adj.hi):
        reason = "no alignment found"
        for kind in kinds:
            try:
                pv = Prover(prog, sh, deadline)
                pv.run_blocks(lo, hi, kind)
                se = Search(pv, argmax if kind == "argmax" else None)
                res = _search(se)
            except Unsupported as e:
                return f"outside the all-sizes fragment: {e}"
            if isinstance(res, str):
                reason = res
                continue
            sec, inv_t, sh_t = _render_piece(se, lo, hi, kind, *res)
            sections.append(sec)
            invs += inv_t
            shifts += sh_t
            costs.append(res[2])
            break
        else:
            rng = f"[{lo}, {hi}]"
            return f"all sizes, adjacency piece Δ in {rng}: {reason}"
    text = _render(prog, sh, sections)
    return AllSizesProof(text, tuple(invs), tuple(shifts), "; ".join(costs))


# --------------------------------------------------------------------------------- rendering
def _minimal(se: Search, inv: list[tuple[str, BoolRef]]) -> list[str]:
    """The invariant without facts implied by the others (for display; the proof used all)."""
    keep = list(inv)
    for fact in sorted(inv, key=lambda f: (" ⇒ " in f[0], "·i" in f[0], len(f[0])), reverse=True):
        rest = [p for t, p in keep if t != fact[0]]
        try:
            if len(rest) < len(keep) and se.pv.valid(se.side + rest, fact[1]):
                keep = [f for f in keep if f[0] != fact[0]]
        except TimeoutError:
            break
    return [t for t, _ in keep]


def _render_piece(se: Search, lo: Fraction | None, hi: Fraction | None, kind: str | None,
                  assign: dict[Slot, ArithRef], inv: list[tuple[str, BoolRef]],
                  cost: str) -> tuple[str, list[str], list[str]]:
    pv = se.pv
    name = pv.inp.name
    rng = f"[{lo if lo is not None else '-∞'}, {hi if hi is not None else '∞'}]"
    head = {None: f"every Δ{name}[i] in {rng}",
            "one": f"only Δ{name}[p] ≠ 0, in {rng}, for a symbolic index p",
            "argmax": f"every Δ{name}[i] in {rng}; split by p = the last i that assigns "
                      f"{se.argmax} (run 1 assigns it at i = p and never after; p = -1 is empty)"}
    lines = [f"Piece of Adj: {head[kind]}."]
    sh_lines = []
    for slot in se.slots:
        blk, ph, ci, site = slot
        val = assign.get(slot)
        kind_s, pol, line = pv.site_info[site]
        where = {"pre": "before the loop", "post": "after the loop"}.get(
            blk, f"iteration, {PHASE_TEXT[ph]}")
        ncls = max(se.cmap[(blk, ph)]) + 1 if se.cmap[(blk, ph)] else 1
        cl = f", run-1 path class {ci + 1}/{ncls}" if ncls > 1 else ""
        how = "exact" if slot in se.forced else "chosen"
        s = "0" if val is None else str(se.z3.simplify(val))
        if val is not None and site in se.dead_sites and se.z3.is_app_of(val, se.z3.Z3_OP_ITE):
            s = (f"{se.z3.simplify(val.arg(1))} if the loop goes on (its guard holds after the "
                 "iteration), else 0: the sample is then dead")
        rule = {"lap": "Lap", "dlap": "DLap", "expo": "Expo", "gauss": "Gauss"}[kind_s]
        t = f"  {rule:<5} line {line} {kind_s}({pol}) [{where}{cl}]: η⟨2⟩ = η⟨1⟩ + {s}" + \
            (f"   ({how})" if val is not None else "")
        lines.append(t)
        sh_lines.append(t.strip())
    tight = _minimal(se, inv)
    lines.append("  While  loop invariant Inv (Houdini; base and step discharged by z3 with "
                 f"{pv.sh.size}, i{', p' if kind else ''} symbolic):")
    lines += [f"           {t}" for t in tight]
    tmpl = "" if ("potential" in cost or "μ²" in cost) else "  (α + β·counter, invariant)"
    lines.append(f"  Seq    aligned cost ≤ {cost}{tmpl}")
    lines.append("  Conseq at loop exit: outputs equal in both runs and cost ≤ claim   ✓")
    return "\n".join(lines), tight, sh_lines


def _render(prog: Program, sh: LoopShape, sections: list[str]) -> str:
    claim = str(public_poly(prog.claim, prog))
    delta = "0" if prog.claim_delta is None else str(public_poly(prog.claim_delta, prog))
    low = 1 if divides_by_size(prog) else 0  # s / n is undefined at n = 0
    name = prog.name
    lines = [f"Theorem. ⊢_({claim}, {delta}) {name} ~ {name} : Adj(x⟨1⟩, x⟨2⟩) ⇒ ={{out}}"
             "   [all sizes]",
             f"  i.e. {name} is ({claim}, {delta})-DP for every size {sh.size} ≥ {low} and every "
             "value of the public parameters.",
             "",
             f"Loop: while ({sh.counter} < {sh.size} ...) -- proved once for a symbolic "
             f"{sh.size} by induction on {sh.counter}",
             "(randomness alignment with loop invariants: LightDP, ShadowDP, CheckDP).",
             "Rules: Lap/DLap/Expo shift a sample (cost |shift|/b, expo max(shift, 0)/b;",
             "Gauss: μ² += shift²/σ², composed as GDP);",
             "While closes the loop with the invariant; Seq adds costs; Conseq compares",
             "with the claim; the pointwise rule (Barthe et al. LICS 2016) needs outputs",
             "equal in both runs, shifts chosen per class of run-1 paths that the output or",
             "the noise-free guards tell apart.", ""]
    lines += sections
    lines += ["", f"Conclusion: {name} is ({claim}, {delta})-differentially private for all "
              "sizes.  ∎"]
    return "\n".join(lines)
