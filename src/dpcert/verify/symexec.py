"""Symbolic execution of a DP program at a fixed size ``n``: the program as a set of paths.

All loops are unrolled (the size is concrete), every branch on a non-constant condition splits the
run, and every sampling instruction becomes a named noise variable ``η…`` (one per static
instance: call site plus loop iteration numbers, so each is drawn at most once per run and the
run can be read as if all noise were drawn up front).  A `Path` is a conjunction of linear
constraints over the data atoms, public parameters and noise, with its outputs as linear forms.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal, Union, cast

from dpcert.verify.conds import as_less, outcomes
from dpcert.verify.ir import (
    Assign,
    BinOp,
    BoolLit,
    Call,
    Expr,
    If,
    Index,
    ListLit,
    Name,
    Num,
    Program,
    ProgramError,
    Return,
    Stmt,
    UnOp,
    While,
)
from dpcert.verify.linear import LinForm, PublicPoly, fmt_frac

__all__ = ["Clamp", "Constraint", "Noise", "Path", "Unrolled", "unroll"]

#: Paths beyond which symbolic execution gives up.
MAX_PATHS = 4096
#: Loop iterations (over all loops of one path) beyond which a loop counts as unbounded.
MAX_STEPS = 10_000

NoiseKind = Literal["lap", "dlap", "expo", "gauss"]
Op = Literal["<", "<=", "==", "!="]
Value = Union[LinForm, bool, tuple["Value", ...]]  # noqa: UP007
Scalar = LinForm | bool


@dataclass(frozen=True)
class Noise:
    """One sampling instance: ``kind`` with scale ``scale`` drawn at ``line``."""

    name: str
    kind: NoiseKind
    scale: PublicPoly
    line: int

    @property
    def continuous(self) -> bool:
        """Laplace and exponential noise have densities; the discrete Laplace has not."""
        return self.kind != "dlap"

    def describe(self) -> str:
        """``lap(2·eps^-1)``-style text."""
        return f"{self.kind}({self.scale})"


@dataclass(frozen=True)
class Clamp:
    """A data atom ``clamp(arg, lo, hi)`` of a noise-free argument."""

    name: str
    arg: LinForm
    lo: Fraction
    hi: Fraction


@dataclass(frozen=True)
class Constraint:
    """``form op 0`` on a path; ``line`` is the guard's line."""

    form: LinForm
    op: Op
    line: int

    def negate(self) -> Constraint:
        """The complementary constraint."""
        if self.op == "<":
            return Constraint(-self.form, "<=", self.line)
        if self.op == "<=":
            return Constraint(-self.form, "<", self.line)
        return Constraint(self.form, "!=" if self.op == "==" else "==", self.line)

    def __str__(self) -> str:
        return _pretty_cmp(self.form, self.op)


def _pretty_cmp(form: LinForm, op: str) -> str:
    pos = LinForm({k: v for k, v in form.terms.items() if v > 0})
    neg = LinForm({k: -v for k, v in form.terms.items() if v < 0})
    if form.const > 0:
        pos = pos + form.const
    else:
        neg = neg - form.const
    return f"{pos} {op} {neg}"


@dataclass(frozen=True)
class Path:
    """A run's path: its constraints, drawn noise and outputs (each a form or a boolean)."""

    constraints: tuple[Constraint, ...]
    outputs: tuple[Scalar, ...]
    drawn: tuple[str, ...]


@dataclass(frozen=True)
class Unrolled:
    """The program at size ``n`` as paths, with the tables needed to interpret them."""

    program: Program
    n: int
    paths: tuple[Path, ...]
    noises: dict[str, Noise]
    clamps: dict[str, Clamp]
    data: tuple[str, ...]  # data atom names q[i] in order
    data_info: dict[str, tuple[str, int]]  # atom -> (input name, index)
    params: tuple[str, ...]
    claim: PublicPoly
    consts: dict[str, Fraction] = field(default_factory=dict)

    def is_continuous_noise(self, var: str) -> bool:
        """Whether ``var`` names a noise with a density."""
        nz = self.noises.get(var)
        return nz is not None and nz.continuous


@dataclass
class _State:
    env: dict[str, Value]
    constraints: list[Constraint]
    drawn: list[str]
    iters: list[int]
    steps: int = 0

    def fork(self) -> _State:
        return _State(dict(self.env), list(self.constraints), list(self.drawn), list(self.iters),
                      self.steps)


