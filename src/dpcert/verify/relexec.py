"""Symbolic execution of loop-free statement blocks over z3 terms, for all-sizes proofs.

`dpcert.verify.induction` cuts a program into ``pre; while (i < n ...) body; post`` and runs
each block *once*, with the loop-head state as fresh symbols, the size ``n`` as a z3 integer and
the current element ``q[i]`` as a fresh symbol; the loop itself is then closed by an inductive
invariant.  This module executes one block in one run: every branch on a non-constant condition
splits the path, every sample ``lap``/``dlap``/``expo`` at a call site becomes a named noise value
supplied by the caller (so run 2 can be fed ``η + S``), lists carried around the loop are
append-only and what one execution appends is recorded as its *emission*.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, TypeAlias

from dpcert.verify._deps import require_z3
from dpcert.verify.conds import as_less, outcomes, z3_names, z3_numeral
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
    Return,
    Stmt,
    UnOp,
    While,
)

if TYPE_CHECKING:
    from z3 import ArithRef, BoolRef

__all__ = ["Carried", "Cons", "Exec", "RPath", "Unsupported", "Value", "as_number"]

#: Paths of one block beyond which the all-sizes prover gives up.
MAX_BLOCK_PATHS = 256


class Unsupported(Exception):
    """The program is outside the fragment of the all-sizes prover (the reason is the message)."""


@dataclass(frozen=True)
class Carried:
    """A list variable carried around the loop: ``items`` appended since the loop head."""

    name: str
    items: tuple[Value, ...] = ()


#: A program variable's value in one run: a number term, a truth value (conditions are decided
#: by splitting the path), the values of a list literal, or a list carried around the loop.
Value: TypeAlias = "ArithRef | bool | tuple[Value, ...] | Carried"


@dataclass(frozen=True)
class Cons:
    """``term op 0`` (``op``: ``<``, ``<=``, ``==``, ``!=``); ``noisy`` if it mentions noise."""

    term: ArithRef
    op: str
    noisy: bool

    def z3(self) -> BoolRef:
        """The constraint as a z3 boolean."""
        t = self.term
        return {"<": t < 0, "<=": t <= 0, "==": t == 0, "!=": t != 0}[self.op]


@dataclass
class RPath:
    """One path through a block."""

    cons: list[Cons] = field(default_factory=list)
    env: dict[str, Value] = field(default_factory=dict)
    sig: list[tuple[int, int]] = field(default_factory=list)  # (decision line, outcome)
    samples: list[str] = field(default_factory=list)
    assigned: set[str] = field(default_factory=set)
    ret: tuple[Value, ...] | None = None

    def fork(self) -> RPath:
        return RPath(list(self.cons), dict(self.env), list(self.sig), list(self.samples),
                     set(self.assigned), self.ret)


def as_number(x: Value) -> ArithRef:
    """``x`` as a number term, or `Unsupported` for a truth value or a list (the prover keeps
    terms in the variables it reads as numbers, so this refuses only what it cannot handle)."""
    if isinstance(x, (bool, tuple, Carried)):
        raise Unsupported(f"{x!r} is used as a number")
    return x


#: Draws the noise of a sampling site in a path: a fresh name, or one shifted (run 2).
NoiseFn: TypeAlias = "Callable[[Call, RPath], ArithRef]"


class Exec:
    """Executor of loop-free blocks.

    Parameters
    ----------
    sizes, consts, params
        Size names, constant values and public parameter names (as z3 terms).
    data
        ``input name -> z3 term`` of the current element (``q[i]`` with ``i`` the counter).
    counter
        The loop counter's name (the only allowed index of an input), or ``None``.
    noise
        Called at every sampling site; returns the sampled value (run 1: ``η``; run 2: ``η + S``).
    noise_vars
        Names of the z3 constants that are noise (to mark constraints ``noisy``).
    """

    def __init__(self, sizes: dict[str, ArithRef], consts: dict[str, Fraction],
                 params: dict[str, ArithRef], data: dict[str, ArithRef | None], counter: str | None,
                 noise: NoiseFn, noise_vars: set[str], inputs: set[str]) -> None:
        self.z3 = require_z3()
        self.sizes, self.consts, self.params = sizes, consts, params
        self.data, self.counter, self.noise = data, counter, noise
        self.noise_vars = noise_vars
        self.inputs = inputs

    # ------------------------------------------------------------------ helpers
    def num(self, x: Fraction | int) -> ArithRef:
        x = Fraction(x)
        return self.z3.RealVal(f"{x.numerator}/{x.denominator}")

    def _noisy(self, t: ArithRef) -> bool:
        return bool(z3_names(self.z3, t) & self.noise_vars)

    def _const(self, t: ArithRef) -> Fraction | None:
        return z3_numeral(self.z3, t)

    # ------------------------------------------------------------------ values
    def value(self, e: Expr, st: RPath) -> Value:
        z3 = self.z3
        if isinstance(e, Num):
            return self.num(e.value)
        if isinstance(e, BoolLit):
            return e.value
        if isinstance(e, Name):
            if e.name in st.env:
                return st.env[e.name]
            if e.name in self.sizes:
                return self.sizes[e.name]
            if e.name in self.consts:
                return self.num(self.consts[e.name])
            if e.name in self.params:
                return self.params[e.name]
            raise Unsupported(f"line {e.line}: name {e.name!r} is not defined here")
        if isinstance(e, Index):
            if e.base in self.inputs:
                if not (isinstance(e.index, Name) and e.index.name == self.counter):
                    raise Unsupported(f"line {e.line}: {e.base} is indexed by something other "
                                      "than the loop counter")
                d = self.data[e.base]
                if d is None:
                    raise Unsupported(f"line {e.line}: {e.base} is read outside the loop")
                return d
            raise Unsupported(f"line {e.line}: indexing a list")
        if isinstance(e, ListLit):
            return tuple(self.value(x, st) for x in e.items)
        if isinstance(e, UnOp):
            v = self.value(e.operand, st)
            if e.op == "-" and not isinstance(v, (bool, tuple, Carried)):
                return -v
            if e.op == "!" and isinstance(v, bool):
                return not v
            raise Unsupported(f"line {e.line}: operator {e.op}")
        if isinstance(e, Call):
            if e.func == "clamp":
                a = as_number(self.value(e.args[0], st))
                lo = as_number(self.value(e.args[1], st))
                hi = as_number(self.value(e.args[2], st))
                if self._noisy(a):
                    raise Unsupported(f"line {e.line}: clamp of a noisy value")
                return z3.If(a < lo, lo, z3.If(a > hi, hi, a))
            return self.noise(e, st)
        assert isinstance(e, BinOp)
        if e.op in {"<", "<=", ">", ">=", "==", "!=", "&&", "||"}:
            outs = self.cond(e, st)
            if len(outs) == 1 and not outs[0][0]:
                return outs[0][1]
            raise Unsupported(f"line {e.line}: comparison used as a value")
        a, b = self.value(e.left, st), self.value(e.right, st)
        if e.op == "++":
            if isinstance(a, Carried) and isinstance(b, tuple):
                return Carried(a.name, a.items + b)
            if isinstance(a, tuple) and isinstance(b, tuple):
                return a + b
            raise Unsupported(f"line {e.line}: `++` other than appending to a list")
        if isinstance(a, (bool, tuple, Carried)) or isinstance(b, (bool, tuple, Carried)):
            raise Unsupported(f"line {e.line}: arithmetic on a non-number")
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        ca, cb = self._const(a), self._const(b)
        if e.op == "*":
            if ca is None and cb is None:
                raise Unsupported(f"line {e.line}: product of two non-constants")
            return a * b
        if cb is None and any(b.eq(z) for z in self.sizes.values()):
            return a / z3.ToReal(b)  # by a size (the prover then assumes it is >= 1)
        if cb is None or cb == 0:
            raise Unsupported(f"line {e.line}: division by a non-constant")
        return a * self.num(1 / cb)

    def cond(self, e: Expr, st: RPath) -> list[tuple[list[Cons], bool]]:
        """Disjoint outcomes (constraints, truth) of a condition."""
        return outcomes(e, st, self._atom)

    def _atom(self, e: Expr, st: RPath) -> list[tuple[list[Cons], bool]]:
        if isinstance(e, BinOp) and e.op in {"<", "<=", ">", ">=", "==", "!="}:
            a, b = self.value(e.left, st), self.value(e.right, st)
            if isinstance(a, bool) and isinstance(b, bool) and e.op in {"==", "!="}:
                return [([], (a == b) == (e.op == "=="))]
            if isinstance(a, (bool, tuple, Carried)) or isinstance(b, (bool, tuple, Carried)):
                raise Unsupported(f"line {e.line}: comparison of non-numbers")
            t, op = as_less(e.op, a - b)
            c = self._const(t)
            if c is not None:
                return [([], {"<": c < 0, "<=": c <= 0, "==": c == 0, "!=": c != 0}[op])]
            noisy = self._noisy(t)
            if op in {"==", "!="} and noisy and self._continuous(t):
                return [([], op == "!=")]  # equality with continuous noise: probability 0
            neg = {"<": ("<=", -1), "<=": ("<", -1), "==": ("!=", 1), "!=": ("==", 1)}[op]
            return [([Cons(t, op, noisy)], True), ([Cons(t * neg[1], neg[0], noisy)], False)]
        v = self.value(e, st)
        if isinstance(v, bool):
            return [([], v)]
        raise Unsupported(f"line {getattr(e, 'line', '?')}: condition is not a boolean")

    def _continuous(self, t: ArithRef) -> bool:
        z3 = self.z3
        todo = [t]
        while todo:
            e = todo.pop()
            if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED \
                    and e.decl().name() in self.noise_vars and e.sort() == z3.RealSort():
                return True
            todo.extend(e.children())
        return False

    # ------------------------------------------------------------------ statements
    def block(self, stmts: tuple[Stmt, ...], paths: list[RPath]) -> list[RPath]:
        """Run ``stmts`` from every path; finished paths (``return``) are kept with ``ret``."""
        for s in stmts:
            nxt: list[RPath] = []
            for p in paths:
                if p.ret is not None:
                    nxt.append(p)
                else:
                    nxt.extend(self.stmt(s, p))
            paths = nxt
            if len(paths) > MAX_BLOCK_PATHS:
                raise Unsupported(f"line {s.line}: more than {MAX_BLOCK_PATHS} paths in a block")
        return paths

    def stmt(self, s: Stmt, st: RPath) -> list[RPath]:
        if isinstance(s, Assign):
            if s.target in self.inputs or s.target in self.params or s.target in self.consts:
                raise Unsupported(f"line {s.line}: assignment to a declared name")
            st.env[s.target] = self.value(s.value, st)
            st.assigned.add(s.target)
            return [st]
        if isinstance(s, Return):
            st.ret = tuple(self.value(e, st) for e in s.values)
            return [st]
        if isinstance(s, If):
            outs = self.cond(s.cond, st)
            res: list[RPath] = []
            for k, (cons, truth) in enumerate(outs):
                br = st.fork() if len(outs) > 1 else st
                br.cons.extend(cons)
                if len(outs) > 1:
                    br.sig.append((s.line, k))
                res.extend(self.block(s.then if truth else s.orelse, [br]))
            return res
        assert isinstance(s, While)
        raise Unsupported(f"line {s.line}: a second (or nested) loop")
