"""A vectorised interpreter of DP programs: many runs at once, with dpcert's exact samplers.

``--confirm`` measures an event by *running* the program, independently of the symbolic
execution that the refuter's exact probabilities come from.  `run_batch` executes the
program's statements on ``size`` runs at once: every value is a NumPy array with one entry per
run, a branch executes both arms under complementary masks, a ``while`` loop repeats its body
while any run is still inside, and every sampling call draws ``size`` fresh values
([`lattice_laplace`][dpcert.samplers.lattice_laplace], `lattice_gaussian`,
[`discrete_laplace`][dpcert.samplers.discrete_laplace], a lattice exponential from
[`geometric`][dpcert.samplers.geometric]).  A list is a sequence of items, each present in some runs
(a masked append adds an item present where the mask holds); a run's output is the flattened
sequence of the items present in it.  Arithmetic is in floats on lattice-valued noise, as in
dpcert's mechanisms.

Examples
--------
>>> from dpcert.samplers import InsecureSeededSource
>>> from dpcert.verify import parse_program
>>> prog = parse_program("input q : real[2]; adjacent q : all in [-1, 1]; param eps > 0;"
...                      " claim eps; r := []; for i in 0 .. 2 { if (q[i] + lap(1/eps) >= 0)"
...                      " { r := r ++ [true]; } else { r := r ++ [false]; } } return r;")
>>> out = run_batch(prog, 2, {"q": (Fraction(5), Fraction(-5))}, {"eps": Fraction(1)}, 1000,
...                 InsecureSeededSource(1))
>>> out.length.tolist()[:3], float(out.values[0].mean()) > 0.9, float(out.values[1].mean()) < 0.1
([2, 2, 2], True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from dpcert.errors import InvalidParameter
from dpcert.samplers import (
    EntropySource,
    discrete_laplace,
    geometric,
    lattice_gaussian,
    lattice_laplace,
)
from dpcert.samplers.lattice import lattice_exponent
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
    Return,
    Stmt,
    UnOp,
    While,
)

__all__ = ["Outputs", "RunnerUnsupported", "run_batch"]

F = npt.NDArray[np.float64]
B = npt.NDArray[np.bool_]

#: Loop iterations after which a run is reported as not terminating.
MAX_ITERATIONS = 100_000


class RunnerUnsupported(InvalidParameter):
    """A construct the vectorised interpreter does not execute (e.g. indexing a list)."""


@dataclass(frozen=True)
class _Item:
    is_bool: bool
    value: F | B
    present: B


@dataclass(frozen=True)
class _List:
    items: tuple[_Item, ...]


Val = F | B | _List


@dataclass(frozen=True)
class Outputs:
    """Per run: ``length`` of the output, and output ``j`` as ``values[j]`` (floats; booleans as
    0/1) with ``is_bool[j]``, defined where ``length > j``."""

    length: npt.NDArray[np.int64]
    values: tuple[F, ...]
    is_bool: tuple[B, ...]


class _Run:
    def __init__(self, prog: Program, n: int, data: Mapping[str, tuple[Fraction, ...]],
                 params: Mapping[str, Fraction], size: int,
                 source: EntropySource | None) -> None:
        self.prog, self.size, self.source = prog, size, source
        self.public: dict[str, Fraction] = {s: Fraction(n) for s in prog.size_names}
        self.public.update(params)
        for name, e in prog.consts:
            self.public[name] = self.scalar(e)
        self.data = {k: np.asarray([float(v) for v in t]) for k, t in data.items()}
        self.env: dict[str, Val] = {}
        self.alive: B = np.ones(size, dtype=bool)
        self.outs: list[_Item] = []

    # ------------------------------------------------------------------ public scalars
    def scalar(self, e: Expr) -> Fraction:
        if isinstance(e, Num):
            return e.value
        if isinstance(e, Name) and e.name in self.public:
            return self.public[e.name]
        if isinstance(e, UnOp) and e.op == "-":
            return -self.scalar(e.operand)
        if isinstance(e, BinOp) and e.op in {"+", "-", "*", "/"}:
            a, b = self.scalar(e.left), self.scalar(e.right)
            return {"+": a + b, "-": a - b, "*": a * b}[e.op] if e.op != "/" else a / b
        raise RunnerUnsupported(f"line {getattr(e, 'line', '?')}: a noise scale must be public")

    # ------------------------------------------------------------------ values
    def full(self, x: float) -> F:
        return np.full(self.size, x, dtype=np.float64)

    def num(self, e: Expr, m: B) -> F:
        v = self.value(e, m)
        if isinstance(v, _List) or v.dtype == np.bool_:
            raise RunnerUnsupported(f"line {e.line}: a number was expected")
        return np.asarray(v, dtype=np.float64)

    def cond(self, e: Expr, m: B) -> B:
        v = self.value(e, m)
        if isinstance(v, _List) or v.dtype != np.bool_:
            raise RunnerUnsupported(f"line {e.line}: a condition was expected")
        return np.asarray(v, dtype=np.bool_)

    def value(self, e: Expr, m: B) -> Val:
        if isinstance(e, Num):
            return self.full(float(e.value))
        if isinstance(e, BoolLit):
            return np.full(self.size, e.value, dtype=bool)
        if isinstance(e, Name):
            if e.name in self.env:
                return self.env[e.name]
            if e.name in self.public:
                return self.full(float(self.public[e.name]))
            raise RunnerUnsupported(f"line {e.line}: undefined name {e.name!r}")
        if isinstance(e, Index):
            if e.base not in self.data:
                raise RunnerUnsupported(f"line {e.line}: indexing a list is not run")
            idx = np.rint(self.num(e.index, m)).astype(np.int64)
            arr = self.data[e.base]
            live = m & self.alive
            if live.any() and (idx[live].min() < 0 or idx[live].max() >= len(arr)):
                raise RunnerUnsupported(f"line {e.line}: index out of range for {e.base}")
            return np.asarray(arr[np.clip(idx, 0, max(len(arr) - 1, 0))], dtype=np.float64)
        if isinstance(e, ListLit):
            ones = np.ones(self.size, dtype=bool)
            items: list[_Item] = []
            for x in e.items:
                v = self.value(x, m)
                if isinstance(v, _List):
                    items.extend(v.items)
                else:
                    items.append(_Item(v.dtype == np.bool_, v, ones))
            return _List(tuple(items))
        if isinstance(e, UnOp):
            if e.op == "!":
                return ~self.cond(e.operand, m)
            return -self.num(e.operand, m)
        if isinstance(e, Call):
            return self.call(e, m)
        assert isinstance(e, BinOp)
        return self.binop(e, m)

    def binop(self, e: BinOp, m: B) -> Val:
        if e.op in {"&&", "||"}:
            ca, cb = self.cond(e.left, m), self.cond(e.right, m)
            return ca & cb if e.op == "&&" else ca | cb
        if e.op == "++":
            la, lb = self.value(e.left, m), self.value(e.right, m)
            if not isinstance(la, _List) or not isinstance(lb, _List):
                raise RunnerUnsupported(f"line {e.line}: `++` joins two lists")
            return _List(la.items + lb.items)
        x, y = self.num(e.left, m), self.num(e.right, m)
        ops = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
               "==": np.equal, "!=": np.not_equal, "+": np.add, "-": np.subtract,
               "*": np.multiply, "/": np.divide}
        return np.asarray(ops[e.op](x, y))

    def call(self, e: Call, m: B) -> F:
        if e.func == "clamp":
            lo, hi = (float(self.scalar(a)) for a in e.args[1:3])
            return np.clip(self.num(e.args[0], m), lo, hi)
        b = self.scalar(e.args[0])
        live = m & self.alive  # only the runs that execute this call draw
        k = int(np.count_nonzero(live))
        if e.func == "lap":
            draw = np.asarray(lattice_laplace(np.zeros(k), b, source=self.source))
        elif e.func == "gauss":
            draw = np.asarray(lattice_gaussian(np.zeros(k), b, source=self.source))
        elif e.func == "dlap":
            draw = discrete_laplace(b, k, source=self.source).astype(np.float64)
        elif e.func == "expo":
            step = Fraction(2) ** lattice_exponent(b)
            draw = geometric(step / b, k, source=self.source).astype(np.float64) * float(step)
        else:
            raise RunnerUnsupported(f"line {e.line}: unknown function {e.func}")
        out = np.zeros(self.size, dtype=np.float64)
        out[live] = draw
        return out

    # ------------------------------------------------------------------ statements
    def block(self, stmts: tuple[Stmt, ...], m: B) -> None:
        for s in stmts:
            m = m & self.alive
            if not m.any():
                return
            self.stmt(s, m)

    def stmt(self, s: Stmt, m: B) -> None:
        if isinstance(s, Assign):
            self.assign(s.target, self.value(s.value, m), m)
        elif isinstance(s, Return):
            for e in s.values:
                v = self.value(e, m)
                items = v.items if isinstance(v, _List) else \
                    (_Item(v.dtype == np.bool_, v, np.ones(self.size, dtype=bool)),)
                self.outs.extend(_Item(i.is_bool, i.value, i.present & m) for i in items)
            self.alive = self.alive & ~m
        elif isinstance(s, If):
            c = self.cond(s.cond, m)
            self.block(s.then, m & c)
            self.block(s.orelse, m & ~c)
        else:
            assert isinstance(s, While)
            active = m & self.cond(s.cond, m)
            for _ in range(MAX_ITERATIONS):
                if not active.any():
                    return
                self.block(s.body, active)
                active = active & self.alive
                active = active & self.cond(s.cond, active)
            raise RunnerUnsupported(f"line {s.line}: a loop runs past {MAX_ITERATIONS} steps")

    def assign(self, target: str, new: Val, m: B) -> None:
        old = self.env.get(target)
        if old is None:
            self.env[target] = new
        elif isinstance(old, _List) and isinstance(new, _List):
            k = len(old.items)
            if len(new.items) >= k and all(a is b for a, b in zip(new.items, old.items,
                                                                   strict=False)):
                # an append: the shared prefix stays, the new items are present under m
                self.env[target] = _List(old.items + tuple(
                    _Item(i.is_bool, i.value, i.present & m) for i in new.items[k:]))
            else:
                self.env[target] = _List(
                    tuple(_Item(i.is_bool, i.value, i.present & ~m) for i in old.items)
                    + tuple(_Item(i.is_bool, i.value, i.present & m) for i in new.items))
        elif not isinstance(old, _List) and not isinstance(new, _List) and \
                (old.dtype == np.bool_) == (new.dtype == np.bool_):
            self.env[target] = np.where(m, new, old)
        else:
            raise RunnerUnsupported(f"{target} changes between a list, a number and a boolean")

    def outputs(self) -> Outputs:
        if self.alive.any():
            raise RunnerUnsupported("some run reaches the end of the program without `return`")
        length = np.zeros(self.size, dtype=np.int64)
        values: list[F] = []
        is_bool: list[B] = []
        for it in self.outs:
            if not it.present.any():
                continue
            lo, hi = int(length[it.present].min()), int(length[it.present].max())
            for j in range(lo, hi + 1):
                if j == len(values):
                    values.append(np.full(self.size, np.nan))
                    is_bool.append(np.zeros(self.size, dtype=bool))
                at = it.present & (length == j)
                values[j][at] = np.asarray(it.value, dtype=np.float64)[at]
                is_bool[j][at] = it.is_bool
            length += it.present
        return Outputs(length, tuple(values), tuple(is_bool))


def run_batch(prog: Program, n: int, data: Mapping[str, tuple[Fraction, ...]],
              params: Mapping[str, Fraction], size: int,
              source: EntropySource | None = None) -> Outputs:
    """Run ``prog`` at size ``n`` on input ``data`` ``size`` times (independent noise).

    Raises
    ------
    RunnerUnsupported
        For constructs it does not execute (the caller may fall back to the unrolled paths).
    """
    r = _Run(prog, n, data, params, size, source)
    r.block(prog.body, np.ones(size, dtype=bool))
    return r.outputs()
