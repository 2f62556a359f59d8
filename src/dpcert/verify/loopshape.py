"""The shape an all-sizes proof needs: ``pre; while (i < n [&& g]) { body; i := i + 1; } post``.

Also the public polynomials of noise scales and claims with the sizes kept symbolic.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

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
from dpcert.verify.linear import Monomial, PublicPoly
from dpcert.verify.relexec import Unsupported

__all__ = ["LoopShape", "adjacency_ranges", "argmax_var", "assignments_to", "claim_poly",
           "divides_by_size", "flatten_blocks", "loop_shape", "names_read", "numbers_in",
           "public_poly",
           "split_monomials"]


@dataclass(frozen=True)
class LoopShape:
    pre: tuple[Stmt, ...]
    loop: While
    body: tuple[Stmt, ...]  # without the final counter step
    post: tuple[Stmt, ...]
    counter: str
    size: str
    guard_rest: Expr | None


def flatten_blocks(stmts: tuple[Stmt, ...]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, If) and isinstance(s.cond, BoolLit) and s.cond.value and not s.orelse:
            out.extend(flatten_blocks(s.then))
        else:
            out.append(s)
    return out


def assignments_to(stmts: tuple[Stmt, ...], name: str) -> list[Assign]:
    """Every assignment to ``name`` (``"*"``: to any variable), in branches and loops too."""
    out: list[Assign] = []
    for s in stmts:
        if isinstance(s, Assign) and name in (s.target, "*"):
            out.append(s)
        elif isinstance(s, If):
            out += assignments_to(s.then, name) + assignments_to(s.orelse, name)
        elif isinstance(s, While):
            out += assignments_to(s.body, name)
    return out


def loop_shape(prog: Program) -> LoopShape:
    """The program cut at its single top-level loop; `Unsupported` otherwise."""
    body = flatten_blocks(prog.body)
    loops = [k for k, s in enumerate(body) if isinstance(s, While)]
    if len(loops) != 1:
        raise Unsupported("the program needs exactly one top-level loop")
    k = loops[0]
    loop = body[k]
    assert isinstance(loop, While)
    cond: Expr = loop.cond
    rest: Expr | None = None
    if isinstance(cond, BinOp) and cond.op == "&&":
        both = cond
        cond, rest = both.left, both.right
    left = cond.left if isinstance(cond, BinOp) else None
    right = cond.right if isinstance(cond, BinOp) else None
    if not (isinstance(cond, BinOp) and cond.op == "<" and isinstance(left, Name)
            and isinstance(right, Name) and right.name in prog.size_names):
        raise Unsupported("the loop condition must be `i < n` or `i < n && ...`")
    ctr, size = left.name, right.name
    step = loop.body[-1] if loop.body else None
    val = step.value if isinstance(step, Assign) else None
    if not (isinstance(step, Assign) and step.target == ctr and isinstance(val, BinOp)
            and val.op == "+" and isinstance(val.left, Name)
            and val.left.name == ctr and isinstance(val.right, Num)
            and val.right.value == 1):
        raise Unsupported(f"the loop must end with `{ctr} := {ctr} + 1;`")
    inner = tuple(loop.body[:-1])
    if assignments_to(inner, ctr):
        raise Unsupported(f"the loop body assigns the counter {ctr}")
    if any(d.size != prog.inputs[0].size for d in prog.inputs) or len(prog.inputs) != 1:
        raise Unsupported("all-sizes proofs need a single input array")
    return LoopShape(tuple(body[:k]), loop, inner, tuple(body[k + 1:]), ctr, size, rest)


def public_poly(e: Expr, prog: Program) -> PublicPoly:
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
            lo = params[x.name].lo if x.name in params else None
            if lo is not None and lo >= 0:
                return PublicPoly.var(x.name)
            if x.name in params:
                raise ProgramError(
                    f"parameter {x.name} is used in a noise scale or claim, so it must be "
                    f"declared positive (`param {x.name} > 0;`)", x.line)
            raise ProgramError(f"{x.name!r} is not a public parameter, constant or size",
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
    return public_poly(prog.claim, prog)


def split_monomials(poly: PublicPoly,
                    sizes: tuple[str, ...]) -> dict[Monomial, list[tuple[Fraction, Monomial]]]:
    """Parameter monomial -> [(coefficient, size monomial)]."""
    out: dict[Monomial, list[tuple[Fraction, Monomial]]] = {}
    for m, c in poly.terms.items():
        pm = tuple((p, k) for p, k in m if p not in sizes)
        sm = tuple((p, k) for p, k in m if p in sizes)
        out.setdefault(pm, []).append((c, sm))
    return out


def argmax_var(prog: Program, sh: LoopShape) -> str | None:
    rets = [s for s in sh.post if isinstance(s, Return)]
    for r in rets:
        for e in r.values:
            if isinstance(e, Name):
                asg = assignments_to(sh.body, e.name)
                if asg and all(isinstance(a.value, Name) and a.value.name == sh.counter
                               for a in asg) and not assignments_to(sh.post, e.name):
                    return e.name
    del prog
    return None


def adjacency_ranges(lo: Fraction | None,
                     hi: Fraction | None) -> list[tuple[Fraction | None, Fraction | None]]:
    """The declared difference range and, when asymmetric, its mirror (swapped inputs)."""
    out = [(lo, hi)]
    if lo is not None and hi is not None and lo != -hi:
        out.append((-hi, -lo))
    return out


def numbers_in(e: Expr, consts: dict[str, Fraction]) -> set[Fraction]:
    if isinstance(e, Num):
        return {e.value}
    if isinstance(e, Name):
        return {consts[e.name]} if e.name in consts else set()
    if isinstance(e, BinOp):
        return numbers_in(e.left, consts) | numbers_in(e.right, consts)
    if isinstance(e, UnOp):
        return numbers_in(e.operand, consts)
    return set()


def divides_by_size(prog: Program) -> bool:
    """Whether some ``a / b`` of the program (a noise scale included) mentions a size in b."""
    sizes = set(prog.size_names)

    def mentions(e: Expr | Stmt) -> bool:
        if isinstance(e, Name):
            return e.name in sizes
        return any(mentions(c) for c in _children(e))

    def walk(e: Expr | Stmt) -> bool:
        if isinstance(e, BinOp) and e.op == "/" and mentions(e.right):
            return True
        return any(walk(c) for c in _children(e))

    return any(walk(s) for s in prog.body)


def _children(e: Expr | Stmt) -> list[Expr | Stmt]:
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


def names_read(e: Expr | Stmt) -> set[str]:
    """Every name an expression or statement reads (assignment targets excluded)."""
    out = {e.name} if isinstance(e, Name) else set()
    if isinstance(e, Index):
        out.add(e.base)
    for c in _children(e):
        out |= names_read(c)
    return out
