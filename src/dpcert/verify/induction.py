r"""All-sizes proofs: randomness alignment closed by an inductive loop invariant.

A program of the form ``pre; while (i < n [&& g]) { body; i := i + 1; } post; return ...`` is
proved ε-DP for *every* size n (LightDP, Zhang & Kifer POPL 2017; ShadowDP, Wang et al. PLDI
2019; CheckDP, Wang et al. CCS 2020).  Each block is executed once symbolically
(:mod:`dpcert.verify.relexec`) in two runs: run 1 on x with noise η, run 2 on the neighbour x'
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
from typing import Any

from dpcert.verify._deps import require_z3
from dpcert.verify.ir import (
    Assign,
    BinOp,
    BoolLit,
    Call,
    Expr,
    If,
    Name,
    Num,
    Program,
    ProgramError,
    Return,
    Stmt,
    UnOp,
    While,
)
from dpcert.verify.linear import Monomial, PublicPoly
from dpcert.verify.relexec import Carried, Cons, Exec, RPath, Unsupported

__all__ = ["AllSizesProof", "claim_poly", "prove_all_sizes"]

#: Values tried as constant shifts of a sample (in order).
CONST_SHIFTS = (1, 2, -1, -2)
#: Bounds tried in the candidate invariants ``x⟨2⟩ − x⟨1⟩ ≤ c`` / ``≥ c``.
DIFF_BOUNDS = (-2, -1, 0, 1, 2)
#: Largest sum of candidate ranks tried (0 = all shifts 0).
MAX_RANK = 6
#: z3 timeout (ms) of one query.
Z3_MS = 5000


@dataclass(frozen=True)
class AllSizesProof:
    """A checked all-sizes proof: the invariant, shifts and cost bound, as text."""

    text: str
    invariant: tuple[str, ...]
    shifts: tuple[str, ...]
    cost: str


# --------------------------------------------------------------------------------- shape
@dataclass(frozen=True)
class _Shape:
    pre: tuple[Stmt, ...]
    loop: While
    body: tuple[Stmt, ...]  # without the final counter step
    post: tuple[Stmt, ...]
    counter: str
    size: str
    guard_rest: Expr | None


def _flatten(stmts: tuple[Stmt, ...]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, If) and isinstance(s.cond, BoolLit) and s.cond.value and not s.orelse:
            out.extend(_flatten(s.then))
        else:
            out.append(s)
    return out


def _assigns(stmts: tuple[Stmt, ...], name: str) -> list[Assign]:
    out: list[Assign] = []
    for s in stmts:
        if isinstance(s, Assign) and s.target == name:
            out.append(s)
        elif isinstance(s, If):
            out += _assigns(s.then, name) + _assigns(s.orelse, name)
        elif isinstance(s, While):
            out += _assigns(s.body, name)
    return out


def _shape(prog: Program) -> _Shape:
    body = _flatten(prog.body)
    loops = [k for k, s in enumerate(body) if isinstance(s, While)]
    if len(loops) != 1:
        raise Unsupported("the program needs exactly one top-level loop")
    k = loops[0]
    loop = body[k]
    assert isinstance(loop, While)
    cond, rest = loop.cond, None
    if isinstance(cond, BinOp) and cond.op == "&&":
        cond, rest = cond.left, cond.right
    if not (isinstance(cond, BinOp) and cond.op == "<" and isinstance(cond.left, Name)
            and isinstance(cond.right, Name) and cond.right.name in prog.size_names):
        raise Unsupported("the loop condition must be `i < n` or `i < n && ...`")
    ctr, size = cond.left.name, cond.right.name
    step = loop.body[-1] if loop.body else None
    if not (isinstance(step, Assign) and step.target == ctr and isinstance(step.value, BinOp)
            and step.value.op == "+" and isinstance(step.value.left, Name)
            and step.value.left.name == ctr and isinstance(step.value.right, Num)
            and step.value.right.value == 1):
        raise Unsupported(f"the loop must end with `{ctr} := {ctr} + 1;`")
    inner = tuple(loop.body[:-1])
    if _assigns(inner, ctr):
        raise Unsupported(f"the loop body assigns the counter {ctr}")
    if any(d.size != prog.inputs[0].size for d in prog.inputs) or len(prog.inputs) != 1:
        raise Unsupported("all-sizes proofs need a single input array")
    return _Shape(tuple(body[:k]), loop, inner, tuple(body[k + 1:]), ctr, size, rest)


# --------------------------------------------------------------------------------- weights
def _poly(e: Expr, prog: Program) -> PublicPoly:
    consts: dict[str, PublicPoly] = {}
    params = {p.name: p for p in prog.params}

    def go(x: Expr) -> PublicPoly:
        if isinstance(x, Num):
            return PublicPoly.const(x.value)
        if isinstance(x, Name):
            if x.name in prog.size_names:
                return PublicPoly.var(x.name)
            if x.name in consts:
                return consts[x.name]
            if x.name in params and params[x.name].lo is not None and params[x.name].lo >= 0:  # type: ignore[operator]
                return PublicPoly.var(x.name)
            raise ProgramError(f"{x.name!r} must be a positive parameter, constant or size",
                               x.line)
        if isinstance(x, UnOp) and x.op == "-":
            return -go(x.operand)
        if isinstance(x, BinOp) and x.op in {"+", "-", "*", "/"}:
            a, b = go(x.left), go(x.right)
            return {"+": a + b, "-": a - b, "*": a * b}[x.op] if x.op != "/" else a / b
        raise ProgramError("a noise scale or claim must be built from numbers, public "
                           "parameters and sizes with + - * /", getattr(x, "line", None))
    for name, ce in prog.consts:
        consts[name] = go(ce)
    return go(e)


def claim_poly(prog: Program) -> PublicPoly:
    """The claim with sizes kept symbolic (``eps·n``)."""
    return _poly(prog.claim, prog)


def _split(poly: PublicPoly, sizes: tuple[str, ...]) -> dict[Monomial, list[tuple[Fraction, Monomial]]]:
    """Param monomial -> [(coefficient, size monomial)]."""
    out: dict[Monomial, list[tuple[Fraction, Monomial]]] = {}
    for m, c in poly.terms.items():
        pm = tuple((p, k) for p, k in m if p not in sizes)
        sm = tuple((p, k) for p, k in m if p in sizes)
        out.setdefault(pm, []).append((c, sm))
    return out


# --------------------------------------------------------------------------------- the prover
class _Prover:
    def __init__(self, prog: Program, shape: _Shape, deadline: float) -> None:
        self.z3 = z3 = require_z3()
        self.prog, self.sh, self.deadline = prog, shape, deadline
        self.n = z3.Int(shape.size)
        # both runs take the loop guard alike (checked), so they share the counter
        self.i1 = self.i2 = z3.Int(shape.counter)
        self.p = z3.Int("p")
        self.params = {p.name: z3.Real(p.name) for p in prog.params}
        self.consts: dict[str, Fraction] = {}
        for name, ce in prog.consts:
            pc = _poly(ce, prog)
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
        self.claim = _poly(prog.claim, prog)

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
            pol = _poly(e.args[0], self.prog)
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
        out = [self.n >= 0]
        for p in self.prog.params:
            if p.lo is not None:
                out.append(self.params[p.name] > self.val(p.lo))
            if p.hi is not None:
                out.append(self.params[p.name] < self.val(p.hi))
        if D_lo is not None:
            out.append(self.D >= self.val(D_lo))
        if D_hi is not None:
            out.append(self.D <= self.val(D_hi))
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
        z3 = self.z3
        out: set[str] = set()
        todo, seen = [t], set()
        while todo:
            e = todo.pop()
            if e.get_id() in seen:
                continue
            seen.add(e.get_id())
            if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
                out.add(e.decl().name())
            todo.extend(e.children())
        return out

    def numeral(self, t: Any) -> Fraction | None:
        z3 = self.z3
        s = z3.simplify(t)
        if z3.is_int_value(s):
            return Fraction(s.as_long())
        if z3.is_rational_value(s):
            return Fraction(s.numerator_as_long(), s.denominator_as_long())
        return None

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
        out: list[Any] = []
        if blk == "body":
            for v in self.lists:
                out += list(p.env[v].items)
        elif blk == "pre":
            for v in self.lists:
                out += list(p.env[v])
        else:
            assert p.ret is not None
            for r in p.ret:
                if isinstance(r, Carried):
                    out += list(r.items)
                elif isinstance(r, tuple):
                    out += list(r)
                else:
                    out.append(r)
        return out

    def classes(self, blk: str, paths: list[RPath], hyps: list[Any]) -> list[list[int]]:
        """Components of run-1 paths that the output and the noise-free guards cannot tell apart."""
        z3 = self.z3
        ems = [[self.key(x) for x in self.emitted(blk, p)] for p in paths]
        uniform = len({len(e) for e in ems}) <= 1
        parent = list(range(len(paths)))

        def find(a: int) -> int:
            while parent[a] != a:
                a = parent[a]
            return a

        for a, b in itertools.combinations(range(len(paths)), 2):
            if uniform and any(_disting(x, y) for x, y in zip(ems[a], ems[b], strict=True)):
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


def _disting(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Whether two emitted values can never be equal (bool/constant/continuous-noise)."""
    if a == b or "d" in (a[0], b[0]):
        return False
    if "z" in (a[0], b[0]):
        return "b" in (a[0], b[0])
    return not (a[0] == "r" and b[0] == "r")


