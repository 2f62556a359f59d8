r"""Cost invariants with a potential: ``cost ≤ α + Φ(state) − Φ(state₀)``, Φ found by z3.

The simple template of `dpcert.verify.obligations.cost_bound` pays each iteration's
aligned cost from the increment of *one* counter.  Some programs need more: Lyu et al.'s
Algorithm 2 draws a fresh threshold after every positive answer *but the last* (the cost of a
positive answer depends on whether it ends the run), and SmartSum pays the block noise of the
changed record's block once, *later* than the record itself.  Here the aligned cost is bounded
by a potential

    Φ = Σₖ βₖ·tₖ,   tₖ ∈ { [i > p],  integer variables (counters),  indicators [a] of the
                           noise-free atoms a of the loop guard,  |x⟨2⟩ − x⟨1⟩| }

(amortised analysis, Tarjan 1985; the "potential" of a ghost cost variable as in LightDP's
typing with a symbolic budget, Zhang & Kifer POPL 2017) with coefficients βₖ (per parameter
monomial, any sign) that z3 solves for by counterexample-guided synthesis (CEGIS, Solar-Lezama
2006): a candidate β is checked against

* step: every aligned pair of iteration paths, under the invariant and the path constraints:
  ``cost(iteration) ≤ Φ(state') − Φ(state)``;
* exit: every pair of ``post`` paths, under the invariant and the loop exit:
  ``α + Φ(state) − Φ(state₀) + cost(post) ≤ claim``;

and each counterexample state adds one linear constraint on β.  When z3 finds the constraints
unsatisfiable there is no potential of this shape; a β that passes both checks is a proof, since
by induction on the iterations the aligned cost so far is at most ``α + Φ(state) − Φ(state₀)``.
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import TYPE_CHECKING, TypeAlias

from dpcert.verify.ir import BinOp, Expr
from dpcert.verify.linear import Monomial, PublicPoly, fmt_frac
from dpcert.verify.obligations import Fail, Pair, _coerce, _cost, _mapping, _maximize, _sub
from dpcert.verify.relexec import Carried, RPath, Value, as_number
from dpcert.verify.slots import Search, condition_text

if TYPE_CHECKING:
    from z3 import ArithRef, BoolRef, ModelRef, Optimize

__all__ = ["MAX_ROUNDS", "potential_bound"]

#: Most CEGIS rounds (candidate β checked) per parameter monomial.
MAX_ROUNDS = 60
#: Largest denominator of the rounded β tried before each CEGIS candidate.
SNAP_DENOMINATOR = 4

#: A potential term: (text, term over the loop-head state ⟨1⟩/⟨2⟩, value before the loop).
Term: TypeAlias = "tuple[str, ArithRef, Fraction]"
#: A step or exit check: (hypotheses, cost per monomial, the terms' changes or values).
Check: TypeAlias = "tuple[list[BoolRef], dict[Monomial, ArithRef], list[ArithRef]]"


class NoPotential(Fail):
    """No potential of the template's shape pays the aligned cost (the reason is the message)."""