class _Executor:
    def __init__(self, prog: Program, n: int, deadline: float | None = None) -> None:
        self.deadline = deadline
        self.prog = prog
        self.n = n
        self.sizes = set(prog.size_names)
        self.params = {p.name: p for p in prog.params}
        self.noises: dict[str, Noise] = {}
        self.clamps: dict[str, Clamp] = {}
        self.clamp_keys: dict[object, str] = {}
        self.site_names: dict[str, str] = {}
        self.consts: dict[str, Fraction] = {}
        self.inputs = {d.name: d for d in prog.inputs}
        self.input_len: dict[str, int] = {}
        for cname, cexpr in prog.consts:
            v = self.scale_expr(cexpr)
            if not v.is_const():
                raise ProgramError(f"const {cname} must be a number", getattr(cexpr, "line", None))
            self.consts[cname] = v.const_value()
        for d in prog.inputs:
            size = self.scale_expr(d.size)
            if not size.is_const() or size.const_value().denominator != 1 or size.const_value() < 0:
                raise ProgramError(f"size of input {d.name} must be a natural number", d.line)
            self.input_len[d.name] = int(size.const_value())

    # ---------------------------------------------------------------- public expressions
    def scale_expr(self, e: Expr) -> PublicPoly:
        """Evaluate a public expression (noise scale, claim, size) as a Laurent polynomial."""
        if isinstance(e, Num):
            return PublicPoly.const(e.value)
        if isinstance(e, Name):
            if e.name in self.sizes:
                return PublicPoly.const(self.n)
            if e.name in self.consts:
                return PublicPoly.const(self.consts[e.name])
            if e.name in self.params:
                p = self.params[e.name]
                if p.lo is None or p.lo < 0:
                    raise ProgramError(
                        f"parameter {e.name} is used in a noise scale or claim, so it must be "
                        f"declared positive (`param {e.name} > 0;`)", e.line)
                return PublicPoly.var(e.name)
            raise ProgramError(f"{e.name!r} is not a public parameter, constant or size", e.line)
        if isinstance(e, UnOp) and e.op == "-":
            return -self.scale_expr(e.operand)
        if isinstance(e, BinOp) and e.op in {"+", "-", "*", "/"}:
            a, b = self.scale_expr(e.left), self.scale_expr(e.right)
            if e.op == "+":
                return a + b
            if e.op == "-":
                return a - b
            if e.op == "*":
                return a * b
            try:
                return a / b
            except ZeroDivisionError as err:
                raise ProgramError(f"division by {b} in a public expression", e.line) from err
        raise ProgramError("a noise scale or claim must be built from numbers, public "
                           "parameters and sizes with + - * /", getattr(e, "line", None))

    # ---------------------------------------------------------------- values
    def value(self, e: Expr, st: _State) -> Value:
        if isinstance(e, Num):
            return LinForm.num(e.value)
        if isinstance(e, BoolLit):
            return e.value
        if isinstance(e, Name):
            if e.name in st.env:
                return st.env[e.name]
            if e.name in self.sizes:
                return LinForm.num(self.n)
            if e.name in self.consts:
                return LinForm.num(self.consts[e.name])
            if e.name in self.params:
                return LinForm.var(e.name)
            if e.name in self.inputs:
                raise ProgramError(f"input {e.name} must be indexed, e.g. {e.name}[i]", e.line)
            raise ProgramError(f"undefined name {e.name!r}", e.line)
        if isinstance(e, Index):
            idx = self.value(e.index, st)
            if not isinstance(idx, LinForm) or not idx.is_const() or idx.const.denominator != 1:
                raise ProgramError(f"index of {e.base} must be a known integer", e.line)
            i = int(idx.const)
            if e.base in self.inputs:
                size = self.input_len[e.base]
                if not 0 <= i < size:
                    raise ProgramError(f"index {i} out of range for {e.base} of size {size}",
                                       e.line)
                return LinForm.var(f"{e.base}[{i}]")
            seq = self.value(Name(e.base, e.line), st)
            if not isinstance(seq, tuple):
                raise ProgramError(f"{e.base} is not a list", e.line)
            if not 0 <= i < len(seq):
                raise ProgramError(f"index {i} out of range for {e.base} of length {len(seq)}",
                                   e.line)
            return seq[i]
        if isinstance(e, ListLit):
            return tuple(self.value(x, st) for x in e.items)
        if isinstance(e, UnOp):
            v = self.value(e.operand, st)
            if e.op == "-" and isinstance(v, LinForm):
                return -v
            if e.op == "!" and isinstance(v, bool):
                return not v
            raise ProgramError(f"operator {e.op} does not apply here", e.line)
        if isinstance(e, Call):
            return self.call(e, st)
        assert isinstance(e, BinOp)
        if e.op in {"<", "<=", ">", ">=", "==", "!=", "&&", "||"}:
            outcomes = self.cond(e, st)
            if len(outcomes) == 1 and not outcomes[0][0]:
                return outcomes[0][1]
            raise ProgramError("a comparison of non-constant values may only be used as an "
                               "`if`/`while` condition", e.line)
        a, b = self.value(e.left, st), self.value(e.right, st)
        if e.op == "++":
            if isinstance(a, tuple) and isinstance(b, tuple):
                return a + b
            raise ProgramError("`++` joins two lists (write r ++ [x])", e.line)
        if not isinstance(a, LinForm) or not isinstance(b, LinForm):
            raise ProgramError(f"operator {e.op} needs numbers", e.line)
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if e.op == "*":
            if a.is_const():
                return b * a.const
            if b.is_const():
                return a * b.const
            raise ProgramError("product of two non-constant values (the language is linear)",
                               e.line)
        if not b.is_const() or b.const == 0:
            raise ProgramError("division only by a non-zero constant", e.line)
        return a * (1 / b.const)

    def call(self, e: Call, st: _State) -> Value:
        if e.func == "clamp":
            arg = self.value(e.args[0], st)
            lo, hi = self.value(e.args[1], st), self.value(e.args[2], st)
            if not (isinstance(lo, LinForm) and lo.is_const() and isinstance(hi, LinForm)
                    and hi.is_const()) or lo.const > hi.const:
                raise ProgramError("clamp bounds must be constants with lo <= hi", e.line)
            if not isinstance(arg, LinForm):
                raise ProgramError("clamp needs a number", e.line)
            if arg.is_const():
                return LinForm.num(min(max(arg.const, lo.const), hi.const))
            if any(v in self.noises for v in arg.vars()):
                raise ProgramError("clamp of a noisy value is not supported (use if/else)", e.line)
            key = (arg.key(), lo.const, hi.const)
            if key not in self.clamp_keys:
                name = f"clamp({arg}, {fmt_frac(lo.const)}, {fmt_frac(hi.const)})"
                self.clamp_keys[key] = name
                self.clamps[name] = Clamp(name, arg, lo.const, hi.const)
            return LinForm.var(self.clamp_keys[key])
        scale = self.scale_expr(e.args[0])
        if len(scale.terms) != 1 or next(iter(scale.terms.values())) <= 0:
            raise ProgramError(f"noise scale {scale} must be a single positive term such as "
                               "2/eps", e.line)
        base = self.site_names.setdefault(e.site, self._site_name(e))
        name = base + (f"[{','.join(map(str, st.iters))}]" if st.iters else "")
        if name in st.drawn:  # pragma: no cover - cannot happen: iters are unique per path
            raise ProgramError("internal: sample drawn twice", e.line)
        self.noises.setdefault(name, Noise(name, e.func, scale, e.line))  # type: ignore[arg-type,unused-ignore]
        st.drawn.append(name)
        return LinForm.var(name)

    def _site_name(self, e: Call) -> str:
        used = set(self.site_names.values())
        name = f"η{e.line}"
        if name in used:
            name = f"η{e.site.replace(':', '.')}"
        return name

    # ---------------------------------------------------------------- conditions
    def cond(self, e: Expr, st: _State) -> list[tuple[list[Constraint], bool]]:
        """Disjoint outcomes (constraints, truth value) of a condition."""
        return outcomes(e, st, self._atom)

    def _atom(self, e: Expr, st: _State) -> list[tuple[list[Constraint], bool]]:
        if isinstance(e, BinOp) and e.op in {"<", "<=", ">", ">=", "==", "!="}:
            a, b = self.value(e.left, st), self.value(e.right, st)
            if isinstance(a, bool) and isinstance(b, bool) and e.op in {"==", "!="}:
                return [([], (a == b) == (e.op == "=="))]
            if not isinstance(a, LinForm) or not isinstance(b, LinForm):
                raise ProgramError(f"comparison {e.op} needs numbers", e.line)
            form, op = as_less(e.op, a - b)
            c = Constraint(form, cast(Op, op), e.line)
            if form.is_const():
                return [([], _holds(form.const, c.op))]
            if c.op in {"==", "!="} and any(self._cont(v) for v in form.vars()):
                # equality with continuous noise holds on a null set: drop that branch
                return [([], c.op == "!=")]
            return [([c], True), ([c.negate()], False)]
        v = self.value(e, st)
        if isinstance(v, bool):
            return [([], v)]
        raise ProgramError("condition is not a boolean", getattr(e, "line", None))

    def _cont(self, var: str) -> bool:
        nz = self.noises.get(var)
        return nz is not None and nz.continuous

    # ---------------------------------------------------------------- statements
    def block(self, stmts: tuple[Stmt, ...], states: list[_State],
              done: list[tuple[_State, tuple[Scalar, ...]]]) -> list[_State]:
        for s in stmts:
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise TimeoutError
            nxt: list[_State] = []
            for st in states:
                nxt.extend(self.stmt(s, st, done))
            states = nxt
            if len(states) + len(done) > MAX_PATHS:
                raise _TooManyPaths(s.line)
        return states

    def stmt(self, s: Stmt, st: _State,
             done: list[tuple[_State, tuple[Scalar, ...]]]) -> list[_State]:
        if isinstance(s, Assign):
            if s.target in self.inputs or s.target in self.params or s.target in self.consts:
                raise ProgramError(f"cannot assign to {s.target!r}, which is declared", s.line)
            st.env[s.target] = self.value(s.value, st)
            return [st]
        if isinstance(s, Return):
            outs: list[Scalar] = []
            for e in s.values:
                _flatten(self.value(e, st), outs)
            done.append((st, tuple(outs)))
            return []
        if isinstance(s, If):
            res: list[_State] = []
            outcomes = self.cond(s.cond, st)
            for cons, truth in outcomes:
                br = st.fork() if len(outcomes) > 1 else st
                br.constraints.extend(cons)
                res.extend(self.block(s.then if truth else s.orelse, [br], done))
            return res
        assert isinstance(s, While)
        st.iters.append(0)
        pending, exited = [st], []
        while pending:
            nxt: list[_State] = []
            for p in pending:
                p.steps += 1
                if p.steps > MAX_STEPS:
                    raise ProgramError(
                        f"loop runs more than {MAX_STEPS} iterations at n={self.n}; only "
                        "bounded loops are supported", s.line)
                outcomes = self.cond(s.cond, p)
                for cons, truth in outcomes:
                    br = p.fork() if len(outcomes) > 1 else p
                    br.constraints.extend(cons)
                    if truth:
                        for b in self.block(s.body, [br], done):
                            b.iters[-1] += 1
                            nxt.append(b)
                    else:
                        br.iters.pop()
                        exited.append(br)
            pending = nxt
            if len(pending) + len(exited) + len(done) > MAX_PATHS:
                raise _TooManyPaths(s.line)
        return exited


