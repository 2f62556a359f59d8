"""Filters for the Spark backend: a deny-by-default allow-list, then a translation to Spark.

A predicate reaches Spark only as a Column that dpcert *builds itself* from a small checked tree,
never as the user's own object:

* a **SQL string** is parsed by the grammar below (and must also pass the Polars allow-list,
  `dpcert.backends._allow.check_polars_predicate`, so both engines accept the same strings);
* a **Column** is read through its Spark 4 text form (``and(>(a, 3), isNull(b))``, string
  literals quoted), parsed into the same tree, and rebuilt; anything it does not recognise
  (``rand``, UDFs, windows, arithmetic, casts, sub-queries, ...) is refused.

Allowed, and infallible on every value of the schema's types (no ANSI-mode error is possible):
columns, literals (integers, floats, strings, booleans, NULL), comparisons between operands of
the same kind (numbers with numbers, strings with strings, booleans with booleans), ``AND``,
``OR``, ``NOT``, ``IS [NOT] NULL``, and ``[NOT] IN`` a list of literals.  No arithmetic (Spark
in ANSI mode raises on overflow), no casts, no functions.

Grammar of SQL strings::

    expr    := and ('OR' and)*          and  := not ('AND' not)*
    not     := 'NOT' not | pred         pred := prim [cmp prim | 'IS' ['NOT'] 'NULL'
                                                      | ['NOT'] 'IN' '(' lit (',' lit)* ')']
    prim    := '(' expr ')' | column | lit

Examples
--------
>>> parse_sql("a > 3 AND NOT (s IN ('x', 'y') OR b IS NULL)")  # doctest: +NORMALIZE_WHITESPACE
('and', ('>', ('col', 'a'), ('lit', 3)),
 ('not', ('or', ('in', ('col', 's'), ('lit', 'x'), ('lit', 'y')), ('isnull', ('col', 'b')))))
>>> parse_column_text("and(>(a, 3L), isNull(b))")
('and', ('>', ('col', 'a'), ('lit', 3)), ('isnull', ('col', 'b')))
>>> parse_sql("rand() > 0.5")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.UnsafeExpression: filter 'rand() > 0.5': '(' at position 4 is not allowed ...
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpcert.errors import UnsafeExpression

if TYPE_CHECKING:
    from pyspark.sql import Column

    from dpcert.backends._spark_functions import SparkFunctions

__all__ = ["CheckedPredicate", "check_spark_predicate", "parse_column_text", "parse_sql",
           "rename_tree", "to_spark", "tree_columns"]

Node = tuple[Any, ...]
_CMP = {"=": "=", "==": "=", "<>": "!=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_TOKEN = re.compile(r"""\s*(?:
    (?P<num>-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?[LDld]?)
  | (?P<str>'(?:[^'\\]|\\.|'')*')
  | (?P<bq>`(?:[^`]|``)+`)
  | (?P<op><=>|<>|!=|==|<=|>=|[=<>!(),])
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  )""", re.VERBOSE)
_ALLOWED = "columns, literals, comparisons, AND/OR/NOT, IS NULL, IN only"


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.lastgroup is None:
            raise UnsafeExpression(f"filter {text!r}: cannot read the text at position {pos}")
        out.append((m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup)))
        pos = m.end()
    return out


def _literal(kind: str, tok: str) -> int | float | str:
    if kind == "num":
        t = tok.rstrip("LDld")
        return float(t) if any(c in t for c in ".eE") or tok[-1:] in "Dd" else int(t)
    body = tok[1:-1]
    return re.sub(r"\\(.)|''", lambda m: m.group(1) or "'", body)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.toks, self.i = text, _tokens(text), 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def word(self, *words: str) -> bool:
        t = self.peek()
        if t is not None and t[0] == "id" and t[1].upper() in words:
            self.i += 1
            return True
        return False

    def op(self, *ops: str) -> str | None:
        t = self.peek()
        if t is not None and t[0] == "op" and t[1] in ops:
            self.i += 1
            return t[1]
        return None

    def fail(self) -> UnsafeExpression:
        t = self.peek()
        where = f"{t[1]!r} at position {t[2]}" if t else "the end"
        return UnsafeExpression(f"filter {self.text!r}: {where} is not allowed ({_ALLOWED})")

    def done(self, node: Node) -> Node:
        if self.peek() is not None:
            raise self.fail()
        return node

    # -- SQL ---------------------------------------------------------------------------------
    def sql_expr(self) -> Node:
        node = self.sql_and()
        while self.word("OR"):
            node = ("or", node, self.sql_and())
        return node

    def sql_and(self) -> Node:
        node = self.sql_not()
        while self.word("AND"):
            node = ("and", node, self.sql_not())
        return node

    def sql_not(self) -> Node:
        if self.word("NOT"):
            return ("not", self.sql_not())
        return self.sql_pred()

    def sql_pred(self) -> Node:
        left = self.sql_prim()
        cmp = self.op(*_CMP)
        if cmp is not None:
            return (_CMP[cmp], left, self.sql_prim())
        if self.word("IS"):
            negate = self.word("NOT")
            if not self.word("NULL"):
                raise self.fail()
            return ("not", ("isnull", left)) if negate else ("isnull", left)
        negate = self.word("NOT")
        if self.word("IN"):
            if not self.op("("):
                raise self.fail()
            items = [self.sql_lit()]
            while self.op(","):
                items.append(self.sql_lit())
            if not self.op(")"):
                raise self.fail()
            node: Node = ("in", left, *items)
            return ("not", node) if negate else node
        if negate:
            raise self.fail()
        return left

    def sql_prim(self) -> Node:
        if self.op("("):
            node = self.sql_expr()
            if not self.op(")"):
                raise self.fail()
            return node
        t = self.peek()
        if t is not None and t[0] == "id" and t[1].upper() not in _KEYWORDS:
            self.i += 1
            nxt = self.peek()
            if nxt is not None and nxt[1] == "(":
                raise self.fail()
            return ("col", t[1])
        if t is not None and t[0] == "bq":
            self.i += 1
            return ("col", t[1][1:-1].replace("``", "`"))
        return self.sql_lit()

    def sql_lit(self) -> Node:
        t = self.peek()
        if t is None:
            raise self.fail()
        if t[0] in ("num", "str"):
            self.i += 1
            return ("lit", _literal(t[0], t[1]))
        for word, value in (("TRUE", True), ("FALSE", False), ("NULL", None)):
            if self.word(word):
                return ("lit", value)
        raise self.fail()

    # -- Spark 4 Column text (prefix form) --------------------------------------------------------
    def col_term(self) -> Node:
        t = self.peek()
        if t is None:
            raise self.fail()
        name = t[1]
        nxt = self.toks[self.i + 1] if self.i + 1 < len(self.toks) else None
        if nxt is not None and nxt[1] == "(" and t[0] in ("id", "op"):
            self.i += 2
            args = [self.col_term()]
            while self.op(","):
                args.append(self.col_term())
            if not self.op(")"):
                raise self.fail()
            return self.col_call(name, args, t)
        if t[0] == "id" and name.upper() in ("TRUE", "FALSE", "NULL"):
            return self.sql_lit()
        if t[0] == "id":
            self.i += 1
            return ("col", name)
        if t[0] == "bq":
            self.i += 1
            return ("col", name[1:-1].replace("``", "`"))
        return self.sql_lit()

    def col_call(self, name: str, args: list[Node], tok: tuple[str, str, int]) -> Node:
        low = name.lower()
        if low in ("and", "or") and len(args) == 2:
            return (low, *args)
        if low in ("!", "not") and len(args) == 1:
            return ("not", args[0])
        if name in _CMP and name != "<>" and len(args) == 2:
            return (_CMP[name], *args)
        if low == "isnull" and len(args) == 1:
            return ("isnull", args[0])
        if low == "isnotnull" and len(args) == 1:
            return ("not", ("isnull", args[0]))
        if low == "in" and len(args) >= 2 and all(a[0] == "lit" for a in args[1:]):
            return ("in", *args)
        raise UnsafeExpression(f"filter {self.text!r}: {name}(...) at position {tok[2]} is not "
                               f"allowed ({_ALLOWED})")