_PH_TEXT = {"lt": "i < p", "eq": "i = p", "gt": "i > p", "all": "every i", "-": ""}


class _Search:
    """Shift search, Houdini invariant and the side conditions for one piece and phase kind."""

    def __init__(self, pv: _Prover, argmax: str | None) -> None:
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
        self.cands = self._candidates()

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
                forced, exact, in_cmp = None, [], False
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
                                in_cmp = True
                                ex = self._solve(c1.term, c2.term, S, site)
                                if ex is not None and not any(ex.eq(e) for e in exact):
                                    exact.append(ex)
                if forced is not None:
                    self.forced[slot] = forced
                elif pv.phase is None or ph in {"eq", "-"}:
                    self.free[slot] = self._values(blk, site, exact)
        self.cmap[(blk, ph)] = cmap

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
        ex = z3.simplify(R * pv.val(-1 / a))
        if pv.names(ex) & pv.noise_vars:
            return None
        if pv.site_info[site][0] == "dlap":
            c = pv.numeral(ex)
            if not ((c is not None and c.denominator == 1) or ex.sort() == z3.IntSort()):
                return None
        return ex

    # ---- invariant candidates
    def _candidates(self) -> list[tuple[str, Any, Any]]:
        """(text, predicate on the loop head, function of (state⟨1⟩, state⟨2⟩))."""
        pv, z3 = self.pv, self.z3
        consts: set[Fraction] = set()
        if pv.sh.guard_rest is not None:
            consts |= _numbers(pv.sh.guard_rest, pv.consts)
        ctr = pv.sh.counter
        guards: list[tuple[str, Any]] = [("", None)]
        if pv.phase:
            guards += [("i ≤ p ⇒ ", lambda a: a[ctr] <= pv.p),
                       ("i > p ⇒ ", lambda a: a[ctr] > pv.p)]
        atoms: list[tuple[str, Any]] = []
        bounds = set(DIFF_BOUNDS) | {b for b in (pv.dlo, pv.dhi) if b is not None}

        def diff(v: str, op: str, c: Fraction, scaled: bool = False) -> Any:
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
            atoms.append((f"{v}⟨2⟩ = {v}⟨1⟩", diff(v, "=", Fraction(0))))
            for c in sorted(bounds):
                atoms.append((f"{v}⟨2⟩ − {v}⟨1⟩ ≤ {c}", diff(v, "≤", c)))
                atoms.append((f"{v}⟨2⟩ − {v}⟨1⟩ ≥ {c}", diff(v, "≥", c)))
            if pv.phase is None and pv.adj.mode == "all" and v != ctr:
                if pv.dhi is not None:
                    atoms.append((f"{v}⟨2⟩ − {v}⟨1⟩ ≤ {pv.dhi}·i", diff(v, "≤", pv.dhi, True)))
                if pv.dlo is not None:
                    atoms.append((f"{v}⟨2⟩ − {v}⟨1⟩ ≥ {pv.dlo}·i", diff(v, "≥", pv.dlo, True)))
            if v == ctr:
                atoms += [("i ≥ 0", one(v, "≥", Fraction(0))),
                          (f"i ≤ {pv.sh.size}", one(v, "≤", "n"))]
                continue
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


