"""Typed intermediate representation of dpcert's small DP language.

Every node is a frozen dataclass carrying the source ``line`` it came from, so that errors found
after parsing (an undeclared name, a data-dependent noise scale, ...) still point at the program
text.  `dpcert.verify.syntax` builds these nodes; `dpcert.verify.symexec` executes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Union

from dpcert.errors import DPCertError

__all__ = [
    "Adjacency",
    "Assign",
    "BinOp",
    "BoolLit",
    "Call",
    "Expr",
    "If",
    "Index",
    "InputDecl",
    "ListLit",
    "Name",
    "Num",
    "ParamDecl",
    "Program",
    "ProgramError",
    "Return",
    "Stmt",
    "UnOp",
    "While",
    "param_values",
]


class ProgramError(DPCertError, ValueError):
    """A DP program is malformed; the message starts with ``line L``."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


# ---------------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Num:
    """A numeric literal (exact)."""

    value: Fraction
    line: int


@dataclass(frozen=True)
class BoolLit:
    """``true`` or ``false``."""

    value: bool
    line: int


@dataclass(frozen=True)
class Name:
    """A variable, input, parameter or constant."""

    name: str
    line: int


@dataclass(frozen=True)
class Index:
    """``base[index]`` on an input array or a list."""

    base: str
    index: Expr
    line: int


@dataclass(frozen=True)
class ListLit:
    """``[]`` or ``[e1, e2, ...]``."""

    items: tuple[Expr, ...]
    line: int


BinOpName = Literal["+", "-", "*", "/", "++", "<", "<=", ">", ">=", "==", "!=", "&&", "||"]


@dataclass(frozen=True)
class BinOp:
    """A binary operation; comparisons and ``&&``/``||`` produce booleans."""

    op: BinOpName
    left: Expr
    right: Expr
    line: int


@dataclass(frozen=True)
class UnOp:
    """``-e`` or ``!e``."""

    op: Literal["-", "!"]
    operand: Expr
    line: int


@dataclass(frozen=True)
class Call:
    """A built-in: ``lap(b)``, ``dlap(b)``, ``expo(b)``, ``gauss(sigma)`` (sampling) or
    ``clamp(e, lo, hi)``.

    ``site`` identifies the call in the source (``"line:column"``); samples are named by it.
    """

    func: str
    args: tuple[Expr, ...]
    line: int
    site: str


Expr = Union[Num, BoolLit, Name, Index, ListLit, BinOp, UnOp, Call]  # noqa: UP007

# ---------------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Assign:
    """``x := e;``"""

    target: str
    value: Expr
    line: int


@dataclass(frozen=True)
class If:
    """``if (c) { ... } else { ... }``"""

    cond: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]
    line: int


@dataclass(frozen=True)
class While:
    """``while (c) { ... }``; ``for i in a .. b { ... }`` is desugared to a while loop."""

    cond: Expr
    body: tuple[Stmt, ...]
    line: int


@dataclass(frozen=True)
class Return:
    """``return e1, e2, ...;`` ends the run; the output is the flattened tuple."""

    values: tuple[Expr, ...]
    line: int


Stmt = Union[Assign, If, While, Return]  # noqa: UP007

# ---------------------------------------------------------------------------------- declarations

AdjMode = Literal["all", "one"]


@dataclass(frozen=True)
class Adjacency:
    """How two neighbouring inputs may differ, with Δᵢ = q'ᵢ − qᵢ.

    ``mode="all"``: every Δᵢ lies in ``[lo, hi]``; ``mode="one"``: at most one Δᵢ is non-zero and
    it lies in ``[lo, hi]``.  ``lo``/``hi`` of ``None`` mean unbounded (``one any``: replace one
    element).  The relation is closed under swapping the two inputs (Δ ↦ −Δ) by the verifier.
    """

    mode: AdjMode
    lo: Fraction | None
    hi: Fraction | None
    line: int


@dataclass(frozen=True)
class InputDecl:
    """``input q : real[n] in [lo, hi];`` -- the private input (an array of size ``size``)."""

    name: str
    elem: Literal["real", "int"]
    size: Expr
    lo: Fraction | None
    hi: Fraction | None
    line: int


@dataclass(frozen=True)
class ParamDecl:
    """``param eps > 0;`` / ``param eps in (0, 1);`` / ``param T;`` -- a public real parameter.

    ``lo``/``hi`` are strict bounds (``None`` when absent).
    """

    name: str
    lo: Fraction | None
    hi: Fraction | None
    line: int


@dataclass(frozen=True)
class Program:
    """A parsed DP program: declarations, a claim and a body."""

    inputs: tuple[InputDecl, ...]
    adjacency: dict[str, Adjacency]
    params: tuple[ParamDecl, ...]
    consts: tuple[tuple[str, Expr], ...]
    claim: Expr
    body: tuple[Stmt, ...]
    name: str = "program"
    #: δ of an ``claim eps, delta;`` (approximate DP) claim, ``None`` for pure ε-DP
    claim_delta: Expr | None = None

    @property
    def size_names(self) -> tuple[str, ...]:
        """Names used as array sizes (instantiated with the verifier's ``n``)."""
        out: list[str] = []
        for d in self.inputs:
            if isinstance(d.size, Name) and d.size.name not in out:
                out.append(d.size.name)
        return tuple(out)


def param_values(prog: Program) -> dict[str, Fraction]:
    """A value inside each parameter's declared range (``eps > 0`` gives 1, ``(0, 1)`` 1/2)."""
    out: dict[str, Fraction] = {}
    for p in prog.params:
        if p.lo is not None and p.hi is not None:
            out[p.name] = (p.lo + p.hi) / 2
        elif p.lo is not None:
            out[p.name] = p.lo + 1
        elif p.hi is not None:
            out[p.name] = p.hi - 1
        else:
            out[p.name] = Fraction(0)
    return out
