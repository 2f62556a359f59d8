"""Side conditions of an all-sizes proof for one choice of shifts: Houdini, outputs, cost.

Every check is a z3 query with the size n, the counter i and the phase index p symbolic.
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from dpcert.verify.alignment import Z3_MS
from dpcert.verify.linear import Monomial, PublicPoly
from dpcert.verify.loopshape import split_monomials
from dpcert.verify.relexec import Carried, RPath, Unsupported, Value, as_number
from dpcert.verify.slots import PHASE_TEXT, Search, Slot

if TYPE_CHECKING:
    from z3 import ArithRef, BoolRef, Solver

__all__ = ["Fail", "NoCounter", "aligned_pairs", "argmax_class_empty", "check_obligations",
           "cost_bound", "houdini"]


class Fail(Exception):
    """A side condition of the all-sizes proof does not hold (the reason is the message)."""


class NoCounter(Fail):
    """No single counter pays the cost; carries what a richer template needs."""

    def __init__(self, reason: str, alpha: dict[Monomial, Fraction], mons: set[Monomial],
                 claim: dict[Monomial, ArithRef]) -> None:
        super().__init__(reason)
        self.alpha, self.mons, self.claim = alpha, mons, claim


#: The shifts of a run-2 path as z3 substitutions: (shift symbol S, its value).
Sigma: TypeAlias = "list[tuple[ArithRef, ArithRef]]"
#: A value or constraint of run 2, which the shifts substitute into (keeping its kind).
_V = TypeVar("_V", bound="Value | BoolRef")
#: A cost counter: (name, its term at the loop head, its value before the loop, or None for
#: the indicator [i > p], which pays once).
Counter: TypeAlias = "tuple[str, ArithRef, Fraction | None]"


def _zero(se: Search, S: ArithRef) -> ArithRef:
    return se.z3.IntVal(0) if S.sort() == se.z3.IntSort() else se.pv.val(0)


def _sigma(se: Search, blk: str, ph: str, a: int, assign: dict[Slot, ArithRef]) -> Sigma:
    ci = se.cmap[(blk, ph)][a]
    return [(S, assign.get((blk, ph, ci, site), _zero(se, S)))
            for (site, b), S in se.pv.S.items() if b == blk]


def _sub(se: Search, e: _V, sigma: Sigma) -> _V:
    if isinstance(e, (bool, Carried, tuple)) or not sigma:
        return e
    out: _V = se.z3.substitute(e, *sigma)   # a term of the same sort
    return out


#: (block, phase, run-1 path, run-2 path, shifts, constraints) of a feasible pair of paths.
Pair: TypeAlias = "tuple[str, str, RPath, RPath, Sigma, list[BoolRef]]"


def aligned_pairs(se: Search, assign: dict[Slot, ArithRef]) -> list[Pair]:
    """(block, phase, run-1 path, run-2 path, shifts, constraints) of every feasible pair."""
    out = []
    for blk, ph, p1s, p2s in se.blocks:
        for a, p1 in enumerate(p1s):
            sig = _sigma(se, blk, ph, a, assign)
            c1 = se.pv.strict(p1)
            skey = tuple(v.sexpr() for _, v in sig)
            for p2 in p2s:
                key = ("pair", id(p1), id(p2), skey)
                if key not in se.cache:
                    cons = c1 + [_sub(se, c.z3(), sig) for c in p2.cons]
                    feasible = se.pv.check(*se.hyps(blk, ph), *cons) != "unsat"
                    se.cache[key] = (cons if feasible else None, skey)
                cons, _ = se.cache[key]
                if cons is not None:  # else infeasible even without the invariant
                    out.append((blk, ph, p1, p2, sig, cons))
    return out


def _mapping(se: Search, p1: RPath, p2: RPath, sig: Sigma, step: bool) -> Sigma:
    pv = se.pv
    out = []
    for v in pv.numeric:
        x1, x2 = as_number(p1.env[v]), as_number(_sub(se, p2.env[v], sig))
        if step and v == pv.sh.counter:
            x1, x2 = x1 + 1, x2 + 1
        out += [(pv.H1[v], _coerce(se, pv.H1[v], x1)), (pv.H2[v], _coerce(se, pv.H2[v], x2))]
    return out


def _coerce(se: Search, target: ArithRef, x: ArithRef) -> ArithRef:
    z3 = se.z3
    if target.sort() == x.sort():
        return x
    if target.sort() == z3.RealSort():
        return z3.ToReal(x)
    c = se.pv.numeral(x)
    if c is not None and c.denominator == 1:
        return z3.IntVal(int(c))
    for base in se.pv.names(x):
        for h in list(se.pv.H1.values()) + list(se.pv.H2.values()):
            if str(h) == base and h.sort() == z3.IntSort():
                d = se.pv.numeral(x - z3.ToReal(h))
                if d is not None and d.denominator == 1:
                    return h + z3.IntVal(int(d))
    raise Unsupported("an integer variable takes a non-integer value")


def _post_states(se: Search, p1: RPath, p2: RPath, sig: Sigma,
                 step: bool) -> tuple[dict[str, ArithRef], dict[str, ArithRef]]:
    pv = se.pv
    a, b = {}, {}
    for h1, h2 in zip(_mapping(se, p1, p2, sig, step)[::2], _mapping(se, p1, p2, sig, step)[1::2],
                      strict=True):
        name = next(v for v in pv.numeric if pv.H1[v] is h1[0])
        a[name], b[name] = h1[1], h2[1]
    return a, b


def houdini(se: Search, pairs: list[Pair]) -> list[tuple[str, BoolRef]]:
    """The largest inductive subset of the candidate facts (Flanagan & Leino's Houdini)."""
    z3 = se.z3
    alive = set(range(len(se.cands)))
    work: list[tuple[Solver, list[BoolRef], list[BoolRef] | None]] = []
    for blk, ph, p1, p2, sig, cons in pairs:
        if blk == "post":
            continue
        key = ("houdini", id(p1), id(p2), tuple(v.sexpr() for _, v in sig))
        if key in se.cache:
            work.append(se.cache[key])
            continue
        k = len(se.cache)
        a, b = _post_states(se, p1, p2, sig, blk == "body")
        s = se.pv.solver()
        s.add(*(se.side + cons if blk == "pre" else se.hyps(blk, ph) + cons))
        qs = [z3.Bool(f"q!{k}!{j}") for j in range(len(se.cands))]
        for j, (_t, _h, f) in enumerate(se.cands):
            s.add(z3.Implies(qs[j], z3.Not(f(a, b))))
        s.add(z3.Or(qs))
        bs = None
        if blk == "body":
            bs = [z3.Bool(f"b!{k}!{j}") for j in range(len(se.cands))]
            for j, (_t, h, _f) in enumerate(se.cands):
                s.add(z3.Implies(bs[j], h))
        work.append((s, qs, bs))
        se.cache[key] = (s, qs, bs)
    changed = True
    while changed:
        changed = False
        for s, qs, bs in work:
            while alive:
                if time.monotonic() > se.pv.deadline:
                    raise TimeoutError
                assume = [z3.Not(qs[j]) for j in range(len(qs)) if j not in alive]
                if bs is not None:
                    assume += [bs[j] for j in alive]
                r = s.check(*assume)
                if r == z3.unsat:
                    break
                if r != z3.sat:
                    raise Fail("z3 could not decide an invariant step")
                m = s.model()
                dead = {j for j in alive if z3.is_true(m.eval(qs[j], model_completion=True))}
                if not dead:
                    raise Fail("internal: Houdini made no progress")
                alive -= dead
                changed = True
    return [(se.cands[j][0], se.cands[j][1]) for j in sorted(alive)]


def _equal_out(se: Search, hyps: list[BoolRef], e1: list[Value], e2: list[Value],
               sig: Sigma) -> bool:
    pv, z3 = se.pv, se.z3
    eqs = []
    ok = len(e1) == len(e2)
    if ok:
        for x, y in zip(e1, e2, strict=True):
            if isinstance(x, bool) or isinstance(y, bool):
                if not (isinstance(x, bool) and isinstance(y, bool) and x == y):
                    ok = False
                continue
            eqs.append(x == _sub(se, y, sig))
    if not ok:
        return pv.check(*hyps) == "unsat"
    return not eqs or pv.valid(hyps, z3.And(eqs))


def _ret_struct(r: tuple[Value, ...] | None) -> tuple[tuple[str, str | int] | tuple[str], ...]:
    assert r is not None
    return tuple(("L", x.name) if isinstance(x, Carried) else
                 ("T", len(x)) if isinstance(x, tuple) else ("s",) for x in r)


def check_obligations(se: Search, pairs: list[Pair], inv: list[tuple[str, BoolRef]]) -> None:
    pv, z3 = se.pv, se.z3
    invp = [p for _, p in inv]
    head = se.side + invp
    if pv.check(*head, pv.g1, z3.Not(pv.g2)) != "unsat" or \
            pv.check(*head, z3.Not(pv.g1), pv.g2) != "unsat":
        raise Fail("the two runs may leave the loop at different iterations")
    for blk, ph, p1, p2, sig, cons in pairs:
        if blk == "pre":
            hyps = se.side + cons
            ctr = pv.sh.counter
            if not pv.valid(hyps, as_number(p1.env[ctr]) == as_number(_sub(se, p2.env[ctr], sig))):
                raise Fail("the two runs start the loop at different counters")
        elif blk == "body":
            hyps = se.hyps(blk, ph) + invp + cons
        else:
            hyps = [*head, pv.exit1, pv.exit2, *cons]
            if _ret_struct(p1.ret) != _ret_struct(p2.ret) and pv.check(*hyps) != "unsat":
                raise Fail("the two runs return differently shaped outputs")
        if not _equal_out(se, hyps, pv.emitted(blk, p1), pv.emitted(blk, p2), sig):
            where = {"pre": "before the loop", "body": f"in the loop ({PHASE_TEXT[ph]})",
                     "post": "at the end"}[blk]
            raise Fail(f"an output {where} differs between the aligned runs")
        for site in p1.samples:
            if pv.site_info[site][0] == "expo":
                S = pv.S[(site, blk)]
                s_val = dict((str(a), b) for a, b in sig)[str(S)]
                if not pv.valid(hyps, pv.eta[(site, blk)] + s_val >= 0):
                    raise Fail("a shifted exponential sample may leave the support")


def argmax_class_empty(se: Search) -> bool:
    """For n ≥ 1, some iteration assigns the argmax variable: p = -1 is an empty class."""
    pv, z3 = se.pv, se.z3
    for pre in pv.pre1:
        mp = [(pv.H1[v], _coerce(se, pv.H1[v], pre.env[v])) for v in pv.numeric]
        for b in pv.body1["gt"]:
            if se.argmax in b.assigned:
                continue
            f = [z3.substitute(c, *mp) for c in pv.strict(b)]
            if pv.check(*pv.side(pv.dlo, pv.dhi), pv.n >= 1, pv.p == -1,
                        *pv.strict(pre), *f) != "unsat":
                return False
    return True


# --------------------------------------------------------------------------------- cost
def _weights(se: Search, site: str) -> dict[Monomial, ArithRef]:
    """1/b of a site per parameter monomial, as a z3 coefficient (may involve the size)."""
    pv, z3 = se.pv, se.z3
    inv = pv.site_info[site][1].reciprocal()
    out: dict[Monomial, ArithRef] = {}
    for pm, lst in split_monomials(inv, pv.prog.size_names).items():
        tot = None
        for c, sm in lst:
            t = pv.val(c)
            for _, k in sm:
                t = t * (pv.n ** k if k > 0 else 1 / (pv.n ** (-k)))
            tot = t if tot is None else tot + t
        out[pm] = tot
    del z3
    return out


def _cost(se: Search, blk: str, p1: RPath, sig: Sigma) -> dict[Monomial, ArithRef]:
    z3 = se.z3
    sv = {str(a): b for a, b in sig}
    out: dict[Monomial, ArithRef] = {}
    for site in p1.samples:
        s = sv[str(se.pv.S[(site, blk)])]
        mag = z3.If(s >= 0, s, 0) if se.pv.site_info[site][0] == "expo" else \
            z3.If(s >= 0, s, -s)
        for m, w in _weights(se, site).items():
            out[m] = out.get(m, se.pv.val(0)) + w * mag
    return out


def _maximize(se: Search, hyps: list[BoolRef], e: ArithRef) -> Fraction:
    z3 = se.z3
    opt = z3.Optimize()
    opt.set("timeout", Z3_MS)
    opt.add(*hyps)
    h = opt.maximize(e)
    r = opt.check()
    if r == z3.unsat:
        return Fraction(0)  # an infeasible path costs nothing
    if r != z3.sat:
        raise Fail("z3 could not bound the cost of an iteration")
    v = opt.upper(h)
    x = se.pv.numeral(v) if z3.is_arith(v) else None
    if x is None:
        raise Fail("the cost of an iteration is unbounded under the invariant")
    return x


def cost_bound(se: Search, pairs: list[Pair], inv: list[tuple[str, BoolRef]]) -> str:
    """The aligned cost bound as text; `Fail` when it may exceed the claim."""
    pv, z3 = se.pv, se.z3
    invp = [p for _, p in inv]
    mons: set[Monomial] = set(split_monomials(pv.claim, pv.prog.size_names))
    alpha: dict[Monomial, Fraction] = {}
    incs: list[tuple[str, dict[Monomial, Fraction], RPath]] = []
    seen: set[int] = set()
    for blk, ph, p1, _p2, sig, _cons in pairs:
        if blk == "post" or id(p1) in seen:
            continue
        seen.add(id(p1))
        cst = _cost(se, blk, p1, sig)
        mons |= set(cst)
        hy = se.side + pv.strict(p1) if blk == "pre" else \
            se.hyps(blk, ph) + invp + pv.strict(p1)
        mx = {m: _maximize(se, hy, e) for m, e in cst.items()}
        if blk == "pre":
            for m, x in mx.items():
                alpha[m] = max(alpha.get(m, Fraction(0)), x)
        else:
            incs.append((ph, mx, p1))
    # counters: the indicator [i > p], then variables that only grow, then i
    ctrs: list[Counter] = []
    if pv.phase:
        ind = z3.If(z3.And(pv.p >= 0, pv.i1 > pv.p), 1, 0)
        ctrs.append(("[i > p]", ind, None))
    for v in [x for x in pv.numeric if x != pv.sh.counter] + [pv.sh.counter]:
        v0s = {pv.numeral(pre.env[v]) for pre in pv.pre1}
        if len(v0s) == 1 and None not in v0s:
            ctrs.append((v, pv.H1[v], v0s.pop()))
    claim = {m: _coef(se, lst) for m, lst in split_monomials(pv.claim, pv.prog.size_names).items()}
    try:
        return _one_counter(se, pairs, invp, alpha, incs, ctrs, mons, claim)
    except Fail as e:
        raise NoCounter(str(e), alpha, mons, claim) from None


def _one_counter(se: Search, pairs: list[Pair], invp: list[BoolRef],
                 alpha: dict[Monomial, Fraction],
                 incs: list[tuple[str, dict[Monomial, Fraction], RPath]],
                 ctrs: list[Counter], mons: set[Monomial],
                 claim: dict[Monomial, ArithRef]) -> str:
    """``cost ≤ α + β·(v − v₀)`` for one counter v per monomial, or `Fail`."""
    pv, z3 = se.pv, se.z3
    beta: dict[Monomial, tuple[str, ArithRef, Fraction, Fraction]] = {}
    for m in mons:
        for name, term, v0 in ctrs:
            b, ok = Fraction(0), True
            for ph, mx, p1 in incs:
                if v0 is None:
                    d: Fraction | None = Fraction(1 if ph == "eq" else 0)
                else:
                    v = next(k for k in pv.numeric if pv.H1[k] is term)
                    d = pv.numeral(p1.env[v] - pv.H1[v] + (1 if v == pv.sh.counter else 0))
                x = mx.get(m, Fraction(0))
                if d is None or d < 0 or (d == 0 and x > 0):
                    ok = False
                    break
                if d > 0:
                    b = max(b, x / d)
            if ok:
                beta[m] = (name, term, b, v0 if v0 is not None else Fraction(0))
                break
        else:
            raise Fail("no counter pays for the cost of the iterations")
    # exit: alpha + beta*(v - v0) + cost(post) <= claim, for every monomial
    for blk, _ph, p1, _p2, sig, cons in pairs:
        if blk != "post":
            continue
        pc = _cost(se, blk, p1, sig)
        hyps = se.side + invp + [pv.exit1] + pv.strict(p1)
        goals, lhs, rhs = [], [], []
        for m in mons:
            _name, term, b, v0 = beta[m]
            tot = pv.val(alpha.get(m, Fraction(0))) + pv.val(b) * (term - pv.val(v0)) + \
                pc.get(m, pv.val(0))
            goals.append(tot <= claim.get(m, pv.val(0)))
            mono = _mono(se, m)
            lhs.append(mono * tot)
            rhs.append(mono * claim.get(m, pv.val(0)))
        # monomial by monomial (linear; parameters are positive), else the total (nonlinear,
        # using the declared parameter ranges: e.g. 1/eps <= eps for eps > 1)
        if not pv.valid(hyps, z3.And(goals)) and \
                not pv.valid(hyps, z3.Sum(lhs) <= z3.Sum(rhs)):
            raise Fail("the aligned cost may exceed the claim")
        del cons
    parts = []
    for m in sorted(mons):
        name, _t, b, v0 = beta[m]
        mono = str(PublicPoly({m: Fraction(1)})) if m else "1"
        vv = name if v0 == 0 else f"({name} − {v0})"
        parts.append(f"({alpha.get(m, Fraction(0))} + {b}·{vv})·{mono}")
    return " + ".join(parts)


def _mono(se: Search, m: Monomial) -> ArithRef:
    """The value of a parameter monomial (``eps^-1`` -> 1/eps) as a z3 term."""
    t = se.pv.val(1)
    for name, k in m:
        x = se.pv.params[name]
        for _ in range(abs(k)):
            t = t * x if k > 0 else t / x
    return t


def _coef(se: Search, lst: list[tuple[Fraction, Monomial]]) -> ArithRef:
    pv = se.pv
    tot = pv.val(0)
    for c, sm in lst:
        t = pv.val(c)
        for _, k in sm:
            t = t * (pv.n ** k if k > 0 else 1 / (pv.n ** (-k)))
        tot = tot + t
    return tot