_KEYWORDS = {"AND", "OR", "NOT", "IS", "IN", "NULL", "TRUE", "FALSE", "SELECT", "FROM", "OVER"}


def parse_sql(text: str) -> Node:
    """Parse a SQL predicate into dpcert's filter tree (or `UnsafeExpression`)."""
    p = _Parser(text)
    return p.done(p.sql_expr())


def parse_column_text(text: str) -> Node:
    """Parse a Spark 4 Column's text form into dpcert's filter tree."""
    p = _Parser(text)
    return p.done(p.col_term())


def check_spark_text(text: str, schema: Mapping[str, str], *, sql: bool) -> Node:
    """Check a filter's text as this allow-list does: a SQL string (``sql``) or the inner text
    of a Spark Column (``and(>(a, 3), isNull(b))``); returns its tree (used to re-check a
    certificate's filters without Spark)."""
    tree = parse_sql(text) if sql else parse_column_text(text)
    _kind(tree, schema, text)
    return tree


def _kind(node: Node, schema: Mapping[str, str], text: str) -> str:
    """Type-check a node: its kind (``num``, ``str``, ``bool``, ``null``, or a column type)."""
    tag = node[0]
    if tag == "col":
        if node[1] not in schema:
            raise UnsafeExpression(f"filter {text!r}: unknown column {node[1]!r}")
        t = schema[node[1]]
        return "num" if t in ("int", "float") else t
    if tag == "lit":
        v = node[1]
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "bool"
        return "num" if isinstance(v, (int, float)) else "str"
    if tag in ("and", "or", "not"):
        for child in node[1:]:
            if _kind(child, schema, text) not in ("bool", "null"):
                raise UnsafeExpression(f"filter {text!r}: {tag.upper()} needs boolean operands")
        return "bool"
    if tag == "isnull":
        _kind(node[1], schema, text)
        return "bool"
    kinds = {_kind(c, schema, text) for c in node[1:]} - {"null"}
    if len(kinds) > 1 or kinds & {"date", "datetime", "datetime_ntz", "other"}:
        raise UnsafeExpression(f"filter {text!r}: {tag} compares values of kinds {sorted(kinds)}"
                               " (only numbers, strings or booleans with their own kind)")
    return "bool"