def _terms(se: Search, pairs: list[Pair], invp: list[BoolRef]) -> list[Term]:
    """(text, term over the loop-head state ⟨1⟩/⟨2⟩, value before the first iteration)."""
    pv, z3 = se.pv, se.z3
    out: list[Term] = []
    if pv.phase:
        out.append(("[i > p]", z3.If(z3.And(pv.p >= 0, pv.i1 > pv.p), 1, 0), Fraction(0)))
    pre = [(p1, p2, sig) for blk, _ph, p1, p2, sig, _c in pairs if blk == "pre"]

    def init(t: ArithRef) -> Fraction | None:
        vals = set()
        for p1, p2, sig in pre:
            mp = [(pv.H1[v], _coerce(se, pv.H1[v], as_number(p1.env[v]))) for v in pv.numeric] + \
                 [(pv.H2[v], _coerce(se, pv.H2[v], as_number(_sub(se, p2.env[v], sig))))
                  for v in pv.numeric]
            vals.add(pv.numeral(z3.substitute(t, *mp)))
        return vals.pop() if len(vals) == 1 and None not in vals else None

    cands: list[tuple[str, ArithRef]] = []
    for v in pv.numeric:
        if pv.H1[v].sort() == z3.IntSort():
            cands.append((v if v != pv.sh.counter else "i", z3.ToReal(pv.H1[v])))
    env1: dict[str, Value] = {**pv.H1, **{v: Carried(v) for v in pv.lists}}
    ex = pv.executor("body", 1, pv.q1)
    for atom in _atoms(pv.sh.guard_rest):
        outs = [cs for cs, t in ex.cond(atom, RPath(env=dict(env1))) if t]
        if len(outs) == 1 and len(outs[0]) == 1 and not outs[0][0].noisy:
            c = outs[0][0].z3()
            cands.append((f"[{condition_text(atom)}]", z3.If(c, pv.val(1), pv.val(0))))
    for v in pv.numeric:
        if v != pv.sh.counter:
            d = z3.ToReal(pv.H2[v] - pv.H1[v]) if pv.H1[v].sort() == z3.IntSort() else \
                pv.H2[v] - pv.H1[v]
            if not _constant_under(se, invp, d):  # a fixed difference pays nothing
                cands.append((f"|{v}⟨2⟩ − {v}⟨1⟩|", z3.If(d >= 0, d, -d)))
    seen: set[str] = set()
    for text, t in cands:
        x = init(t)
        if x is not None and text not in seen:
            seen.add(text)
            out.append((text, t, x))
    return out


def _atoms(e: Expr | None) -> list[Expr]:
    """The comparisons of a conjunction."""
    if isinstance(e, BinOp) and e.op == "&&":
        return _atoms(e.left) + _atoms(e.right)
    return [e] if isinstance(e, BinOp) else []


def _constant_under(se: Search, invp: list[BoolRef], d: ArithRef) -> bool:
    """Whether the invariant fixes ``d`` (a difference of the runs) to one value."""
    s = se.pv.solver()
    s.add(*se.side, *invp)
    if s.check() != se.z3.sat:
        return True
    v = s.model().eval(d, model_completion=True)
    return se.pv.valid(se.side + invp, d == v)


def potential_bound(se: Search, pairs: list[Pair], inv: list[tuple[str, BoolRef]],
                    alpha: dict[Monomial, Fraction], mons: set[Monomial],
                    claim: dict[Monomial, ArithRef]) -> str:
    """The cost bound ``α + Σ βₖ·(tₖ − tₖ₀)`` per monomial, as text; `NoPotential`."""
    pv, z3 = se.pv, se.z3
    invp = [p for _, p in inv]
    terms = _terms(se, pairs, invp)
    steps: list[Check] = []
    for blk, ph, p1, p2, sig, cons in pairs:
        if blk != "body":
            continue
        hyps = se.hyps(blk, ph) + invp + cons
        mp = _mapping(se, p1, p2, sig, True)
        deltas = [z3.substitute(t, *mp) - t for _, t, _ in terms]
        cst = _cost(se, blk, p1, sig)
        for m, e in list(cst.items()):
            if str(pv.n) in pv.names(e):  # a weight with the size: bound by a constant
                cst[m] = pv.val(_maximize(se, se.hyps(blk, ph) + invp + pv.strict(p1), e))
        steps.append((hyps, cst, deltas))
    exits: list[Check] = []
    for blk, _ph, p1, _p2, sig, cons in pairs:
        if blk != "post":
            continue
        hyps = se.side + invp + [pv.exit1, pv.exit2, *cons]
        exits.append((hyps, _cost(se, blk, p1, sig), [t - pv.val(t0) for _, t, t0 in terms]))
    parts = []
    for m in sorted(mons):
        beta = _solve(se, m, terms, steps, exits, alpha.get(m, Fraction(0)), claim)
        a = alpha.get(m, Fraction(0))
        body = [fmt_frac(a)] + [
            f"{'+' if b > 0 else '−'} {fmt_frac(abs(b))}·{_rel(text, t0)}"
            for (text, _t, t0), b in zip(terms, beta, strict=True) if b != 0]
        mono = str(PublicPoly({m: Fraction(1)})) if m else "1"
        parts.append(f"({' '.join(body)})·{mono}")
    return " + ".join(parts) + "  (potential; β solved by z3)"


def _rel(text: str, t0: Fraction) -> str:
    return text if t0 == 0 else f"({text} − {fmt_frac(t0)})"


