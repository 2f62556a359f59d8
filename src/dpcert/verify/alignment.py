"""The relational model of an all-sizes proof: both runs of every block, shift slots, candidates.

:class:`Prover` runs ``pre``, the loop body (per phase of the symbolic index p) and ``post`` of
both runs once, symbolically (:mod:`dpcert.verify.relexec`): run 1 on x with noise η, run 2 on
the neighbour with noise η + S.  :class:`Search` groups run-1 paths into classes that the output
or the noise-free guards tell apart (a shift may differ only between such classes, which keeps
the coupling injective), lists the candidate shifts of every (block, phase, class, site) slot
and the candidate loop-invariant facts (Houdini's initial set).
"""

from __future__ import annotations

import itertools
import time
from fractions import Fraction
from typing import Any

from dpcert.verify._deps import require_z3
from dpcert.verify.conds import z3_names, z3_numeral
from dpcert.verify.ir import (
    Assign,
    BinOp,
    Call,
    If,
    Index,
    ListLit,
    Name,
    Program,
    Return,
    UnOp,
    While,
)
from dpcert.verify.linear import PublicPoly
from dpcert.verify.loopshape import (
    LoopShape,
    assignments_to,
    flatten_blocks,
    numbers_in,
    public_poly,
)
from dpcert.verify.relexec import Carried, Exec, RPath, Unsupported

__all__ = ["CONST_SHIFTS", "DIFF_BOUNDS", "PHASE_TEXT", "Prover", "Search", "Z3_MS",
           "divides_by_size"]

#: Values tried as constant shifts of a sample (in order).
CONST_SHIFTS = (1, 2, -1, -2)
#: Bounds tried in the candidate invariants ``x⟨2⟩ − x⟨1⟩ ≤ c`` / ``≥ c``.
DIFF_BOUNDS = (-2, -1, 0, 1, 2)
#: Largest sum of candidate ranks tried (0 = all shifts 0).
MAX_RANK = 6
#: z3 timeout (ms) of one query.
Z3_MS = 5000


