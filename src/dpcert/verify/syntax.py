r"""Parser of dpcert's DP language (a lark grammar) into the typed IR of `dpcert.verify.ir`.

The language follows the pseudocode of Gaboardi & Stoughton's apRHL lecture notes (CS 591)::

    # Laplace mechanism
    input q : real[1];
    adjacent q : all in [-1, 1];
    param eps > 0;
    claim eps;

    z := q[0] + lap(1 / eps);
    return z;

Errors carry the line (and column) of the offending text.

Examples
--------
>>> p = parse_program("input q : real[n]; adjacent q : one in [-1, 1]; param eps > 0;"
...                   " claim eps; return q[0] + lap(1/eps);")
>>> p.inputs[0].name, p.adjacency["q"].mode, p.size_names
('q', 'one', ('n',))
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from dpcert.verify._deps import require_lark
from dpcert.verify.ir import (
    Adjacency,
    Assign,
    BinOp,
    BoolLit,
    Call,
    Expr,
    If,
    Index,
    InputDecl,
    ListLit,
    Name,
    Num,
    ParamDecl,
    Program,
    ProgramError,
    Return,
    Stmt,
    UnOp,
    While,
)

if TYPE_CHECKING:
    from lark import Token, Tree

__all__ = ["GRAMMAR", "parse_program"]

GRAMMAR = r"""
start: item*

?item: input_decl | adj_decl | param_decl | const_decl | claim_decl | program_decl | stmt

program_decl: "program" NAME ";"
input_decl: "input" NAME ":" ELEM "[" expr "]" range? ";"
range: "in" "[" signed "," signed "]"
adj_decl: "adjacent" NAME ":" ADJMODE adjrange ";"
adjrange: "in" "[" signed "," signed "]"   -> adj_bounded
        | "any"                             -> adj_any
param_decl: "param" NAME pbound? ";"
pbound: ">" signed                          -> p_gt
      | "in" "(" signed "," signed ")"      -> p_in
const_decl: "const" NAME "=" expr ";"
claim_decl: "claim" expr ("," expr)? ";"

?stmt: assign | if_stmt | while_stmt | for_stmt | return_stmt
assign: NAME ":=" expr ";"
if_stmt: "if" "(" expr ")" block ("else" (block | if_stmt))?
while_stmt: "while" "(" expr ")" block
for_stmt: "for" NAME "in" expr ".." expr block
return_stmt: "return" expr ("," expr)* ";"
block: "{" stmt* "}"

signed: SIGNED_NUMBER
ELEM: "real" | "int"
ADJMODE: "all" | "one"

?expr: or_expr
?or_expr: and_expr (OR and_expr)*
?and_expr: not_expr (AND not_expr)*
?not_expr: "!" not_expr        -> not_
         | comparison
?comparison: concat (CMP concat)?
?concat: sum (CONCAT sum)*
?sum: product (ADDOP product)*
?product: unary (MULOP unary)*
?unary: "-" unary              -> neg
      | atom
?atom: NUMBER                  -> number
     | "true"                  -> true_
     | "false"                 -> false_
     | NAME "(" [expr ("," expr)*] ")"  -> call
     | NAME "[" expr "]"       -> index
     | "[" [expr ("," expr)*] "]" -> list_lit
     | NAME                    -> name
     | "(" expr ")"

OR: "||"
AND: "&&"
CMP: "<=" | ">=" | "==" | "!=" | "<" | ">"
CONCAT: "++"
ADDOP: "+" | "-"
MULOP: "*" | "/"
NAME: /(?!(KEYWORDS)\b)[a-zA-Z_][a-zA-Z_0-9]*/