class _TooManyPaths(Exception):
    def __init__(self, line: int) -> None:
        self.line = line


def _holds(c: Fraction, op: str) -> bool:
    return {"<": c < 0, "<=": c <= 0, "==": c == 0, "!=": c != 0}[op]


def _flatten(v: Value, out: list[Scalar]) -> None:
    if isinstance(v, tuple):
        for x in v:
            _flatten(x, out)
    else:
        out.append(v)


class TooManyPaths(ProgramError):
    """Symbolic execution produced more than `MAX_PATHS` paths."""


def unroll(prog: Program, n: int, deadline: float | None = None) -> Unrolled:
    """Symbolically execute ``prog`` with every size equal to ``n``.

    Raises
    ------
    ProgramError
        For semantic errors (with their line) and `TooManyPaths` beyond ``MAX_PATHS``.
    TimeoutError
        When ``deadline`` (a `time.monotonic` value) passes.
    """
    ex = _Executor(prog, n, deadline)
    claim = ex.scale_expr(prog.claim)
    done: list[tuple[_State, tuple[Scalar, ...]]] = []
    try:
        rest = ex.block(prog.body, [_State({}, [], [], [])], done)
    except _TooManyPaths as e:
        raise TooManyPaths(f"more than {MAX_PATHS} execution paths at n={n}", e.line) from None
    if rest:
        raise ProgramError("some execution reaches the end of the program without `return`",
                           prog.body[-1].line)
    data: list[str] = []
    info: dict[str, tuple[str, int]] = {}
    for d in prog.inputs:
        for i in range(ex.input_len[d.name]):
            data.append(f"{d.name}[{i}]")
            info[f"{d.name}[{i}]"] = (d.name, i)
    paths = tuple(Path(tuple(st.constraints), outs, tuple(st.drawn)) for st, outs in done)
    return Unrolled(prog, n, paths, ex.noises, ex.clamps, tuple(data), info,
                    tuple(p.name for p in prog.params), claim, ex.consts)


def substitute(form: LinForm, mapping: Mapping[str, LinForm]) -> LinForm:
    """Alias of `LinForm.subst` for readability at call sites."""
    return form.subst(mapping)
