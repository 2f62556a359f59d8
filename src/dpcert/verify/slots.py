"""The search space of an all-sizes proof: shift slots, their candidate values, invariant facts.

`Search` lists, for one adjacency piece and phase kind of a `Prover`, the shift *slots*
(block, phase, class of run-1 paths, sampling site) with
their "exact" values (forced by an output) or candidate values (constants from the adjacency,
exact solutions of guards, and for a sample re-drawn into a variable first drawn before the loop
the pre-loop draw's shift first), and the candidate loop-invariant facts (Houdini's initial set,
Flanagan & Leino 2001).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeAlias

from dpcert.verify.alignment import Prover
from dpcert.verify.ir import Assign, BinOp, Call, Expr, Name, Num
from dpcert.verify.linear import fmt_frac
from dpcert.verify.loopshape import assignments_to, flatten_blocks, names_read, numbers_in
from dpcert.verify.relexec import Carried, RPath, Value, as_number

if TYPE_CHECKING:
    from z3 import ArithRef, BoolRef

__all__ = ["CONST_SHIFTS", "DIFF_BOUNDS", "PHASE_TEXT", "Search", "Slot"]

#: A shift slot: (block, phase, class of run-1 paths, sampling site).
Slot: TypeAlias = tuple[str, str, int, str]
#: The numeric variables' values of one run at the loop head (or after a step).
State: TypeAlias = "dict[str, ArithRef]"
#: A candidate invariant fact as a function of (state⟨1⟩, state⟨2⟩).
Fact: TypeAlias = "Callable[[State, State], BoolRef]"

#: Values tried as constant shifts of a sample (in order).
CONST_SHIFTS = (1, 2, -1, -2)
#: Bounds tried in the candidate invariants ``x⟨2⟩ − x⟨1⟩ ≤ c`` / ``≥ c``.
DIFF_BOUNDS = (-2, -1, 0, 1, 2)

PHASE_TEXT = {"lt": "i < p", "eq": "i = p", "gt": "i > p", "all": "every i", "-": ""}


class Search:
    """Shift search, Houdini invariant and the side conditions for one piece and phase kind."""

    def __init__(self, pv: Prover, argmax: str | None) -> None:
        self.pv, self.z3, self.argmax = pv, pv.z3, argmax
        z3 = self.z3
        self.prange: list[BoolRef] = []
        if pv.phase == "one":
            self.prange = [pv.p >= 0, pv.p < pv.n]
        elif pv.phase == "argmax":
            # p = -1 (no iteration assigns the output) is shown empty for n >= 1 by
            # _argmax_class_empty; n = 0 runs no iteration and reads no data
            self.prange = [pv.p >= 0, pv.p < pv.n]
        self.side = pv.side(pv.dlo, pv.dhi) + self.prange
        self.phc = {"lt": pv.i1 < pv.p, "eq": pv.i1 == pv.p, "gt": pv.i1 > pv.p,
                    "all": z3.BoolVal(True)}
        self.blocks: list[tuple[str, str, list[RPath], list[RPath]]] = [
            ("pre", "-", pv.pre1, pv.pre2)]
        for ph in pv.phases:
            allowed = [p for p in pv.body1[ph] if self._allowed(ph, p)]
            self.blocks.append(("body", ph, allowed, pv.body2[ph]))
        self.blocks.append(("post", "-", pv.post1, pv.post2))
        self.cmap: dict[tuple[str, str], list[int]] = {}
        self.slots: list[Slot] = []
        self.forced: dict[Slot, ArithRef] = {}
        self.free: dict[Slot, list[ArithRef]] = {}
        for blk, ph, p1s, p2s in self.blocks:
            self._slots(blk, ph, p1s, p2s)
        #: re-drawn variables whose shift applies only while the loop goes on
        self.dead_after_exit: set[str] = set()
        self.dead_sites: set[str] = set()
        self._tie_redraws()
        self.cands = self._candidates()
        #: per (pair, shifts): feasibility and Houdini's solver, reused across shift choices
        self.cache: dict[tuple[object, ...], Any] = {}

    def _allowed(self, ph: str, p: RPath) -> bool:
        if self.argmax is None:
            return True
        if ph == "eq":
            return self.argmax in p.assigned
        if ph == "gt":
            return self.argmax not in p.assigned
        return True

    def hyps(self, blk: str, ph: str) -> list[BoolRef]:
        if blk == "body":
            return self.side + self.pv.data_cons(self.pv.q2[ph]) + [self.phc[ph]]
        return list(self.side)

    # ---- slots and candidate shifts
    def _slots(self, blk: str, ph: str, p1s: list[RPath], p2s: list[RPath]) -> None:
        pv = self.pv
        cls = pv.classes(blk, p1s, self.hyps(blk, ph))
        cmap = [0] * len(p1s)
        for ci, members in enumerate(cls):
            for a in members:
                cmap[a] = ci
            sites: list[str] = []
            for a in members:
                sites += [s for s in p1s[a].samples if s not in sites]
            for site in sites:
                slot = (blk, ph, ci, site)
                self.slots.append(slot)
                forced: ArithRef | None = None
                exact: list[ArithRef] = []
                S = pv.S[(site, blk)]
                eta = str(pv.eta[(site, blk)])
                for a in members:
                    p1 = p1s[a]
                    for p2 in p2s:
                        if p2.sig != p1.sig:
                            continue
                        e1, e2 = pv.emitted(blk, p1), pv.emitted(blk, p2)
                        if len(e1) == len(e2):
                            for x, y in zip(e1, e2, strict=True):
                                if not isinstance(x, (bool, Carried, tuple)) and \
                                        not isinstance(y, (bool, Carried, tuple)):
                                    ex = self._solve(x, y, S, site)
                                    if ex is not None and forced is None:
                                        forced = ex
                        for c1, c2 in zip(p1.cons, p2.cons, strict=False):
                            if eta in pv.names(c1.term):
                                ex = self._solve(c1.term, c2.term, S, site)
                                if ex is not None and not any(ex.eq(e) for e in exact):
                                    exact.append(ex)
                if forced is not None:
                    self.forced[slot] = forced
                elif pv.phase is None or ph in {"eq", "-"}:
                    self.free[slot] = self._values(blk, site, exact)
        self.cmap[(blk, ph)] = cmap

    def _tie_redraws(self) -> None:
        """A sample re-drawn in the loop into a variable first drawn before it (Lyu et al.'s
        Alg. 2 threshold) tries the pre-loop sample's first shift first: the invariant keeps
        that variable's difference."""
        pre_site = {a.target: a.value.site for a in flatten_blocks(self.pv.sh.pre)
                    if isinstance(a, Assign) and isinstance(a.value, Call)}
        body_site = {a.value.site: a.target for a in assignments_to(self.pv.sh.body, "*")
                     if isinstance(a.value, Call) and a.target in pre_site}
        post_reads = {n for st in self.pv.sh.post for n in names_read(st)}
        for slot, vals in self.free.items():
            blk, ph, ci, site = slot
            if blk != "body" or site not in body_site:
                continue
            first = [v for (b, _p, _c, s), vs in self.free.items() for v in vs[:1]
                     if b == "pre" and s == pre_site[body_site[site]]]
            if first:
                k = next((j for j, v in enumerate(vals) if str(v) == str(first[0])), None)
                if k:
                    vals.insert(0, vals.pop(k))
            # dead after the last iteration (Lyu's Alg. 2 re-draws after every ⊤, the last
            # included): shift only while the loop's noise-free guard holds afterwards
            var = body_site[site]
            if var in post_reads:
                continue
            p1s = next(p for b, h, p, _q in self.blocks if b == blk and h == ph)
            members = [p for a, p in enumerate(p1s) if self.cmap[(blk, ph)][a] == ci]
            gs = {str(g): g for g in (self._guard_after(p) for p in members)}
            if len(gs) == 1 and None not in gs.values():
                g = next(iter(gs.values()))
                vals[:] = [self.z3.If(g, v, v * 0) for v in vals]
                self.dead_after_exit.add(var)
                self.dead_sites.add(site)

    def guard_rest_on(self, env: dict[str, Value]) -> BoolRef | None:
        """The loop guard's part beyond ``i < n`` on a run-1 state, if noise-free (else None)."""
        pv = self.pv
        if pv.sh.guard_rest is None:
            return None
        ex = pv.executor("body", 1, pv.q1)
        outs = [cs for cs, t in ex.cond(pv.sh.guard_rest, RPath(env=dict(env))) if t]
        if len(outs) != 1 or any(c.noisy for c in outs[0]):
            return None
        return self.z3.And([c.z3() for c in outs[0]]) if outs[0] else None

    def _guard_after(self, p: RPath) -> BoolRef | None:
        env = dict(p.env)
        env[self.pv.sh.counter] = as_number(env[self.pv.sh.counter]) + 1
        return self.guard_rest_on(env)

    def _values(self, blk: str, site: str, exact: list[ArithRef]) -> list[ArithRef]:
        """Shifts tried for a free slot, most likely first (from the adjacency's bounds)."""
        pv = self.pv
        lo, hi = pv.dlo, pv.dhi
        pref: list[Fraction] = []
        if lo is not None and hi is not None:
            pref = [hi, -lo, hi - lo] if blk == "pre" else [hi - lo, hi, -lo]
        nums: list[Fraction] = []
        for c in [*pref, *map(Fraction, CONST_SHIFTS), Fraction(3), Fraction(-3)]:
            if c != 0 and c not in nums:
                nums.append(c)
        if pv.site_info[site][0] == "dlap":
            return [self.z3.IntVal(int(c)) for c in nums if c.denominator == 1] + exact
        vals = [pv.val(c) for c in nums]
        return vals[:3] + exact + vals[3:]

    def _solve(self, t1: ArithRef, t2: ArithRef, S: ArithRef, site: str) -> ArithRef | None:
        pv, z3 = self.pv, self.z3
        T = z3.simplify(t2 - t1)
        nm = pv.names(T)
        if str(S) not in nm or any(x.startswith("S_") and x != str(S) for x in nm):
            return None
        one, zero = (z3.IntVal(1), z3.IntVal(0)) if S.sort() == z3.IntSort() else \
            (pv.val(1), pv.val(0))
        a = pv.numeral(z3.substitute(T, (S, one)) - z3.substitute(T, (S, zero)))
        if a is None or a == 0:
            return None
        R = z3.substitute(T, (S, zero))
        if R.sort() == z3.IntSort() and a in (1, -1):
            ex = z3.simplify(-R if a == 1 else R)  # stays an integer
        else:
            ex = z3.simplify(R * pv.val(-1 / a))
        if pv.names(ex) & pv.noise_vars:
            return None
        if pv.site_info[site][0] == "dlap":  # the shift of integer noise must be an integer
            c = pv.numeral(ex)
            if c is not None and c.denominator == 1:
                return z3.IntVal(int(c))
            return ex if ex.sort() == z3.IntSort() else None
        return ex

    # ---- invariant candidates
    def _candidates(self) -> list[tuple[str, BoolRef, Fact]]:
        """(text, predicate on the loop head, function of (state⟨1⟩, state⟨2⟩))."""
        pv, z3 = self.pv, self.z3
        consts: set[Fraction] = set()
        if pv.sh.guard_rest is not None:
            consts |= numbers_in(pv.sh.guard_rest, pv.consts)
        ctr = pv.sh.counter
        guards: list[tuple[str, Callable[[State], BoolRef] | None]] = [("", None)]
        if pv.phase:
            guards += [("i ≤ p ⇒ ", lambda a: a[ctr] <= pv.p),
                       ("i > p ⇒ ", lambda a: a[ctr] > pv.p)]
        atoms: list[tuple[str, Fact]] = []
        bounds = set(DIFF_BOUNDS) | {b for b in (pv.dlo, pv.dhi) if b is not None}

        def diff(v: str, op: str, c: Fraction | int, scaled: bool = False) -> Fact:
            def f(a: State, b: State) -> BoolRef:
                d = b[v] - a[v]
                r = pv.val(c) * a[ctr] if scaled else pv.val(c)
                return {"=": d == r, "≤": d <= r, "≥": d >= r}[op]
            return f

        def one(v: str, op: str, c: Fraction | str) -> Fact:
            def f(a: State, b: State) -> BoolRef:
                r = a[ctr] if c == "i" else pv.n if c == "n" else pv.val(Fraction(c))
                return a[v] <= r if op == "≤" else a[v] >= r
            return f

        for v in pv.numeric:
            if v == ctr:  # both runs share the counter (the guards are checked alike)
                atoms += [("i ≥ 0", one(v, "≥", Fraction(0))),
                          (f"i ≤ {pv.sh.size}", one(v, "≤", "n"))]
                continue
            atoms.append((f"{v}⟨2⟩ = {v}⟨1⟩", diff(v, "=", Fraction(0))))
            for c in sorted(bounds):
                atoms.append((f"{v}⟨2⟩ − {v}⟨1⟩ ≤ {c}", diff(v, "≤", c)))
                atoms.append((f"{v}⟨2⟩ − {v}⟨1⟩ ≥ {c}", diff(v, "≥", c)))
            if pv.phase is None and pv.adj.mode == "all" and v != ctr:
                if pv.dhi is not None:
                    atoms.append((f"{v}⟨2⟩ − {v}⟨1⟩ ≤ {pv.dhi}·i", diff(v, "≤", pv.dhi, True)))
                if pv.dlo is not None:
                    atoms.append((f"{v}⟨2⟩ − {v}⟨1⟩ ≥ {pv.dlo}·i", diff(v, "≥", pv.dlo, True)))
            atoms += [(f"{v}⟨1⟩ ≥ 0", one(v, "≥", Fraction(0))), (f"{v}⟨1⟩ ≤ i", one(v, "≤", "i"))]
            for c in sorted(consts):
                atoms.append((f"{v}⟨1⟩ ≤ {c}", one(v, "≤", c)))
        g_head = self.guard_rest_on({**pv.H1, **{v: Carried(v) for v in pv.lists}})
        def while_held(fa: Fact) -> Fact:
            def f(a: State, b: State) -> BoolRef:
                held = z3.substitute(g_head, *[(pv.H1[k], a[k]) for k in pv.numeric])
                return z3.Implies(held, fa(a, b))
            return f

        for v in sorted(self.dead_after_exit) if g_head is not None else []:
            for c in sorted(bounds):
                for op in ("≤", "≥"):
                    held = condition_text(pv.sh.guard_rest)
                    atoms.append((f"[{held}] ⇒ {v}⟨2⟩ − {v}⟨1⟩ {op} {c}",
                                  while_held(diff(v, op, c))))
        out: list[tuple[str, BoolRef, Fact]] = []
        for gt, g in guards:
            for at, fa in atoms:
                def f(a: State, b: State, g: Callable[[State], BoolRef] | None = g,
                      fa: Fact = fa) -> BoolRef:
                    return fa(a, b) if g is None else z3.Implies(g(a), fa(a, b))
                out.append((gt + at, f(pv.H1, pv.H2), f))
        return out


def condition_text(e: Expr | None) -> str:
    """A condition as source-like text (comparisons of names and numbers)."""
    if isinstance(e, BinOp):
        return f"{condition_text(e.left)} {e.op} {condition_text(e.right)}"
    if isinstance(e, Name):
        return e.name
    if isinstance(e, Num):
        return fmt_frac(e.value)
    return "…"