def to_spark(node: Node, F: SparkFunctions | None = None) -> Column:
    """Build the Spark Column of a checked filter tree with the functions module ``F``
    (``pyspark.sql.functions`` by default, imported here only)."""
    if F is None:
        from pyspark.sql import functions

        return to_spark(node, functions)

    tag = node[0]
    if tag == "col":
        return F.col("`" + node[1].replace("`", "``") + "`")
    if tag == "lit":
        return F.lit(node[1])
    args = [to_spark(c, F) for c in node[1:]]
    if tag == "and":
        return args[0] & args[1]
    if tag == "or":
        return args[0] | args[1]
    if tag == "not":
        return ~args[0]
    if tag == "isnull":
        return args[0].isNull()
    if tag == "in":
        return args[0].isin(*[c[1] for c in node[2:]])
    ops = {"=": "__eq__", "!=": "__ne__", "<": "__lt__", "<=": "__le__", ">": "__gt__",
           ">=": "__ge__"}
    out: Column = getattr(args[0], ops[tag])(args[1])
    return out


@dataclass(frozen=True)
class CheckedPredicate:
    """A filter tree that passed the allow-list; `column` rebuilds it as a Column."""

    tree: Node

    def column(self, F: SparkFunctions) -> Column:
        """The Column, built with the functions module ``F`` (classic or Spark Connect)."""
        return to_spark(self.tree, F)


def tree_columns(tree: Node) -> list[str]:
    """The columns a checked tree reads, in order of appearance."""
    if tree[0] == "col":
        return [tree[1]]
    if tree[0] == "lit":
        return []
    return [c for sub in tree[1:] if isinstance(sub, tuple) for c in tree_columns(sub)]


def rename_tree(tree: Node, mapping: Mapping[str, str]) -> Node:
    """The tree reading ``mapping[c]`` wherever it read column ``c``."""
    if tree[0] == "col":
        return ("col", mapping[tree[1]])
    if tree[0] == "lit":
        return tree
    return (tree[0], *(rename_tree(s, mapping) if isinstance(s, tuple) else s for s in tree[1:]))


def check_spark_predicate(p: object, schema: Mapping[str, str]) -> CheckedPredicate:
    """A SQL string or Spark Column as a `CheckedPredicate` (rebuilt by dpcert, never
    the caller's object), or `UnsafeExpression` naming what is not allowed."""
    if isinstance(p, CheckedPredicate):  # already checked, renamed to admitted columns
        _kind(p.tree, schema, str(p.tree))
        return p
    if isinstance(p, str):
        from dpcert.backends._allow import check_polars_predicate

        tree = parse_sql(p)
        _kind(tree, schema, p)
        check_polars_predicate(p, schema)  # the same strings pass on both engines
    else:
        text = str(p)
        m = re.fullmatch(r"Column<'(.*)'>", text, re.DOTALL)
        if m is None or type(p).__name__ != "Column":
            raise UnsafeExpression(f"filter of type {type(p).__name__} is not a SQL string or a "
                                   "Spark Column")
        tree = parse_column_text(m.group(1))
        _kind(tree, schema, m.group(1))
    return CheckedPredicate(tree)
