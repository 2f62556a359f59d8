"""Pieces shared by the two symbolic executors (`symexec` over exact linear
forms at a fixed size, `relexec` over z3 terms for all sizes).

* `outcomes` -- the disjoint outcomes of a condition built with ``!``, ``&&``, ``||``
  (short-circuit: the right operand is evaluated only on the left's non-deciding outcomes);
* `as_less` -- a comparison ``a op b`` as ``d op' 0`` with ``op'`` in ``< <= == !=``;
* `z3_numeral`, `z3_names` -- the rational value and the free constants of a z3 term.

Examples
--------
>>> as_less(">=", 3)
(-3, '<=')
>>> as_less("<", 3)
(3, '<')
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from types import ModuleType
from typing import TYPE_CHECKING, Literal, TypeAlias, TypeVar

from dpcert.verify.ir import BinOp, Expr, UnOp

if TYPE_CHECKING:
    from z3 import ExprRef

__all__ = ["ValueClass", "as_less", "outcomes", "z3_names", "z3_numeral"]

#: What tells an output value from another: ``("b", truth)``, ``("c", constant)``, or
#: ``("r",)`` / ``("z",)`` / ``("d",)`` for continuous noise, other noise, data.
ValueClass: TypeAlias = (
    "tuple[Literal['b'], bool] | tuple[Literal['c'], Fraction] | tuple[Literal['r', 'z', 'd']]")

C = TypeVar("C")
S = TypeVar("S")
D = TypeVar("D")
Outcomes = list[tuple[list[C], bool]]


def outcomes(e: Expr, st: S, atom: Callable[[Expr, S], Outcomes[C]]) -> Outcomes[C]:
    """Disjoint (constraints, truth) outcomes of ``e``; ``atom`` decides anything but ! && ||."""
    if isinstance(e, UnOp) and e.op == "!":
        return [(c, not t) for c, t in outcomes(e.operand, st, atom)]
    if isinstance(e, BinOp) and e.op in {"&&", "||"}:
        out: Outcomes[C] = []
        short = e.op == "||"
        for c1, t1 in outcomes(e.left, st, atom):
            if t1 == short:
                out.append((c1, t1))
            else:
                out.extend((c1 + c2, t2) for c2, t2 in outcomes(e.right, st, atom))
        return out
    return atom(e, st)


def as_less(op: str, diff: D) -> tuple[D, str]:
    """``a op b`` with ``diff = a − b`` as ``(d, op')``: ``d op' 0``, ``op'`` in < <= == !=."""
    if op == ">":
        return -diff, "<"  # type: ignore[operator]
    if op == ">=":
        return -diff, "<="  # type: ignore[operator]
    return diff, op


def z3_numeral(z3: ModuleType, t: ExprRef) -> Fraction | None:
    """The value of a z3 term that simplifies to a rational (else None)."""
    s = z3.simplify(t)
    if z3.is_int_value(s):
        return Fraction(s.as_long())
    if z3.is_rational_value(s):
        return Fraction(s.numerator_as_long(), s.denominator_as_long())
    return None


def z3_names(z3: ModuleType, t: ExprRef) -> set[str]:
    """The names of the uninterpreted constants (variables) of a z3 term."""
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
