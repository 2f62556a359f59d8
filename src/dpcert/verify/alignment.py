"""The relational model of an all-sizes proof: both runs of every block, once, symbolically.

`Prover` runs ``pre``, the loop body (per phase of the symbolic index p) and ``post`` of
both runs once, symbolically (`dpcert.verify.relexec`): run 1 on x with noise η, run 2 on
the neighbour with noise η + S, and groups run-1 paths into classes that the output or the
noise-free guards tell apart (a shift may differ only between such classes, which keeps the
coupling injective).  The shift slots and invariant candidates are in
`dpcert.verify.slots`.
"""

from __future__ import annotations

import itertools
import time
from fractions import Fraction
from typing import TYPE_CHECKING

from dpcert.verify._deps import require_z3
from dpcert.verify.conds import ValueClass, z3_names, z3_numeral
from dpcert.verify.ir import Call, Program
from dpcert.verify.linear import PublicPoly
from dpcert.verify.loopshape import LoopShape, divides_by_size, public_poly
from dpcert.verify.relexec import Carried, Exec, NoiseFn, RPath, Unsupported, Value

if TYPE_CHECKING:
    from z3 import ArithRef, BoolRef, Solver

__all__ = ["Prover", "Z3_MS", "distinguishable"]

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
        self.eta: dict[tuple[str, str], ArithRef] = {}
        self.S: dict[tuple[str, str], ArithRef] = {}
        self.site_info: dict[str, tuple[str, PublicPoly, int]] = {}
        self.claim = public_poly(prog.claim, prog)
        #: smallest size covered: 1 when the program divides by the size (``s / n``)
        self.min_n = 1 if divides_by_size(prog) else 0

    # ---- z3 helpers
    def val(self, x: Fraction | int) -> ArithRef:
        x = Fraction(x)
        return self.z3.RealVal(f"{x.numerator}/{x.denominator}")

    def solver(self) -> Solver:
        s = self.z3.Solver()
        s.set("timeout", max(1, min(Z3_MS, int(1000 * (self.deadline - time.monotonic())))))
        return s

    def check(self, *fs: BoolRef) -> str:
        if time.monotonic() > self.deadline:
            raise TimeoutError
        s = self.solver()
        s.add(*fs)
        r = s.check()
        return "sat" if r == self.z3.sat else ("unsat" if r == self.z3.unsat else "unknown")

    def valid(self, hyp: list[BoolRef], goal: BoolRef) -> bool:
        return self.check(*hyp, self.z3.Not(goal)) == "unsat"

    # ---- noise
    def _noise(self, blk: str, run: int) -> NoiseFn:
        z3 = self.z3

        def f(e: Call, st: RPath) -> ArithRef:
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

    def executor(self, blk: str, run: int, data: ArithRef | None) -> Exec:
        sizes = {self.sh.size: self.n}
        return Exec(sizes, self.consts, self.params, {self.inp.name: data}, self.sh.counter,
                    self._noise(blk, run), self.noise_vars, {self.inp.name})

    def side(self, D_lo: Fraction | None, D_hi: Fraction | None) -> list[BoolRef]:
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

    def data_cons(self, q2: ArithRef) -> list[BoolRef]:
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
            self.H1: dict[str, ArithRef] = {}
            self.H2: dict[str, ArithRef] = {}
            for v in self.numeric:
                if v == sh.counter:
                    self.H1[v], self.H2[v] = self.i1, self.i2
                else:
                    mk = z3.Int if v in ints else z3.Real
                    self.H1[v], self.H2[v] = mk(f"{v}⟨1⟩"), mk(f"{v}⟨2⟩")
            env1: dict[str, Value] = {**self.H1, **{v: Carried(v) for v in self.lists}}
            env2: dict[str, Value] = {**self.H2, **{v: Carried(v) for v in self.lists}}
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

    def _guard(self, env: dict[str, Value], run: int, truth: bool) -> BoolRef:
        ex = self.executor("body", run, self.q1)
        outs = ex.cond(self.sh.loop.cond, RPath(env=dict(env)))
        return self.z3.Or([self.z3.And([c.z3() for c in cs]) for cs, t in outs if t == truth])

    def _loop_paths(self, env: dict[str, Value], run: int, data: ArithRef) -> list[RPath]:
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
                    c = p.env.get(v)
                    if not (isinstance(c, Carried) and c.name == v):
                        raise Unsupported(f"list {v} is not only appended to in the loop")
                out.append(p)
        return out

    # ---- terms
    def names(self, t: ArithRef | BoolRef) -> set[str]:
        return z3_names(self.z3, t)

    def numeral(self, t: ArithRef | BoolRef) -> Fraction | None:
        return z3_numeral(self.z3, t)

    def strict(self, p: RPath) -> list[BoolRef]:
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

    def key(self, v: Value) -> ValueClass:
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

    def emitted(self, blk: str, p: RPath) -> list[Value]:
        """Every value a block outputs (appends to carried lists; for ``post`` the return)."""
        return [x for g in self.emitted_groups(blk, p) for x in g]

    def emitted_groups(self, blk: str, p: RPath) -> list[list[Value]]:
        """The block's output values, one group per list (or returned value)."""
        if blk == "body":
            return [list(_carried(p.env[v]).items) for v in self.lists]
        if blk == "pre":
            return [list(_literal(p.env[v])) for v in self.lists]
        assert p.ret is not None
        out: list[list[Value]] = []
        for r in p.ret:
            if isinstance(r, Carried):
                out.append(list(r.items))
            elif isinstance(r, tuple):
                out.append(list(r))
            else:
                out.append([r])
        return out

    def classes(self, blk: str, paths: list[RPath], hyps: list[BoolRef]) -> list[list[int]]:
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


def _carried(x: Value) -> Carried:
    """A list variable after the loop body (`Prover._loop_paths` refused any other)."""
    assert isinstance(x, Carried), x
    return x


def _literal(x: Value) -> tuple[Value, ...]:
    """A list variable after ``pre``: the values of the literal it was set to."""
    assert isinstance(x, tuple), x
    return x


def distinguishable(a: ValueClass, b: ValueClass) -> bool:
    """Whether two emitted values can never be equal (bool/constant/continuous-noise)."""
    if a == b or "d" in (a[0], b[0]):
        return False
    if "z" in (a[0], b[0]):
        return "b" in (a[0], b[0])
    return not (a[0] == "r" and b[0] == "r")
