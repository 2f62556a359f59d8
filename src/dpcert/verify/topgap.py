r"""All-sizes rule for a released argmax *and its gap* to the runner-up (free-gap noisy max).

Report-noisy-max with gap (Ding, Wang, Zhang & Kifer, "Free gap information from the
differentially private sparse vector and noisy max mechanisms", VLDB 2019, Alg. 2) releases
the index w of the largest noisy answer vⱼ = qⱼ + ηⱼ and the gap g = v_w − M to the runner-up
M = max_{j≠w} vⱼ.  Its alignment shifts the winner's noise by (q_w − q'_w) + (M' − M), with
M' = max_{j≠w} (q'ⱼ + ηⱼ) computed from *all other* samples, later ones included, so it is
outside the per-iteration shifts of `dpcert.verify.induction` (past samples plus one
prophecy index).  This module proves such programs for every size n with a rule of its own:

1. **Simulation invariant** (checked by z3, one iteration with the loop-head state symbolic):
   the loop body updates the state variables (B, T, U) exactly as the abstract top-two update
   ``top2`` on the iteration's noisy value v = q[i] + η + c, so by induction on i, after
   i ≥ 2 iterations B = argmax, T = max and U = second largest of v₀..v_{i−1} (after one: B =
   0, T = v₀, U = a constant u₀).  Ties have probability 0 (v has fresh continuous noise).
2. **Post**: the program returns B and ±(T − U) + c (a post-processing of (w, g)).
3. **Prophecy value** D = M' − M: a function of the non-winners' samples only.  Ghost maxima
   m⟨1⟩ of the processed non-winners' v and m⟨2⟩ of their v + Δ obey the inductive invariant
   m⟨2⟩ − m⟨1⟩ ∈ [lo, hi] (z3: base and step), so D ∈ [lo, hi] for the adjacency Δ ∈ [lo, hi].
4. **Alignment**: non-winners unshifted, the winner's sample η_w ↦ η_w − Δ_w + D.  The map is a
   translation of one coordinate by an amount depending on the others (a bijection with unit
   Jacobian); z3 checks that run 2 then has the same argmax and the same gap (exit condition).
5. **Cost**: |−Δ_w + D|/b ≤ (hi − lo)/b (n = 1: |Δ₀|/b), compared with the claim.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from types import ModuleType
from typing import TYPE_CHECKING

from dpcert.verify.alignment import Prover
from dpcert.verify.ir import Program
from dpcert.verify.linear import PublicPoly
from dpcert.verify.loopshape import LoopShape, argmax_var
from dpcert.verify.relexec import RPath, Unsupported

if TYPE_CHECKING:
    from z3 import ArithRef, BoolRef

__all__ = ["TopGapProof", "prove_top_gap"]


@dataclass(frozen=True)
class TopGapProof:
    """A checked free-gap argmax proof: its text, invariants, shift and cost bound."""

    text: str
    invariant: tuple[str, ...]
    shifts: tuple[str, ...]
    cost: str


class _NotApplicable(Exception):
    pass


def _poly_z3(pv: Prover, poly: PublicPoly) -> ArithRef:
    tot = pv.val(0)
    for m, c in poly.terms.items():
        t = pv.val(c)
        for name, k in m:
            x = pv.n if name == pv.sh.size else pv.params[name]
            for _ in range(abs(k)):
                t = t * x if k > 0 else t / x
        tot = tot + t
    return tot


def _state_roles(pv: Prover, argmax: str) -> tuple[str, str, int, Fraction]:
    """(T, U, sign, offset) with the returned values B and sign·(T − U) + offset."""
    z3 = pv.z3
    post = pv.post1[0]
    if len(pv.post1) != 1 or post.samples or post.ret is None:
        raise _NotApplicable("the code after the loop must be one noise-free path")
    nums = [v for v in pv.numeric if v not in (argmax, pv.sh.counter)]
    found: tuple[str, str, int, Fraction] | None = None
    has_b = False
    for r in post.ret:
        if isinstance(r, bool) or not z3.is_expr(r):
            raise _NotApplicable("a returned value is not a number")
        if z3.eq(z3.simplify(r - pv.H1[argmax]), z3.IntVal(0)) or \
                pv.numeral(r - pv.H1[argmax]) == 0:
            has_b = True
            continue
        hits = [(t, u, sg, off) for sg in (1, -1) for t in nums for u in nums if t != u
                for off in [pv.numeral(r - sg * (pv.H1[t] - pv.H1[u]))] if off is not None]
        hit = hits[0] if hits else None
        if hit is None or (found is not None and found[:2] != hit[:2]):
            raise _NotApplicable("a returned value is not the argmax or ±(T − U) + c")
        found = hit
    if found is None or not has_b:
        raise _NotApplicable("the program does not release an argmax and a gap")
    return found


def _like(z3: ModuleType, target: ArithRef, x: ArithRef) -> ArithRef:
    """``x`` with the sort of ``target`` (an integer state variable's start value)."""
    if target.sort() == z3.IntSort() and x.sort() != z3.IntSort():
        return z3.ToInt(x)
    return x


def _check(pv: Prover, hyps: list[BoolRef], goal: BoolRef, what: str) -> None:
    if not pv.valid(hyps, goal):
        raise _NotApplicable(what)


def _simulation(pv: Prover, b: str, t: str, u: str) -> tuple[ArithRef, ArithRef, Fraction, str]:
    """Check that the body is the top-two update; return (v, η, u₀, site)."""
    z3 = pv.z3
    paths: list[RPath] = pv.body1["all"]
    sites = {tuple(p.samples) for p in paths}
    if len(sites) != 1 or len(next(iter(sites))) != 1:
        raise _NotApplicable("every iteration must draw exactly one sample, at one site")
    site = next(iter(sites))[0]
    kind = pv.site_info[site][0]
    if kind != "lap":
        raise _NotApplicable(f"the rule needs Laplace noise, not {kind}")
    eta = pv.eta[(site, "body")]
    i, B, T, U = pv.i1, pv.H1[b], pv.H1[t], pv.H1[u]
    new = [p for p in paths if z3.eq(z3.simplify(p.env[b] - i), z3.IntVal(0))
           or pv.numeral(p.env[b] - i) == 0]
    if not new:
        raise _NotApplicable(f"no path assigns {b} := {pv.sh.counter}")
    v = new[0].env[t]
    rest = z3.simplify(v - pv.q1 - eta)
    if pv.names(rest) - set(pv.params):
        raise _NotApplicable("the new maximum is not q[i] + noise + a public constant")
    pre = pv.pre1[0]
    if len(pv.pre1) != 1 or pre.samples or pv.numeral(pre.env[pv.sh.counter]) != 0:
        raise _NotApplicable("the code before the loop must be one noise-free path, i = 0")
    init = [pv.H1[k] == pre.env[k] for k in pv.numeric if k != pv.sh.counter]
    for k in (b, t, u):
        if pv.numeral(pre.env[k]) is None:
            raise _NotApplicable(f"{k} must start at a constant")
    subst = [(pv.H1[k], _like(z3, pv.H1[k], pre.env[k]))
             for k in pv.numeric if k != pv.sh.counter]
    side = [pv.n >= 1, i < pv.n, *pv.side(None, None)[1:]]
    # i = 0: (B, T, U) := (0, v, u0) with u0 a constant
    u0: Fraction | None = None
    for p in paths:
        h = side + init + [i == 0] + pv.strict(p)
        if pv.check(*h) == "unsat":
            continue
        c = pv.numeral(z3.simplify(z3.substitute(p.env[u], *subst)))
        if c is None or (u0 is not None and c != u0):
            raise _NotApplicable(f"after the first iteration {u} is not one constant")
        u0 = c
        _check(pv, h, z3.And(p.env[b] == 0, p.env[t] == v), "the first iteration is not "
               f"({b}, {t}) := (i, v)")
    if u0 is None:
        raise _NotApplicable("no feasible first iteration")
    # i >= 1: the top-two update (T, U, B) on v; ties have probability 0
    for p in paths:
        e = p.env
        pc = pv.strict(p)
        for first in (True, False):
            h = side + pc + ([i == 1, B == 0, pv.val(u0) == U] if first else [i >= 2, U <= T])
            _check(pv, [*h, v > T], z3.And(e[b] == i, e[t] == v, e[u] == T),
                   f"a new maximum does not set ({b}, {t}, {u}) := (i, v, {t})")
            _check(pv, h + [v < T] + ([] if first else [v > U]),
                   z3.And(e[b] == B, e[t] == T, e[u] == v),
                   f"a new runner-up does not set {u} := v")
            if not first:
                _check(pv, [*h, v < U], z3.And(e[b] == B, e[t] == T, e[u] == U),
                       "a smaller value changes the state")
    return v, eta, u0, site


def prove_top_gap(prog: Program, sh: LoopShape, deadline: float) -> TopGapProof | str | None:
    """The free-gap argmax proof, a reason why it failed, or ``None`` when it does not apply.

    Parameters
    ----------
    prog, sh
        The program and its loop shape (`dpcert.verify.loopshape.loop_shape`).
    deadline
        A `time.monotonic` value.

    Returns
    -------
    TopGapProof | str | None
        The checked proof; the reason when the program releases an argmax and a gap but a
        check fails (e.g. the cost exceeds the claim); ``None`` when the rule does not apply.

    Raises
    ------
    TimeoutError
        When ``deadline`` passes.

    Examples
    --------
    >>> import time
    >>> from dpcert.verify import parse_program
    >>> from dpcert.verify.loopshape import loop_shape
    >>> src = ("input q : real[n]; adjacent q : all in [-1, 1]; param eps > 0; claim eps;"
    ...        " best := 0; bq := 0; sq := 0; for i in 0 .. n { x := q[i] + lap(2 / eps);"
    ...        " if (i == 0 || x > bq) { sq := bq; best := i; bq := x; }"
    ...        " else { if (i == 1 || x > sq) { sq := x; } } } return best, bq - sq;")
    >>> prog = parse_program(src)
    >>> prove_top_gap(prog, loop_shape(prog), time.monotonic() + 60).cost
    'eps'
    >>> bad = parse_program(src.replace("lap(2 / eps)", "lap(1 / eps)"))
    >>> prove_top_gap(bad, loop_shape(bad), time.monotonic() + 60)
    'free-gap argmax: the aligned cost 2·eps (shift ≤ 2) may exceed the claim eps'
    """
    argmax = argmax_var(prog, sh)
    adj = prog.adjacency[prog.inputs[0].name]
    if argmax is None or sh.guard_rest is not None or adj.lo is None or adj.hi is None:
        return None
    lo, hi = adj.lo, adj.hi
    if adj.mode == "one":  # the other elements do not move
        lo, hi = min(lo, Fraction(0)), max(hi, Fraction(0))
    if time.monotonic() > deadline:
        raise TimeoutError
    try:
        pv = Prover(prog, sh, deadline)
        pv.run_blocks(lo, hi, None)
        if pv.lists:
            return None
        t, u, sg, _off = _state_roles(pv, argmax)
        v, _eta, u0, site = _simulation(pv, argmax, t, u)
    except (_NotApplicable, Unsupported):
        return None
    z3 = pv.z3
    # ghost maxima of the non-winners: m2 - m1 in [lo, hi] is inductive
    m1, m2, x, d = z3.Reals("m⟨1⟩ m⟨2⟩ v Δ")
    rng = [d >= pv.val(lo), d <= pv.val(hi)]
    inv = z3.And(m2 - m1 >= pv.val(lo), m2 - m1 <= pv.val(hi))
    step = z3.substitute(inv, (m1, z3.If(x > m1, x, m1)), (m2, z3.If(x + d > m2, x + d, m2)))
    base = z3.substitute(inv, (m1, x), (m2, x + d))
    if not (pv.valid(rng, base) and pv.valid([*rng, inv], step)):
        return "free-gap argmax: the ghost maxima's invariant does not hold"
    # exit: run 2 (non-winners v + Δ, winner v_w − Δ_w + D + Δ_w) has the same argmax and gap
    tw, mm, mp, dd = (z3.Real(x) for x in ("T⟨1⟩", "M", "M'", "D"))
    t2 = tw + dd
    hyp = [tw > mm, dd == mp - mm]
    if not pv.valid(hyp, z3.And(t2 > mp, t2 - mp == tw - mm)):
        return "free-gap argmax: the aligned run does not keep the winner and the gap"
    # cost: |−Δ_w + D| ≤ hi − lo (n ≥ 2), |Δ_0| (n = 1), per unit of 1/b
    # (with `one` adjacency either the winner moves and D = 0, or it does not: |shift| ≤ |Δ|)
    smax = max(abs(lo), abs(hi)) if adj.mode == "one" else max(hi - lo, abs(lo), abs(hi))
    weight = pv.site_info[site][1].reciprocal()
    cost = PublicPoly.const(smax) * weight
    gap = pv.claim - cost
    if not (all(c >= 0 for c in gap.terms.values())
            or pv.valid(pv.side(None, None), _poly_z3(pv, cost) <= _poly_z3(pv, pv.claim))):
        return (f"free-gap argmax: the aligned cost {cost} (shift ≤ {smax}) may exceed the "
                f"claim {pv.claim}")
    return _render(prog, pv, argmax, t, u, sg, v, u0, site, lo, hi, smax, cost)


def _render(prog: Program, pv: Prover, b: str, t: str, u: str, sg: int, v: object, u0: Fraction,
            site: str, lo: Fraction, hi: Fraction, smax: Fraction,
            cost: PublicPoly) -> TopGapProof:
    z3 = pv.z3
    kind, pol, line = pv.site_info[site]
    name, claim = prog.name, str(pv.claim)
    q = pv.inp.name
    gap = f"{t} − {u}" if sg == 1 else f"{u} − {t}"
    inv = (f"i = 1 ⇒ {b} = 0 ∧ {t} = v₀ ∧ {u} = {u0}",
           f"i ≥ 2 ⇒ {b} = argmax_(j<i) vⱼ ∧ {t} = max_(j<i) vⱼ ∧ "
           f"{u} = max_(j<i, j≠{b}) vⱼ",
           f"m⟨2⟩ − m⟨1⟩ ∈ [{lo}, {hi}]  (ghost maxima of the processed non-winners' v, v + Δ)")
    shift = (f"Lap   line {line} {kind}({pol}) [iteration i = w]: η⟨2⟩ = η⟨1⟩ − Δ{q}[w] + D;"
             " [i ≠ w]: η⟨2⟩ = η⟨1⟩ + 0")
    lines = [
        f"Theorem. ⊢_({claim}, 0) {name} ~ {name} : Adj(x⟨1⟩, x⟨2⟩) ⇒ ={{out}}   [all sizes]",
        f"  i.e. {name} is ({claim}, 0)-DP for every size {pv.sh.size} ≥ 0 and every value of "
        "the public parameters.",
        "",
        "Rule: free-gap argmax (Ding, Wang, Zhang & Kifer, VLDB 2019): the outputs are the",
        "argmax w of vⱼ and the gap to the runner-up M = max_(j≠w) vⱼ; the winner's noise is",
        "shifted by a prophecy value D = M' − M that depends only on the other samples, so the",
        "coupling (a translation of η_w by an amount independent of η_w) is injective.",
        "",
        f"Piece of Adj: every Δ{q}[i] in [{lo}, {hi}];  v = {z3.simplify(v)} at line {line}.",
        f"  Sim    the body is the top-two update of ({b}, {t}, {u}) on v (z3, i symbolic; "
        "ties: probability 0):",
        f"           i = 0: ({b}, {t}, {u}) := (i, v, {u0});",
        f"           v > {t}: ({b}, {t}, {u}) := (i, v, {t});  {u} < v < {t} (or i = 1, v < {t}): "
        f"{u} := v;  v < {u}: unchanged",
        "  While  loop invariant Inv (one run, by induction on i):",
        *[f"           {x}" for x in inv],
        "         base m⟨1⟩ = v, m⟨2⟩ = v + Δ and step max(m⟨1⟩, v), max(m⟨2⟩, v + Δ): z3 ✓,",
        f"         so D = M' − M ∈ [{lo}, {hi}]",
        f"  {shift}",
        f"  Exit   n ≥ 2: {t}⟨1⟩ > M ∧ D = M' − M ⇒ {t}⟨2⟩ = {t}⟨1⟩ + D > M' (same argmax) ∧ "
        f"{t}⟨2⟩ − M' = {t}⟨1⟩ − M (same gap): z3 ✓",
        f"         n = 1: η⟨2⟩ = η⟨1⟩ − Δ{q}[0] keeps ({b}, {gap}) = (0, v₀ − {u0}); n = 0: "
        "constants",
        f"  Seq    aligned cost ≤ max |shift| / b = {smax} · {pol.reciprocal()} = {cost}",
        f"  Conseq {cost} ≤ {claim}   ✓",
        "",
        f"Conclusion: {name} is ({claim}, 0)-differentially private for all sizes.  ∎",
    ]
    return TopGapProof("\n".join(lines), inv, (shift,), str(cost))