def _numbers(e: Expr, consts: dict[str, Fraction]) -> set[Fraction]:
    if isinstance(e, Num):
        return {e.value}
    if isinstance(e, Name):
        return {consts[e.name]} if e.name in consts else set()
    if isinstance(e, BinOp):
        return _numbers(e.left, consts) | _numbers(e.right, consts)
    if isinstance(e, UnOp):
        return _numbers(e.operand, consts)
    return set()


# --------------------------------------------------------------------------------- checking
class _Fail(Exception):
    pass


def _zero(se: _Search, S: Any) -> Any:
    return se.z3.IntVal(0) if S.sort() == se.z3.IntSort() else se.pv.val(0)


def _sigma(se: _Search, blk: str, ph: str, a: int, assign: dict[Any, Any]) -> list[Any]:
    ci = se.cmap[(blk, ph)][a]
    return [(S, assign.get((blk, ph, ci, site), _zero(se, S)))
            for (site, b), S in se.pv.S.items() if b == blk]


def _sub(se: _Search, e: Any, sigma: list[Any]) -> Any:
    if isinstance(e, (bool, Carried, tuple)) or not sigma:
        return e
    return se.z3.substitute(e, *sigma)


def _pairs(se: _Search, assign: dict[Any, Any]) -> list[tuple[str, str, RPath, RPath, list[Any], list[Any]]]:
    out = []
    for blk, ph, p1s, p2s in se.blocks:
        for a, p1 in enumerate(p1s):
            sig = _sigma(se, blk, ph, a, assign)
            c1 = se.pv.strict(p1)
            for p2 in p2s:
                cons = c1 + [_sub(se, c.z3(), sig) for c in p2.cons]
                if se.pv.check(*se.hyps(blk, ph), *cons) == "unsat":
                    continue  # infeasible even without the invariant
                out.append((blk, ph, p1, p2, sig, cons))
    return out