class Prover:
    def __init__(self, prog: Program, shape: LoopShape, deadline: float) -> None:
        self.z3 = z3 = require_z3()
        self.prog, self.sh, self.deadline = prog, shape, deadline
        self.n = z3.Int(shape.size)
        # both runs take the loop guard alike (checked), so they share the counter
        self.i1 = self.i2 = z3.Int(shape.counter)
        self.p = z3.Int("p")
        self.params = {p.name: z3.Real(p.name) for p in prog.params}
        self.consts: dict[str, Fraction] = {}
        for name, ce in prog.consts:
            pc = public_poly(ce, prog)
            if not pc.is_const():
                raise Unsupported(f"const {name} is not a number")
            self.consts[name] = pc.const_value()
        self.inp = prog.inputs[0]
        self.adj = prog.adjacency[self.inp.name]
        isint = self.inp.elem == "int"
        mk = z3.Int if isint else z3.Real
        self.q1 = mk(f"{self.inp.name}⟨1⟩[i]")
        self.D = mk(f"Δ{self.inp.name}")
        self.noise_vars: set[str] = set()
        self.eta: dict[tuple[str, str], Any] = {}
        self.S: dict[tuple[str, str], Any] = {}
        self.site_info: dict[str, tuple[str, PublicPoly, int]] = {}
        self.claim = public_poly(prog.claim, prog)
        #: smallest size covered: 1 when the program divides by the size (``s / n``)
        self.min_n = 1 if divides_by_size(prog) else 0

    # ---- z3 helpers
    def val(self, x: Fraction | int) -> Any:
        x = Fraction(x)
        return self.z3.RealVal(f"{x.numerator}/{x.denominator}")

    def solver(self) -> Any:
        s = self.z3.Solver()
        s.set("timeout", max(1, min(Z3_MS, int(1000 * (self.deadline - time.monotonic())))))
        return s

    def check(self, *fs: Any) -> str:
        if time.monotonic() > self.deadline:
            raise TimeoutError
        s = self.solver()
        s.add(*fs)
        r = s.check()
        return "sat" if r == self.z3.sat else ("unsat" if r == self.z3.unsat else "unknown")

    def valid(self, hyp: list[Any], goal: Any) -> bool:
        return self.check(*hyp, self.z3.Not(goal)) == "unsat"

    # ---- noise
    def _noise(self, blk: str, run: int) -> Any:
        z3 = self.z3

        def f(e: Call, st: RPath) -> Any:
            if e.func == "gauss" and self.prog.claim_delta is None:
                raise Unsupported(f"line {e.line}: Gaussian noise needs a claim eps, delta")
            pol = public_poly(e.args[0], self.prog)
            if len(pol.terms) != 1 or next(iter(pol.terms.values())) <= 0:
                raise Unsupported(f"line {e.line}: noise scale must be a single positive term")
            self.site_info[e.site] = (e.func, pol, e.line)
            key = (e.site, blk)
            if key not in self.eta:
                mk = z3.Int if e.func == "dlap" else z3.Real
                name = f"η{e.line}" + ("" if blk == "body" else f"_{blk}")
                self.eta[key] = mk(name)
                self.S[key] = mk(f"S_{name}")
                self.noise_vars.add(name)
            st.samples.append(e.site)
            return self.eta[key] if run == 1 else self.eta[key] + self.S[key]
        return f

    def executor(self, blk: str, run: int, data: Any) -> Exec:
        sizes = {self.sh.size: self.n}
        return Exec(sizes, self.consts, self.params, {self.inp.name: data}, self.sh.counter,
                    self._noise(blk, run), self.noise_vars, {self.inp.name})

    def side(self, D_lo: Fraction | None, D_hi: Fraction | None) -> list[Any]:
        z3 = self.z3
        out = [self.n >= self.min_n]
        for p in self.prog.params:
            if p.lo is not None:
                out.append(self.params[p.name] > self.val(p.lo))
            if p.hi is not None:
                out.append(self.params[p.name] < self.val(p.hi))
        if D_lo is not None:
            out.append(self.val(D_lo) <= self.D)
        if D_hi is not None:
            out.append(self.val(D_hi) >= self.D)
        for (site, _), v in self.eta.items():
            if self.site_info[site][0] == "expo":
                out.append(v >= 0)
        del z3
        return out

    def data_cons(self, q2: Any) -> list[Any]:
        out = []
        for x in (self.q1, q2):
            if self.inp.lo is not None:
                out.append(x >= self.val(self.inp.lo))
            if self.inp.hi is not None:
                out.append(x <= self.val(self.inp.hi))
        return out

    # ---- running the blocks
    def run_blocks(self, dlo: Fraction | None, dhi: Fraction | None,
                   phase: str | None) -> None:
        z3, sh = self.z3, self.sh
        self.dlo, self.dhi, self.phase = dlo, dhi, phase
        pre1 = self.executor("pre", 1, None).block(sh.pre, [RPath()])
        pre2 = self.executor("pre", 2, None).block(sh.pre, [RPath()])
        if any(p.ret is not None for p in pre1):
            raise Unsupported("a `return` before the loop")
        keys = set(pre1[0].env)
        for p in pre1 + pre2:
            if set(p.env) != keys:
                raise Unsupported("the paths before the loop define different variables")
        self.numeric: list[str] = []
        self.lists: list[str] = []
        for v in sorted(keys):
            x = pre1[0].env[v]
            if isinstance(x, tuple):
                self.lists.append(v)
            elif isinstance(x, (bool, Carried)):
                raise Unsupported(f"boolean variable {v} carried around the loop")
            else:
                self.numeric.append(v)
        if sh.counter not in self.numeric:
            raise Unsupported(f"the counter {sh.counter} is not initialised before the loop")
        self.pre1, self.pre2 = pre1, pre2
        self.phases = ["lt", "eq", "gt"] if phase else ["all"]
        ints: set[str] = set()
        for _ in range(2):  # the second pass gives integer variables integer symbols
            self.H1: dict[str, Any] = {}
            self.H2: dict[str, Any] = {}
            for v in self.numeric:
                if v == sh.counter:
                    self.H1[v], self.H2[v] = self.i1, self.i2
                else:
                    mk = z3.Int if v in ints else z3.Real
                    self.H1[v], self.H2[v] = mk(f"{v}⟨1⟩"), mk(f"{v}⟨2⟩")
            env1: dict[str, Any] = {**self.H1, **{v: Carried(v) for v in self.lists}}
            env2: dict[str, Any] = {**self.H2, **{v: Carried(v) for v in self.lists}}
            self.body1: dict[str, list[RPath]] = {}
            self.body2: dict[str, list[RPath]] = {}
            for ph in self.phases:
                q2 = self.q1 + self.D if (phase != "one" or ph == "eq") else self.q1
                self.body1[ph] = self._loop_paths(env1, 1, self.q1)
                self.body2[ph] = self._loop_paths(env2, 2, q2)
            found = {v for v in self.numeric if v != sh.counter and self._integral(v)}
            if found == ints:
                break
            ints = found
        self.q2 = {ph: (self.q1 + self.D if (phase != "one" or ph == "eq") else self.q1)
                   for ph in self.phases}
        self.exit1 = self._guard(env1, 1, False)
        self.exit2 = self._guard(env2, 2, False)
        self.g1 = self._guard(env1, 1, True)
        self.g2 = self._guard(env2, 2, True)
        self.post1 = self.executor("post", 1, None).block(sh.post, [RPath(env=dict(env1))])
        self.post2 = self.executor("post", 2, None).block(sh.post, [RPath(env=dict(env2))])
        if any(p.ret is None for p in self.post1 + self.post2):
            raise Unsupported("the program must end with `return` after the loop")

    def _integral(self, v: str) -> bool:
        """``v`` starts at an integer and only moves by integers (or takes the counter)."""
        z3 = self.z3
        for p in self.pre1 + self.pre2:
            c = self.numeral(p.env[v])
            if c is None or c.denominator != 1:
                return False
        for ps in list(self.body1.values()) + list(self.body2.values()):
            for p in ps:
                x = p.env[v]
                if isinstance(x, (bool, tuple, Carried)):
                    return False
                if x.sort() == z3.IntSort():
                    continue
                c1 = self.numeral(x - self.H1[v])
                c2 = self.numeral(x - self.H2[v])
                c0 = self.numeral(x)
                if not any(y is not None and y.denominator == 1 for y in (c1, c2, c0)):
                    return False
        return True

    def _guard(self, env: dict[str, Any], run: int, truth: bool) -> Any:
        ex = self.executor("body", run, self.q1)
        outs = ex.cond(self.sh.loop.cond, RPath(env=dict(env)))
        return self.z3.Or([self.z3.And([c.z3() for c in cs]) for cs, t in outs if t == truth])

    def _loop_paths(self, env: dict[str, Any], run: int, data: Any) -> list[RPath]:
        ex = self.executor("body", run, data)
        out: list[RPath] = []
        for k, (cs, t) in enumerate(ex.cond(self.sh.loop.cond, RPath(env=dict(env)))):
            if not t:
                continue
            start = RPath(list(cs), dict(env), [(-1, k)])
            for p in ex.block(self.sh.body, [start]):
                if p.ret is not None:
                    raise Unsupported("a `return` inside the loop")
                for v in self.lists:
                    if not (isinstance(p.env.get(v), Carried) and p.env[v].name == v):
                        raise Unsupported(f"list {v} is not only appended to in the loop")
                out.append(p)
        return out

    # ---- terms
    def names(self, t: Any) -> set[str]:
        return z3_names(self.z3, t)

    def numeral(self, t: Any) -> Fraction | None:
        return z3_numeral(self.z3, t)

    def strict(self, p: RPath) -> list[Any]:
        """Run-1 constraints, comparisons with continuous noise read strictly."""
        z3 = self.z3
        out = []
        for c in p.cons:
            if c.op == "<=" and c.noisy and any(
                    n in self.noise_vars and self._is_real_noise(n) for n in self.names(c.term)):
                out.append(c.term < 0)
            else:
                out.append(c.z3())
        del z3
        return out

    def _is_real_noise(self, name: str) -> bool:
        return any(str(v) == name and v.sort() == self.z3.RealSort() for v in self.eta.values())

    def key(self, v: Any) -> tuple[Any, ...]:
        if isinstance(v, bool):
            return ("b", v)
        c = self.numeral(v)
        if c is not None:
            return ("c", c)
        if any(n in self.noise_vars and self._is_real_noise(n) for n in self.names(v)):
            return ("r",)
        if self.names(v) & self.noise_vars:
            return ("z",)
        return ("d",)

    def emitted(self, blk: str, p: RPath) -> list[Any]:
        """Every value a block outputs (appends to carried lists; for ``post`` the return)."""
        return [x for g in self.emitted_groups(blk, p) for x in g]

    def emitted_groups(self, blk: str, p: RPath) -> list[list[Any]]:
        """The block's output values, one group per list (or returned value)."""
        if blk == "body":
            return [list(p.env[v].items) for v in self.lists]
        if blk == "pre":
            return [list(p.env[v]) for v in self.lists]
        assert p.ret is not None
        out: list[list[Any]] = []
        for r in p.ret:
            if isinstance(r, Carried):
                out.append(list(r.items))
            elif isinstance(r, tuple):
                out.append(list(r))
            else:
                out.append([r])
        return out

    def classes(self, blk: str, paths: list[RPath], hyps: list[Any]) -> list[list[int]]:
        """Components of run-1 paths that the output and the noise-free guards cannot tell apart."""
        z3 = self.z3
        grp = [[[self.key(x) for x in g] for g in self.emitted_groups(blk, p)] for p in paths]
        # an iteration's emissions sit at known positions only if every path appends the same
        # number of values to each list
        uniform = len({tuple(len(g) for g in gs) for gs in grp}) <= 1
        ems = [[k for g in gs for k in g] for gs in grp]
        parent = list(range(len(paths)))

        def find(a: int) -> int:
            while parent[a] != a:
                a = parent[a]
            return a

        for a, b in itertools.combinations(range(len(paths)), 2):
            if uniform and any(distinguishable(x, y) for x, y in zip(ems[a], ems[b], strict=True)):
                continue
            nf = [c.z3() for c in paths[a].cons + paths[b].cons if not c.noisy]
            if nf and self.check(*hyps, *nf) == "unsat":
                continue
            parent[find(a)] = find(b)
        groups: dict[int, list[int]] = {}
        for a in range(len(paths)):
            groups.setdefault(find(a), []).append(a)
        del z3
        return list(groups.values())


