"""Filters for the DuckDB backend: SQL strings through the allow-list of the Spark backend, then
rendered as DuckDB SQL by dpcert itself.

A filter is a SQL string (a Polars expression or any other object is refused).  It is parsed by
the grammar of `dpcert.backends.spark_expr` -- columns, literals, comparisons between
operands of the same kind, ``AND``/``OR``/``NOT``, ``IS [NOT] NULL``, ``[NOT] IN`` a list of
literals; no arithmetic, cast or function -- with DuckDB's quoting: ``"double quoted"``
identifiers (as the SQL front end writes them) and ``'...'`` strings in which only ``''`` is an
escape.  It must also pass the Polars allow-list
(`dpcert.backends._allow.check_polars_predicate`), so a filter means the same on both
engines; ``NULL`` inside an ``IN`` list is refused (``NOT IN`` with a null differs between SQL's
three-valued logic and Polars), and so are integer literals beyond 64 bits.  The checked tree is
rendered with quoted identifiers and typed literals (`to_duckdb_sql`), never the user's
text.

Examples
--------
>>> tree = parse_duckdb_sql('"a b" > 3 AND s IN (\\'x\\', \\'it\\'\\'s\\')')
>>> to_duckdb_sql(tree)
'(("a b" > 3) AND ("s" IN (\\'x\\', \\'it\\'\\'s\\')))'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dpcert.backends import spark_expr
from dpcert.backends.spark_expr import CheckedPredicate, Node, _kind, _Parser
from dpcert.errors import UnsafeExpression

__all__ = ["check_duckdb_predicate", "parse_duckdb_sql", "quote", "to_duckdb_sql"]

_DQ = re.compile(r'\s*"((?:[^"]|"")+)"')
_SQ = re.compile(r"\s*'((?:[^']|'')*)'")


def quote(name: str) -> str:
    """A DuckDB identifier, double-quoted."""
    return '"' + name.replace('"', '""') + '"'


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """Tokens in the Spark grammar's form: a ``"name"`` becomes a backquoted identifier, a
    ``'string'`` a string token with backslash escapes (so ``\\`` stays a literal backslash)."""
    out, pos = [], 0
    while pos < len(text) and text[pos:].strip():
        dq, sq = _DQ.match(text, pos), _SQ.match(text, pos)
        if dq is not None:
            name = dq.group(1).replace('""', '"')
            out.append(("bq", "`" + name.replace("`", "``") + "`", dq.start(1) - 1))
            pos = dq.end()
        elif sq is not None:
            value = sq.group(1).replace("''", "'")
            esc = value.replace("\\", "\\\\").replace("'", "\\'")
            out.append(("str", "'" + esc + "'", sq.start(1) - 1))
            pos = sq.end()
        else:
            m = spark_expr._TOKEN.match(text, pos)
            if m is None or m.lastgroup is None or m.lastgroup in ("bq", "str"):
                raise UnsafeExpression(f"filter {text!r}: cannot read the text at position "
                                       f"{pos}")
            out.append((m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup)))
            pos = m.end()
    return out


class _DuckParser(_Parser):
    def __init__(self, text: str) -> None:
        self.text, self.toks, self.i = text, _tokens(text), 0


def parse_duckdb_sql(text: str) -> Node:
    """Parse a SQL predicate (DuckDB quoting) into dpcert's filter tree."""
    p = _DuckParser(text)
    tree = p.done(p.sql_expr())
    _check_literals(tree, text)
    return tree


def _check_literals(tree: Node, text: str) -> None:
    if tree[0] == "lit":
        v = tree[1]
        if isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**63:
            raise UnsafeExpression(f"filter {text!r}: integer literal {v} is beyond 64 bits")
        return
    if tree[0] == "in" and any(c[1] is None for c in tree[2:]):
        raise UnsafeExpression(f"filter {text!r}: NULL in an IN list; use IS NULL")
    for c in tree[1:]:
        if isinstance(c, tuple):
            _check_literals(c, text)


def _literal(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"CAST('{v!r}' AS DOUBLE)"
    return "'" + str(v).replace("'", "''") + "'"


def to_duckdb_sql(tree: Node) -> str:
    """DuckDB SQL of a checked filter tree (every operator parenthesised)."""
    tag = tree[0]
    if tag == "col":
        return quote(tree[1])
    if tag == "lit":
        return _literal(tree[1])
    args = [to_duckdb_sql(c) for c in tree[1:]]
    if tag in ("and", "or"):
        return f"({args[0]} {tag.upper()} {args[1]})"
    if tag == "not":
        return f"(NOT {args[0]})"
    if tag == "isnull":
        return f"({args[0]} IS NULL)"
    if tag == "in":
        return f"({args[0]} IN ({', '.join(args[1:])}))"
    return f"({args[0]} {tag} {args[1]})"


def check_duckdb_predicate(p: Any, schema: Mapping[str, str]) -> CheckedPredicate:
    """A SQL string as a `CheckedPredicate`, or
    `UnsafeExpression` naming what is not allowed."""
    if isinstance(p, CheckedPredicate):  # already checked, renamed to admitted columns
        _kind(p.tree, schema, str(p.tree))
        return p
    if not isinstance(p, str):
        raise UnsafeExpression(f"filter of type {type(p).__name__}: the DuckDB backend takes "
                               "filters as SQL strings")
    from dpcert.backends._allow import check_polars_predicate

    tree = parse_duckdb_sql(p)
    _kind(tree, schema, p)
    check_polars_predicate(p, schema)  # the same strings pass on both engines
    return CheckedPredicate(tree)
