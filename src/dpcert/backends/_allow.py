"""Which Polars predicates a backend accepts: the engine's allow-list, with a narrow fallback.

The allow-list proper is :func:`dpcert.backends.polars_expr.check_row_local` (row-local,
infallible expressions; SQL strings parsed with ``pl.sql_expr`` and walked the same way).  Until
that module is present, :func:`check_polars_predicate` falls back to a deliberately narrow
deny-by-default walk: columns, literals, comparisons, ``&``/``|``/``~``, ``is_null`` and
``is_not_null`` only, resolved against an empty frame of the schema's types (so a comparison that
cannot be typed is refused here, not at run time).

Examples
--------
>>> check_polars_predicate("x > 3 AND y IS NULL", {"x": "int", "y": "str"}) is not None
True
>>> check_polars_predicate("x > (SELECT 1)", {"x": "int"})  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
dpcert.errors.UnsafeExpression: filter 'x > (SELECT 1)': SubPlan is not on the allow-list
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import polars as pl

from dpcert.errors import UnsafeExpression

__all__ = ["check_polars_predicate", "expr_tree", "polars_dtype"]

_CMP = {"Eq", "NotEq", "Lt", "LtEq", "Gt", "GtEq"}
_BOOL = {"And", "Or", "LogicalAnd", "LogicalOr"}
_FUNCS = {"IsNull", "IsNotNull", "Not"}
_DTYPES: dict[str, Any] = {"int": pl.Int64, "float": pl.Float64, "str": pl.String,
                           "bool": pl.Boolean, "date": pl.Date}


def polars_dtype(logical: str) -> Any:
    """A Polars dtype standing for a logical type (for resolving expressions on no rows)."""
    if logical not in _DTYPES:
        raise UnsafeExpression(f"columns of type {logical!r} cannot be used in filters")
    return _DTYPES[logical]


def expr_tree(p: Any) -> tuple[pl.Expr, Any]:
    """A predicate (SQL string or ``pl.Expr``) and its serialised expression tree (JSON)."""
    if isinstance(p, str):
        try:
            e = pl.sql_expr(p)
        except Exception as err:  # polars raises several types here
            raise UnsafeExpression(
                f"filter {p!r} could not be parsed as a row-local expression") from err
    elif isinstance(p, pl.Expr):
        e = p
    else:
        raise UnsafeExpression(f"filter of type {type(p).__name__} is not a SQL string or pl.Expr")
    try:
        tree = json.loads(e.meta.serialize(format="json"))
    except Exception as err:
        raise UnsafeExpression(f"filter {e} cannot be inspected") from err
    return e, tree


def _walk(node: Any, cols: Mapping[str, str], text: str) -> None:
    if not isinstance(node, dict) or len(node) != 1:
        raise UnsafeExpression(f"filter {text!r}: sub-expression {node!r} is not allowed")
    (kind, body), = node.items()
    if kind == "Column":
        if body not in cols:
            raise UnsafeExpression(f"filter {text!r}: unknown column {body!r}")
    elif kind == "Literal":
        pass
    elif kind == "BinaryExpr" and body.get("op") in _CMP | _BOOL:
        _walk(body["left"], cols, text)
        _walk(body["right"], cols, text)
    elif (kind == "Function" and isinstance(body.get("function"), dict)
          and body["function"].get("Boolean") in _FUNCS and len(body["input"]) == 1):
        _walk(body["input"][0], cols, text)
    elif (kind == "Function" and isinstance(body.get("function"), dict)
          and body["function"].get("Sql", {}).get("Binary") in _CMP
          and len(body["input"]) == 2):
        for child in body["input"]:
            _walk(child, cols, text)
    elif (kind == "Function" and isinstance(body.get("function"), dict)
          and "IsIn" in body["function"].get("Sql", {}) and len(body["input"]) == 2
          and "Literal" in body["input"][1]):
        _walk(body["input"][0], cols, text)
    elif (kind == "Cast" and body.get("dtype") == {"Literal": "Boolean"}
          and isinstance(body.get("expr"), dict)
          and set(body["expr"]) <= {"BinaryExpr", "Function"}):
        _walk(body["expr"], cols, text)  # SQL's NOT wraps a (no-op) cast of a boolean
    else:
        raise UnsafeExpression(f"filter {text!r}: {kind} is not on the fallback allow-list "
                               "(columns, literals, comparisons, and/or/not, is_null)")


def _fallback(p: Any, schema: Mapping[str, str]) -> pl.Expr:
    e, tree = expr_tree(p)
    text = p if isinstance(p, str) else str(e)
    _walk(tree, schema, text)
    empty = pl.DataFrame(schema={c: polars_dtype(t) for c, t in schema.items()
                                 if t in _DTYPES})
    try:
        out = empty.lazy().select(e.alias("#p")).collect()
    except Exception as err:
        raise UnsafeExpression(f"filter {text!r} does not type-check against the schema") from err
    if out.schema["#p"] != pl.Boolean:
        raise UnsafeExpression(f"filter {text!r} is not a boolean expression")
    return e


def check_polars_predicate(p: Any, schema: Mapping[str, str]) -> pl.Expr:
    """The predicate as an allow-listed ``pl.Expr`` or :class:`UnsafeExpression`."""
    try:
        from dpcert.backends.polars_expr import (  # type: ignore[import-not-found,unused-ignore]
            check_row_local,
        )
    except ImportError:
        return _fallback(p, schema)
    return check_row_local(p, schema)  # type: ignore[no-any-return,unused-ignore]