def divides_by_size(prog: Program) -> bool:
    """Whether some ``a / b`` of the program (a noise scale included) mentions a size in b."""
    sizes = set(prog.size_names)

    def mentions(e: Any) -> bool:
        if isinstance(e, Name):
            return e.name in sizes
        return any(mentions(c) for c in _children(e))

    def walk(e: Any) -> bool:
        if isinstance(e, BinOp) and e.op == "/" and mentions(e.right):
            return True
        return any(walk(c) for c in _children(e))

    return any(walk(s) for s in prog.body)


def _children(e: Any) -> list[Any]:
    if isinstance(e, BinOp):
        return [e.left, e.right]
    if isinstance(e, UnOp):
        return [e.operand]
    if isinstance(e, Call):
        return list(e.args)
    if isinstance(e, ListLit):
        return list(e.items)
    if isinstance(e, Index):
        return [e.index]
    if isinstance(e, Assign):
        return [e.value]
    if isinstance(e, While):
        return [e.cond, *e.body]
    if isinstance(e, If):
        return [e.cond, *e.then, *e.orelse]
    if isinstance(e, Return):
        return list(e.values)
    return []


def distinguishable(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Whether two emitted values can never be equal (bool/constant/continuous-noise)."""
    if a == b or "d" in (a[0], b[0]):
        return False
    if "z" in (a[0], b[0]):
        return "b" in (a[0], b[0])
    return not (a[0] == "r" and b[0] == "r")


PHASE_TEXT = {"lt": "i < p", "eq": "i = p", "gt": "i > p", "all": "every i", "-": ""}


class Search:
    """Shift search, Houdini invariant and the side conditions for one piece and phase kind."""

    def __init__(self, pv: Prover, argmax: str | None) -> None:
        self.pv, self.z3, self.argmax = pv, pv.z3, argmax
        z3 = self.z3
        self.prange: list[Any] = []
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
        self.slots: list[tuple[str, str, int, str]] = []
        self.forced: dict[tuple[str, str, int, str], Any] = {}
        self.free: dict[tuple[str, str, int, str], list[Any]] = {}
        for blk, ph, p1s, p2s in self.blocks:
            self._slots(blk, ph, p1s, p2s)
        self._tie_redraws()
        self.cands = self._candidates()
        #: per (pair, shifts): feasibility and Houdini's solver, reused across shift choices
        self.cache: dict[Any, Any] = {}

    def _allowed(self, ph: str, p: RPath) -> bool:
        if self.argmax is None:
            return True
        if ph == "eq":
            return self.argmax in p.assigned
        if ph == "gt":
            return self.argmax not in p.assigned
        return True

    def hyps(self, blk: str, ph: str) -> list[Any]:
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
                forced: Any = None
                exact: list[Any] = []
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
        for slot, vals in self.free.items():
            blk, _ph, _ci, site = slot
            if blk != "body" or site not in body_site:
                continue
            first = [v for (b, _p, _c, s), vs in self.free.items() for v in vs[:1]
                     if b == "pre" and s == pre_site[body_site[site]]]
            if first:
                k = next((j for j, v in enumerate(vals) if str(v) == str(first[0])), None)
                if k:
                    vals.insert(0, vals.pop(k))

    def _values(self, blk: str, site: str, exact: list[Any]) -> list[Any]:
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

    def _solve(self, t1: Any, t2: Any, S: Any, site: str) -> Any:
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
    def _candidates(self) -> list[tuple[str, Any, Any]]:
        """(text, predicate on the loop head, function of (state⟨1⟩, state⟨2⟩))."""
        pv, z3 = self.pv, self.z3
        consts: set[Fraction] = set()
        if pv.sh.guard_rest is not None:
            consts |= numbers_in(pv.sh.guard_rest, pv.consts)
        ctr = pv.sh.counter
        guards: list[tuple[str, Any]] = [("", None)]
        if pv.phase:
            guards += [("i ≤ p ⇒ ", lambda a: a[ctr] <= pv.p),
                       ("i > p ⇒ ", lambda a: a[ctr] > pv.p)]
        atoms: list[tuple[str, Any]] = []
        bounds = set(DIFF_BOUNDS) | {b for b in (pv.dlo, pv.dhi) if b is not None}

        def diff(v: str, op: str, c: Fraction | int, scaled: bool = False) -> Any:
            def f(a: dict[str, Any], b: dict[str, Any]) -> Any:
                d = b[v] - a[v]
                r = pv.val(c) * a[ctr] if scaled else pv.val(c)
                return {"=": d == r, "≤": d <= r, "≥": d >= r}[op]
            return f

        def one(v: str, op: str, c: Any) -> Any:
            def f(a: dict[str, Any], b: dict[str, Any]) -> Any:
                r = a[ctr] if c == "i" else pv.n if c == "n" else pv.val(c)
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
        out = []
        for gt, g in guards:
            for at, fa in atoms:
                def f(a: dict[str, Any], b: dict[str, Any], g: Any = g, fa: Any = fa) -> Any:
                    return fa(a, b) if g is None else z3.Implies(g(a), fa(a, b))
                out.append((gt + at, f(pv.H1, pv.H2), f))
        return out