def _mapping(se: _Search, p1: RPath, p2: RPath, sig: list[Any], step: bool) -> list[Any]:
    pv = se.pv
    out = []
    for v in pv.numeric:
        x1, x2 = p1.env[v], _sub(se, p2.env[v], sig)
        if step and v == pv.sh.counter:
            x1, x2 = x1 + 1, x2 + 1
        out += [(pv.H1[v], _coerce(se, pv.H1[v], x1)), (pv.H2[v], _coerce(se, pv.H2[v], x2))]
    return out


def _coerce(se: _Search, target: Any, x: Any) -> Any:
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


def _post_states(se: _Search, p1: RPath, p2: RPath, sig: list[Any],
                 step: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    pv = se.pv
    a, b = {}, {}
    for h1, h2 in zip(_mapping(se, p1, p2, sig, step)[::2], _mapping(se, p1, p2, sig, step)[1::2],
                      strict=True):
        name = next(v for v in pv.numeric if pv.H1[v] is h1[0])
        a[name], b[name] = h1[1], h2[1]
    return a, b


def _houdini(se: _Search, pairs: list[Any]) -> list[tuple[str, Any]]:
    """The largest inductive subset of the candidate facts (Flanagan & Leino's Houdini)."""
    z3 = se.z3
    alive = set(range(len(se.cands)))
    work: list[tuple[Any, list[Any], list[Any] | None]] = []
    for k, (blk, ph, p1, p2, sig, cons) in enumerate(pairs):
        if blk == "post":
            continue
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
                    raise _Fail("z3 could not decide an invariant step")
                m = s.model()
                dead = {j for j in alive if z3.is_true(m.eval(qs[j], model_completion=True))}
                if not dead:
                    raise _Fail("internal: Houdini made no progress")
                alive -= dead
                changed = True
    return [(se.cands[j][0], se.cands[j][1]) for j in sorted(alive)]


def _equal_out(se: _Search, hyps: list[Any], e1: list[Any], e2: list[Any],
               sig: list[Any]) -> bool:
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


def _ret_struct(r: tuple[Any, ...] | None) -> tuple[Any, ...]:
    assert r is not None
    return tuple(("L", x.name) if isinstance(x, Carried) else
                 ("T", len(x)) if isinstance(x, tuple) else ("s",) for x in r)


def _obligations(se: _Search, pairs: list[Any], inv: list[tuple[str, Any]]) -> None:
    pv, z3 = se.pv, se.z3
    invp = [p for _, p in inv]
    head = se.side + invp
    if pv.check(*head, pv.g1, z3.Not(pv.g2)) != "unsat" or \
            pv.check(*head, z3.Not(pv.g1), pv.g2) != "unsat":
        raise _Fail("the two runs may leave the loop at different iterations")
    for blk, ph, p1, p2, sig, cons in pairs:
        if blk == "pre":
            hyps = se.side + cons
            ctr = pv.sh.counter
            if not pv.valid(hyps, p1.env[ctr] == _sub(se, p2.env[ctr], sig)):
                raise _Fail("the two runs start the loop at different counters")
        elif blk == "body":
            hyps = se.hyps(blk, ph) + invp + cons
        else:
            hyps = head + [pv.exit1, pv.exit2] + cons
            if _ret_struct(p1.ret) != _ret_struct(p2.ret) and pv.check(*hyps) != "unsat":
                raise _Fail("the two runs return differently shaped outputs")
        if not _equal_out(se, hyps, pv.emitted(blk, p1), pv.emitted(blk, p2), sig):
            where = {"pre": "before the loop", "body": f"in the loop ({_PH_TEXT[ph]})",
                     "post": "at the end"}[blk]
            raise _Fail(f"an output {where} differs between the aligned runs")
        for site in p1.samples:
            if pv.site_info[site][0] == "expo":
                S = pv.S[(site, blk)]
                s_val = dict((str(a), b) for a, b in sig)[str(S)]
                if not pv.valid(hyps, pv.eta[(site, blk)] + s_val >= 0):
                    raise _Fail("a shifted exponential sample may leave the support")


def _argmax_class_empty(se: _Search) -> bool:
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
def _weights(se: _Search, site: str) -> dict[Monomial, Any]:
    """1/b of a site per parameter monomial, as a z3 coefficient (may involve the size)."""
    pv, z3 = se.pv, se.z3
    inv = pv.site_info[site][1].reciprocal()
    out: dict[Monomial, Any] = {}
    for pm, lst in _split(inv, pv.prog.size_names).items():
        tot = None
        for c, sm in lst:
            t = pv.val(c)
            for _, k in sm:
                t = t * (pv.n ** k if k > 0 else 1 / (pv.n ** (-k)))
            tot = t if tot is None else tot + t
        out[pm] = tot
    del z3
    return out


def _cost(se: _Search, blk: str, p1: RPath, sig: list[Any]) -> dict[Monomial, Any]:
    z3 = se.z3
    sv = {str(a): b for a, b in sig}
    out: dict[Monomial, Any] = {}
    for site in p1.samples:
        s = sv[str(se.pv.S[(site, blk)])]
        mag = z3.If(s >= 0, s, 0) if se.pv.site_info[site][0] == "expo" else \
            z3.If(s >= 0, s, -s)
        for m, w in _weights(se, site).items():
            out[m] = out.get(m, se.pv.val(0)) + w * mag
    return out


def _maximize(se: _Search, hyps: list[Any], e: Any) -> Fraction:
    z3 = se.z3
    opt = z3.Optimize()
    opt.set("timeout", Z3_MS)
    opt.add(*hyps)
    h = opt.maximize(e)
    if opt.check() != z3.sat:
        return Fraction(0)  # an infeasible path costs nothing
    v = opt.upper(h)
    x = se.pv.numeral(v) if z3.is_arith(v) else None
    if x is None:
        raise _Fail("the cost of an iteration is unbounded under the invariant")
    return x


def _cost_bound(se: _Search, pairs: list[Any], inv: list[tuple[str, Any]]) -> str:
    pv, z3 = se.pv, se.z3
    invp = [p for _, p in inv]
    mons: set[Monomial] = set(_split(pv.claim, pv.prog.size_names))
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
    ctrs: list[tuple[str, Any, Any]] = []
    if pv.phase:
        ind = z3.If(z3.And(pv.p >= 0, pv.i1 > pv.p), 1, 0)
        ctrs.append(("[i > p]", ind, None))
    for v in [x for x in pv.numeric if x != pv.sh.counter] + [pv.sh.counter]:
        v0s = {pv.numeral(pre.env[v]) for pre in pv.pre1}
        if len(v0s) == 1 and None not in v0s:
            ctrs.append((v, pv.H1[v], v0s.pop()))
    beta: dict[Monomial, tuple[str, Any, Fraction, Fraction]] = {}
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
            raise _Fail("no counter pays for the cost of the iterations")
    # exit: alpha + beta*(v - v0) + cost(post) <= claim, for every monomial
    claim = {m: _coef(se, lst) for m, lst in _split(pv.claim, pv.prog.size_names).items()}
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
            raise _Fail("the aligned cost may exceed the claim")
        del cons
    parts = []
    for m in sorted(mons):
        name, _t, b, v0 = beta[m]
        mono = str(PublicPoly({m: Fraction(1)})) if m else "1"
        vv = name if v0 == 0 else f"({name} − {v0})"
        parts.append(f"({alpha.get(m, Fraction(0))} + {b}·{vv})·{mono}")
    return " + ".join(parts)


def _mono(se: _Search, m: Monomial) -> Any:
    """The value of a parameter monomial (``eps^-1`` -> 1/eps) as a z3 term."""
    t = se.pv.val(1)
    for name, k in m:
        x = se.pv.params[name]
        for _ in range(abs(k)):
            t = t * x if k > 0 else t / x
    return t


def _coef(se: _Search, lst: list[tuple[Fraction, Monomial]]) -> Any:
    pv = se.pv
    tot = pv.val(0)
    for c, sm in lst:
        t = pv.val(c)
        for _, k in sm:
            t = t * (pv.n ** k if k > 0 else 1 / (pv.n ** (-k)))
        tot = tot + t
    return tot


# --------------------------------------------------------------------------------- search
def _search(se: _Search) -> tuple[dict[Any, Any], list[tuple[str, Any]], str] | str:
    pv = se.pv
    if se.argmax is not None and not _argmax_class_empty(se):
        return f"the argmax split needs every run to assign {se.argmax}"
    free = list(se.free)
    reason = "no alignment found"
    for ranks in _by_rank_sum([len(se.free[f]) for f in free], MAX_RANK):
        if time.monotonic() > pv.deadline:
            raise TimeoutError
        assign = dict(se.forced)
        assign.update({f: se.free[f][r - 1] for f, r in zip(free, ranks, strict=True) if r})
        try:
            pairs = _pairs(se, assign)
            inv = _houdini(se, pairs)
            _obligations(se, pairs, inv)
            cost = _cost_bound(se, pairs, inv)
        except _Fail as e:
            reason = str(e)
            continue
        return assign, inv, cost
    return reason


def _by_rank_sum(sizes: list[int], most: int) -> Any:
    """Tuples r with 0 ≤ r_k ≤ sizes[k] (0: shift 0, j: the j-th value) by increasing sum."""
    def gen(k: int, left: int) -> Any:
        if k == len(sizes):
            if left == 0:
                yield ()
            return
        for r in range(min(left, sizes[k]) + 1):
            for rest in gen(k + 1, left - r):
                yield (r, *rest)
    for t in range(most + 1):
        yield from gen(0, t)


def _argmax_var(prog: Program, sh: _Shape) -> str | None:
    rets = [s for s in sh.post if isinstance(s, Return)]
    for r in rets:
        for e in r.values:
            if isinstance(e, Name):
                asg = _assigns(sh.body, e.name)
                if asg and all(isinstance(a.value, Name) and a.value.name == sh.counter
                               for a in asg) and not _assigns(sh.post, e.name):
                    return e.name
    del prog
    return None


def _ranges(lo: Fraction | None, hi: Fraction | None) -> list[tuple[Fraction | None, Fraction | None]]:
    out = [(lo, hi)]
    if lo is not None and hi is not None and lo != -hi:
        out.append((-hi, -lo))
    return out


def prove_all_sizes(prog: Program, deadline: float) -> AllSizesProof | str:
    """An inductive proof for every size, or the reason why none was found.

    Raises
    ------
    TimeoutError
        When ``deadline`` (a :func:`time.monotonic` value) passes.
    """
    if not prog.size_names:
        return "the program has no input of unknown size"
    try:
        sh = _shape(prog)
    except Unsupported as e:
        return f"outside the all-sizes fragment: {e}"
    adj = prog.adjacency[prog.inputs[0].name]
    argmax = _argmax_var(prog, sh)
    kinds: list[str | None] = ["one"] if adj.mode == "one" else [None]
    if argmax is not None and adj.mode == "all":
        kinds.insert(0, "argmax")
    sections: list[str] = []
    invs: list[str] = []
    shifts: list[str] = []
    costs: list[str] = []
    for lo, hi in _ranges(adj.lo, adj.hi):
        reason = "no alignment found"
        for kind in kinds:
            try:
                pv = _Prover(prog, sh, deadline)
                pv.run_blocks(lo, hi, kind)
                se = _Search(pv, argmax if kind == "argmax" else None)
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
def _tight(inv: list[tuple[str, Any]]) -> list[str]:
    """Drop candidate facts implied by a tighter one of the same form."""
    import re

    best: dict[tuple[str, str], tuple[Fraction, str]] = {}
    rest: list[str] = []
    for t, _ in inv:
        m = re.fullmatch(r"(.*?)(≤|≥) (-?\d+(?:/\d+)?)", t)
        if m is None:
            rest.append(t)
            continue
        k = (m.group(1), m.group(2))
        c = Fraction(m.group(3))
        if k not in best or (c < best[k][0] if m.group(2) == "≤" else c > best[k][0]):
            best[k] = (c, t)
    eqs = {t.split(" ⇒ ")[-1].split(" = ")[0] + "|" + (t.split(" ⇒ ")[0] if " ⇒ " in t else "")
           for t in rest if "⟨2⟩ = " in t}
    out = list(rest)
    for (lhs, _op), (_c, t) in best.items():
        g = lhs.split(" ⇒ ")[0] if " ⇒ " in lhs else ""
        var = lhs.split(" ⇒ ")[-1].split(" − ")[0]
        if f"{var}|{g}" in eqs:
            continue
        out.append(t)
    return out


def _render_piece(se: _Search, lo: Fraction | None, hi: Fraction | None, kind: str | None,
                  assign: dict[Any, Any], inv: list[tuple[str, Any]],
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
        where = {"pre": "before the loop", "post": "after the loop"}.get(blk, f"iteration, {_PH_TEXT[ph]}")
        ncls = max(se.cmap[(blk, ph)]) + 1 if se.cmap[(blk, ph)] else 1
        cl = f", run-1 path class {ci + 1}/{ncls}" if ncls > 1 else ""
        how = "exact" if slot in se.forced else "chosen"
        s = "0" if val is None else str(se.z3.simplify(val))
        rule = {"lap": "Lap", "dlap": "DLap", "expo": "Expo"}[kind_s]
        t = f"  {rule:<5} line {line} {kind_s}({pol}) [{where}{cl}]: η⟨2⟩ = η⟨1⟩ + {s}" + \
            (f"   ({how})" if val is not None else "")
        lines.append(t)
        sh_lines.append(t.strip())
    tight = _tight(inv)
    lines.append("  While  loop invariant Inv (Houdini; base and step discharged by z3 with "
                 f"{pv.sh.size}, i{', p' if kind else ''} symbolic):")
    lines += [f"           {t}" for t in tight]
    lines.append(f"  Seq    aligned cost ≤ {cost}  (α + β·counter, invariant)")
    lines.append("  Conseq at loop exit: outputs equal in both runs and cost ≤ claim   ✓")
    return "\n".join(lines), tight, sh_lines


def _render(prog: Program, sh: _Shape, sections: list[str]) -> str:
    claim = str(_poly(prog.claim, prog))
    name = prog.name
    lines = [f"Theorem. ⊢_({claim}, 0) {name} ~ {name} : Adj(x⟨1⟩, x⟨2⟩) ⇒ ={{out}}"
             "   [all sizes]",
             f"  i.e. {name} is ({claim}, 0)-DP for every size {sh.size} ≥ 0 and every value "
             "of the public parameters.",
             "",
             f"Loop: while ({sh.counter} < {sh.size} ...) -- proved once for a symbolic "
             f"{sh.size} by induction on {sh.counter}",
             "(randomness alignment with loop invariants: LightDP, ShadowDP, CheckDP).",
             "Rules: Lap/DLap/Expo shift a sample (cost |shift|/b, expo max(shift, 0)/b);",
             "While closes the loop with the invariant; Seq adds costs; Conseq compares",
             "with the claim; the pointwise rule (Barthe et al. LICS 2016) needs outputs",
             "equal in both runs, shifts chosen per class of run-1 paths that the output or",
             "the noise-free guards tell apart.", ""]
    lines += sections
    lines += ["", f"Conclusion: {name} is ({claim}, 0)-differentially private for all sizes.  ∎"]
    return "\n".join(lines)