%import common.NUMBER
%import common.SIGNED_NUMBER
%import common.WS
%ignore WS
COMMENT: /#[^\n]*/
%ignore COMMENT
"""

_KEYWORDS = ("if", "else", "while", "for", "in", "return", "input", "adjacent", "param", "const",
             "claim", "true", "false", "any", "program")
GRAMMAR = GRAMMAR.replace("KEYWORDS", "|".join(_KEYWORDS))

_PARSER: Any = None

_BUILTINS = {"lap": 1, "dlap": 1, "expo": 1, "gauss": 1, "clamp": 3}


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        lark = require_lark()
        _PARSER = lark.Lark(GRAMMAR, parser="lalr", propagate_positions=True)
    return _PARSER


def _line(tree: object) -> int:
    meta = getattr(tree, "meta", None)
    line = getattr(meta, "line", None) if meta is not None else getattr(tree, "line", None)
    return int(line) if line is not None else 0


def _frac(text: str) -> Fraction:
    return Fraction(str(text))


class _Builder:
    def __init__(self) -> None:
        self.loop_counter = 0

    # expressions ----------------------------------------------------------------------------
    def expr(self, t: Tree[Token] | Token) -> Expr:
        from lark import Token, Tree

        if isinstance(t, Token):  # a bare NAME or NUMBER can reach here through ?rules
            if t.type == "NAME":
                return Name(str(t), int(t.line or 0))
            return Num(_frac(str(t)), int(t.line or 0))
        assert isinstance(t, Tree)
        line = _line(t)
        kind = t.data
        ch = t.children
        if kind == "number":
            return Num(_frac(str(ch[0])), line)
        if kind == "true_":
            return BoolLit(True, line)
        if kind == "false_":
            return BoolLit(False, line)
        if kind == "name":
            return Name(str(ch[0]), line)
        if kind == "index":
            return Index(str(ch[0]), self.expr(ch[1]), line)
        if kind == "list_lit":
            return ListLit(tuple(self.expr(c) for c in ch if c is not None), line)
        if kind == "call":
            fname = str(ch[0])
            args = tuple(self.expr(c) for c in ch[1:] if c is not None)
            if fname not in _BUILTINS:
                raise ProgramError(
                    f"unknown function {fname!r} (known: {', '.join(sorted(_BUILTINS))})", line
                )
            if len(args) != _BUILTINS[fname]:
                raise ProgramError(
                    f"{fname}() takes {_BUILTINS[fname]} argument(s), got {len(args)}", line
                )
            col = getattr(t.meta, "column", 0)
            return Call(fname, args, line, f"{line}:{col}")
        if kind == "neg":
            return UnOp("-", self.expr(ch[0]), line)
        if kind == "not_":
            return UnOp("!", self.expr(ch[0]), line)
        if kind in {"or_expr", "and_expr", "comparison", "concat", "sum", "product"}:
            acc = self.expr(ch[0])
            for i in range(1, len(ch), 2):
                acc = BinOp(str(ch[i]), acc, self.expr(ch[i + 1]), line)  # type: ignore[arg-type]
            return acc
        raise ProgramError(f"unexpected expression {kind!r}", line)  # pragma: no cover

    # statements -----------------------------------------------------------------------------
    def block(self, t: Any) -> tuple[Stmt, ...]:
        return tuple(self.stmt(c) for c in t.children)

    def stmt(self, t: Any) -> Stmt:
        line = _line(t)
        ch = t.children
        if t.data == "assign":
            return Assign(str(ch[0]), self.expr(ch[1]), line)
        if t.data == "if_stmt":
            orelse: tuple[Stmt, ...] = ()
            if len(ch) > 2 and ch[2] is not None:
                orelse = self.block(ch[2]) if ch[2].data == "block" else (self.stmt(ch[2]),)
            return If(self.expr(ch[0]), self.block(ch[1]), orelse, line)
        if t.data == "while_stmt":
            return While(self.expr(ch[0]), self.block(ch[1]), line)
        if t.data == "for_stmt":
            var = str(ch[0])
            lo, hi = self.expr(ch[1]), self.expr(ch[2])
            body = self.block(ch[3])
            step = Assign(var, BinOp("+", Name(var, line), Num(Fraction(1), line), line), line)
            loop = While(BinOp("<", Name(var, line), hi, line), (*body, step), line)
            # `for` is sugar for `var := lo; while (var < hi) { body; var := var + 1; }`
            return If(BoolLit(True, line), (Assign(var, lo, line), loop), (), line)
        if t.data == "return_stmt":
            return Return(tuple(self.expr(c) for c in ch), line)
        raise ProgramError(f"unexpected statement {t.data!r}", line)  # pragma: no cover


def parse_program(text: str, name: str = "program") -> Program:
    """Parse the text of a DP program into a [`Program`][dpcert.verify.ir.Program].

    Parameters
    ----------
    text
        The program source.
    name
        A display name (overridden by a ``program NAME;`` line).

    Returns
    -------
    Program
        The typed IR.

    Raises
    ------
    ProgramError
        With the line (and column) of a syntax error or a malformed declaration.
    """
    lark = require_lark()
    try:
        tree = _parser().parse(text)
    except lark.exceptions.UnexpectedInput as e:
        line, col = getattr(e, "line", None), getattr(e, "column", None)
        got = ""
        tok = getattr(e, "token", None)
        if tok is not None:
            got = f": unexpected {str(tok)!r}"
        elif getattr(e, "char", None) is not None:
            got = f": unexpected character {e.char!r}"
        raise ProgramError(f"column {col}: syntax error{got}", line) from None
    b = _Builder()
    inputs: list[InputDecl] = []
    adjacency: dict[str, Adjacency] = {}
    params: list[ParamDecl] = []
    consts: list[tuple[str, Expr]] = []
    claim: Expr | None = None
    claim_delta: Expr | None = None
    body: list[Stmt] = []
    for item in tree.children:
        line = _line(item)
        ch = item.children
        if item.data == "program_decl":
            name = str(ch[0])
        elif item.data == "input_decl":
            lo = hi = None
            if len(ch) > 3 and ch[3] is not None:
                lo, hi = _frac(ch[3].children[0].children[0]), _frac(ch[3].children[1].children[0])
                if lo > hi:
                    raise ProgramError(f"input range [{lo}, {hi}] is empty", line)
            inputs.append(InputDecl(str(ch[0]), str(ch[1]), b.expr(ch[2]), lo, hi, line))  # type: ignore[arg-type]
        elif item.data == "adj_decl":
            rng = ch[2]
            if rng.data == "adj_any":
                alo = ahi = None
            else:
                alo = _frac(rng.children[0].children[0])
                ahi = _frac(rng.children[1].children[0])
                if alo > ahi:
                    raise ProgramError(f"adjacency range [{alo}, {ahi}] is empty", line)
            if str(ch[0]) in adjacency:
                raise ProgramError(f"second adjacency for {str(ch[0])!r}", line)
            adjacency[str(ch[0])] = Adjacency(str(ch[1]), alo, ahi, line)  # type: ignore[arg-type]
        elif item.data == "param_decl":
            plo = phi = None
            if len(ch) > 1 and ch[1] is not None:
                if ch[1].data == "p_gt":
                    plo = _frac(ch[1].children[0].children[0])
                else:
                    plo = _frac(ch[1].children[0].children[0])
                    phi = _frac(ch[1].children[1].children[0])
            params.append(ParamDecl(str(ch[0]), plo, phi, line))
        elif item.data == "const_decl":
            consts.append((str(ch[0]), b.expr(ch[1])))
        elif item.data == "claim_decl":
            if claim is not None:
                raise ProgramError("more than one claim", line)
            claim = b.expr(ch[0])
            if len(ch) > 1 and ch[1] is not None:
                claim_delta = b.expr(ch[1])
        else:
            body.append(b.stmt(item))
    if claim is None:
        raise ProgramError("the program has no `claim` (e.g. `claim eps;`)", None)
    if not inputs:
        raise ProgramError("the program declares no private `input`", None)
    for d in inputs:
        if d.name not in adjacency:
            raise ProgramError(
                f"input {d.name!r} has no adjacency (e.g. `adjacent {d.name} : one in [-1, 1];`)",
                d.line,
            )
    for k, adj in adjacency.items():
        if k not in {d.name for d in inputs}:
            raise ProgramError(f"adjacency given for {k!r}, which is not an input", adj.line)
    if not body or not _returns(body):
        raise ProgramError("the program body must end with a `return`", None)
    return Program(tuple(inputs), adjacency, tuple(params), tuple(consts), claim, tuple(body), name,
                   claim_delta)


def _returns(body: list[Stmt]) -> bool:
    return any(isinstance(s, Return) for s in body)