def _solve(se: Search, m: Monomial, terms: list[Term], steps: list[Check], exits: list[Check],
           a: Fraction, claim: dict[Monomial, ArithRef]) -> list[Fraction]:
    """β for one monomial by CEGIS; `NoPotential` when none exists."""
    pv, z3 = se.pv, se.z3
    B = [z3.Real(f"β!{k}") for k in range(len(terms))]
    # the smallest Σ|β| (an LP): keeps the candidates from wandering between rounds
    syn = z3.Optimize()
    syn.set("timeout", 5000)
    A = [z3.Real(f"|β|!{k}") for k in range(len(terms))]
    for b, ab in zip(B, A, strict=True):
        syn.add(ab >= b, ab >= -b)
    syn.minimize(z3.Sum([pv.val(0), *A]))
    for _ in range(MAX_ROUNDS):
        if time.monotonic() > pv.deadline:
            raise TimeoutError
        r = syn.check()
        if r != z3.sat:
            raise NoPotential("no potential of the template pays the aligned cost")
        mod = syn.model()
        beta = [pv.numeral(mod.eval(b, model_completion=True)) or Fraction(0) for b in B]
        # CEGIS cuts from points can approach a vertex of β's polytope only in the limit
        # (an unbounded direction such as i ≤ n): a nearby simple β is tried first
        snap = [b.limit_denominator(SNAP_DENOMINATOR) for b in beta]
        if snap != beta and _check(se, m, snap, steps, exits, a, claim, None):
            return snap
        if _check(se, m, beta, steps, exits, a, claim, (syn, B)):
            return beta
    raise NoPotential("the potential search did not converge")


def _check(se: Search, m: Monomial, beta: list[Fraction], steps: list[Check],
           exits: list[Check], a: Fraction, claim: dict[Monomial, ArithRef],
           cut: tuple[Optimize, list[ArithRef]] | None) -> bool:
    """Whether β passes every step and exit check; each failure adds a cut to ``cut``'s
    solver (when given; else the first failure ends the check)."""
    pv, z3 = se.pv, se.z3
    zero = pv.val(0)
    bv = [pv.val(b) for b in beta]
    ok = True
    for hyps, cst, deltas in steps:
        c = cst.get(m, zero)
        cex = _counterexample(se, hyps, c, z3.Sum([zero] + [b * d for b, d in zip(bv, deltas,
                                                                             strict=True)]))
        if cex is not None:
            if cut is None:
                return False
            ok = False
            syn, B = cut
            syn.add(cex.eval(c, model_completion=True) <= z3.Sum(
                [zero] + [b * cex.eval(d, model_completion=True)
                          for b, d in zip(B, deltas, strict=True)]))
    goal = claim.get(m, zero)
    for hyps, pc, rel in exits:
        c = pc.get(m, zero)
        cex = _counterexample(se, hyps, pv.val(a) + c + z3.Sum(
            [zero] + [b * d for b, d in zip(bv, rel, strict=True)]), goal)
        if cex is not None:
            if cut is None:
                return False
            ok = False
            syn, B = cut
            syn.add(pv.val(a) + z3.Sum([zero] + [
                b * cex.eval(d, model_completion=True) for b, d in zip(B, rel, strict=True)])
                + cex.eval(c, model_completion=True) <= cex.eval(goal, model_completion=True))
    return ok


def _counterexample(se: Search, hyps: list[BoolRef], lhs: ArithRef, rhs: ArithRef
                    ) -> ModelRef | None:
    """A model of hyps ∧ lhs > rhs, as violating as z3's optimiser finds (a vertex of the
    region, so that the cuts on β are finitely many), or None when lhs ≤ rhs is valid;
    NoPotential when z3 cannot tell."""
    z3 = se.z3
    s = se.pv.solver()
    s.add(*hyps, lhs > rhs)
    r = s.check()
    if r == z3.unsat:
        return None
    if r != z3.sat:
        raise NoPotential("z3 could not decide a potential step")
    opt = z3.Optimize()
    opt.set("timeout", 500)
    opt.add(*hyps, lhs > rhs)
    h = opt.maximize(lhs - rhs)
    if opt.check() == z3.sat and se.pv.numeral(opt.upper(h)) is not None:
        return opt.model()
    return s.model()
