"""The allow-list for Polars expressions evaluated on private rows (filters).

A filter runs before contribution bounding, so the proof that neighbouring tables stay neighbours
(``docs/proofs/engine.md``) needs it to be a function of **one row** that **cannot fail** on any
value of the columns' types.  Anything else breaks the certificate: ``pl.col("x") >=
pl.col("x").mean()`` lets one added person flip a thousand rows, and a strict cast that raises
only on some values is a one-bit oracle.  `check_row_local` decides this by walking the
expression's serialized tree (``Expr.meta.serialize(format="json")``) against an allow-list:
**deny by default** -- a node kind, function or option that is not listed is refused, so a new
Polars feature is refused until someone reviews it.  SQL strings are parsed with
``pl.sql_expr`` and pass the same walk (``x >= AVG(x) OVER ()`` becomes an ``Over`` node).

Admitted (row-local and total on their input types):

* columns of scalar types (integer, float, boolean, string, categorical, date, datetime), and
  scalar literals (a literal *list* only as the set of ``is_in``);
* arithmetic ``+ - * / // %`` on numeric or string columns (Polars wraps integer overflow and
  gives null for integer division by zero; it never raises), comparisons, ``& | ^``, ``~``;
* ``is_null``/``is_not_null``/``is_nan``/``is_not_nan``/``is_finite``/``is_infinite``,
  ``is_between``, ``is_in`` with a literal list, ``any_horizontal``/``all_horizontal``;
* ``abs``, ``round``, ``clip``, ``fill_null`` with a literal, ``fill_nan``, when/then/otherwise;
* string ``contains`` (literal pattern; a regular expression only if it compiles),
  ``starts_with``/``ends_with``, ``len_chars``/``len_bytes``, ``to_lowercase``/``to_uppercase``;
* date parts (``dt.year()``, ``dt.month()``, ...); non-strict casts to scalar types.

Everything else is refused, naming the sub-expression: aggregations, ``pl.len()``, windows
(``over``), ``rank``, ``shift``, ``cum_*``, ``sort``, ``unique``/``is_unique``, ``head``/``slice``,
``int_range``, ``filter`` inside an expression, selectors and regex column names, Python
functions (``map_elements``), strict casts, ``str.to_integer``, ``str.strptime``, Series literals.
Type errors (``pl.col("name") > 3``) do not depend on values; a dry run on an empty and on an
all-null one-row frame of the schema finds them before anything is charged.

Examples
--------
>>> import polars as pl
>>> from dpcert.backends.polars_expr import check_row_local
>>> schema = {"x": pl.Float64, "g": pl.String}
>>> check_row_local((pl.col("x") >= 18) & pl.col("g").is_in(["a", "b"]), schema) is not None
True
>>> check_row_local(pl.col("x") >= pl.col("x").mean(), schema)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.UnsafeExpression: expression ... col("x").mean() (an aggregation) is not row-local...
>>> check_row_local("x >= AVG(x) OVER (PARTITION BY g)", schema)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.UnsafeExpression: expression ... (a window (over)) is not row-local...
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import TypeAlias

import polars as pl

from dpcert._types import JSON
from dpcert.backends._polars_types import DType
from dpcert.errors import InvalidParameter, UnsafeExpression

__all__ = ["check_predicate", "check_row_local", "polars_schema"]

_BINARY_OPS = {
    "Eq", "NotEq", "Lt", "LtEq", "Gt", "GtEq", "EqValidity", "NotEqValidity",
    "And", "Or", "Xor", "LogicalAnd", "LogicalOr",
    "Plus", "Minus", "Multiply", "TrueDivide", "FloorDivide", "Modulus",
}
_ARITHMETIC = {"Plus", "Minus", "Multiply", "TrueDivide", "FloorDivide", "Modulus"}
_BOOLEAN_FUNCS = {"IsNull", "IsNotNull", "IsNan", "IsNotNan", "IsFinite", "IsInfinite", "Not",
                  "AnyHorizontal", "AllHorizontal", "IsBetween", "IsIn"}
_STRING_FUNCS = {"Contains", "StartsWith", "EndsWith", "LenChars", "LenBytes", "Lowercase",
                 "Uppercase"}
_TEMPORAL_FUNCS = {"Year", "Month", "Day", "Quarter", "Week", "WeekDay", "OrdinalDay", "Hour",
                   "Minute", "Second", "IsoYear"}
_PLAIN_FUNCS = {"Abs", "Negate", "FillNull", "Clip", "Round", "Coalesce"}
_CAST_TARGETS = {"Boolean", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32",
                 "UInt64", "Float32", "Float64", "String"}
#: Column types a filter may read (scalars that Polars compares and casts without failing).
_COLUMN_TYPES = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32,
                 pl.UInt64, pl.Float32, pl.Float64, pl.Boolean, pl.String, pl.Categorical,
                 pl.Date, pl.Datetime)
_ARITH_TYPES = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32,
                pl.UInt64, pl.Float32, pl.Float64, pl.Boolean, pl.String)
#: A schema: Polars dtypes, or the backend protocol's logical type names, per column.
SchemaLike: TypeAlias = "Mapping[str, DType | str]"

_LOGICAL: dict[str, DType] = {
    "int": pl.Int64, "float": pl.Float64, "str": pl.String, "bool": pl.Boolean, "date": pl.Date,
    "datetime": pl.Datetime("us", "UTC"), "datetime_ntz": pl.Datetime("us")}

_WHY = {"Agg": "an aggregation", "Over": "a window (over)", "Len": "pl.len()",
        "Sort": "a sort", "SortBy": "a sort", "Slice": "a slice/head", "Filter": "a filter",
        "Gather": "a gather", "Selector": "a column selector", "Window": "a window",
        "AnonymousFunction": "a Python function", "Explode": "an explode", "Eval": "an eval"}


def polars_schema(schema: SchemaLike) -> dict[str, DType]:
    """A ``{column: polars dtype}`` dict from a Polars schema, a mapping of dtypes, or a mapping
    of the backend protocol's logical type names (``"int"``, ``"float"``, ...)."""
    out: dict[str, DType] = {}
    for name, t in dict(schema).items():
        if isinstance(t, str):
            out[name] = _LOGICAL.get(t, pl.Object)
        else:
            out[name] = t
    return out


def _render(node: JSON) -> str:
    """The sub-expression of a serialized node, as Polars prints it (JSON if that fails)."""
    try:
        return str(pl.Expr.deserialize(io.StringIO(json.dumps(node)), format="json"))
    except Exception:
        return json.dumps(node)[:200]


def _fields(body: JSON) -> dict[str, JSON]:
    """A node body that must be an object (``TypeError`` otherwise: an unknown form)."""
    if not isinstance(body, dict):
        raise TypeError(body)
    return body


def _items(body: JSON) -> list[JSON]:
    """A node body that must be an array (``TypeError`` otherwise: an unknown form)."""
    if not isinstance(body, list):
        raise TypeError(body)
    return body


def _at(node: JSON, *path: str) -> JSON:
    """``node[path[0]][path[1]]...`` through objects (``TypeError`` / ``KeyError`` otherwise)."""
    for key in path:
        node = _fields(node)[key]
    return node


class _Refused(Exception):
    def __init__(self, node: JSON, why: str) -> None:
        super().__init__(why)
        self.node, self.why = node, why


class _Walker:
    def __init__(self, schema: dict[str, DType]) -> None:
        self.schema = schema
        self.patterns: list[str] = []

    def walk(self, node: JSON) -> set[str]:
        """Check ``node``; return the columns it reads."""
        if isinstance(node, str):
            raise _Refused(node, f"{_WHY.get(node, repr(node))} is not row-local")
        if not isinstance(node, dict) or len(node) != 1:
            raise _Refused(node, "is not an expression dpcert knows")
        (kind, body), = node.items()
        method = getattr(self, f"_n_{kind}", None)
        if method is None:
            what = _WHY.get(kind, f"a {kind} node")
            raise _Refused(node, f"({what}) is not row-local or not on the allow-list")
        cols: set[str] = method(node, body)
        return cols

    def _n_Column(self, node: JSON, name: JSON) -> set[str]:
        if not isinstance(name, str) or name not in self.schema:
            raise _Refused(node, f"reads unknown column {name!r}; the data has "
                                 f"{sorted(self.schema)}")
        dt = self.schema[name]
        if not isinstance(dt, _COLUMN_TYPES) and dt not in _COLUMN_TYPES:
            raise _Refused(node, f"reads column {name!r} of type {dt}, which filters may not read")
        return {name}

    def _n_Literal(self, node: JSON, body: JSON) -> set[str]:
        if isinstance(body, dict) and len(body) == 1:
            (k, v), = body.items()
            if k == "Dyn" or (k == "Scalar" and not (isinstance(v, dict) and "List" in v)):
                return set()
        raise _Refused(node, "(a Series, range or list literal) is not a scalar")

    def _n_Alias(self, node: JSON, body: JSON) -> set[str]:
        return self.walk(_items(body)[0])

    def _n_BinaryExpr(self, node: JSON, body: JSON) -> set[str]:
        body = _fields(body)
        op = body.get("op")
        if op not in _BINARY_OPS:
            raise _Refused(node, f"uses operator {op!r}, which is not on the allow-list")
        cols = self.walk(body["left"]) | self.walk(body["right"])
        if op in _ARITHMETIC:
            self._arith_types(node, cols)
        return cols

    def _arith_types(self, node: JSON, cols: set[str]) -> None:
        for c in cols:
            dt = self.schema[c]
            if not isinstance(dt, _ARITH_TYPES) and dt not in _ARITH_TYPES:
                raise _Refused(node, f"does arithmetic on column {c!r} of type {dt} "
                                     "(temporal arithmetic can overflow and fail)")

    def _n_Ternary(self, node: JSON, body: JSON) -> set[str]:
        body = _fields(body)
        return (self.walk(body["predicate"]) | self.walk(body["truthy"])
                | self.walk(body["falsy"]))

    def _n_Cast(self, node: JSON, body: JSON) -> set[str]:
        body = _fields(body)
        dtype = body.get("dtype")
        target = dtype.get("Literal") if isinstance(dtype, dict) else None
        if not isinstance(target, str) or target not in _CAST_TARGETS:
            raise _Refused(node, f"casts to {json.dumps(dtype)}; filters may cast only to "
                                 f"{sorted(_CAST_TARGETS)}")
        cols = self.walk(body["expr"])
        if body.get("options") != "NonStrict" and not _widening(
                self._dtype_of(body["expr"]), target):
            raise _Refused(node, "is a strict cast (it fails on some values): use "
                                 "cast(..., strict=False), or TRY_CAST in SQL")
        return cols

    def _dtype_of(self, node: JSON) -> DType | None:
        """The output type of an (already admitted) sub-expression, from the schema alone."""
        try:
            sub = pl.Expr.deserialize(io.StringIO(json.dumps(node)), format="json")
            return pl.DataFrame(schema=self.schema).lazy().select(sub.alias("o")
                                                                  ).collect_schema()["o"]
        except Exception:
            return None

    def _n_Function(self, node: JSON, body: JSON) -> set[str]:
        body = _fields(body)
        func = body.get("function")
        inputs = _items(body.get("input", []))
        if isinstance(func, str):
            family, detail = func, None
        elif isinstance(func, dict) and len(func) == 1:
            (family, detail), = func.items()
        else:
            raise _Refused(node, "is a function dpcert does not know")
        name = detail if isinstance(detail, str) else (
            next(iter(detail)) if isinstance(detail, dict) and len(detail) == 1 else None)
        if (family == "Boolean" and name in _BOOLEAN_FUNCS) or (family, name) == ("Sql", "IsIn"):
            if name == "IsIn":
                return self._is_in(node, inputs)
        elif family == "StringExpr" and name in _STRING_FUNCS:
            if name == "Contains":
                self._pattern(node, inputs, detail)
        elif family == "TemporalExpr" and name in _TEMPORAL_FUNCS:
            pass
        elif family in _PLAIN_FUNCS and (detail is None or family in ("Clip", "Round")):
            if family == "FillNull" and not self._is_literal(inputs[1:2]):
                raise _Refused(node, "fills nulls with a non-literal value")
        else:
            label = family if name is None else f"{family}.{name}"
            raise _Refused(node, f"(function {label}) is not row-local or not on the "
                                 "allow-list")
        cols: set[str] = set()
        for i in inputs:
            cols |= self.walk(i)
        return cols

    @staticmethod
    def _is_literal(nodes: list[JSON]) -> bool:
        return len(nodes) == 1 and isinstance(nodes[0], dict) and "Literal" in nodes[0]

    def _is_in(self, node: JSON, inputs: list[JSON]) -> set[str]:
        if len(inputs) != 2 or not self._is_literal(inputs[1:]):
            raise _Refused(node, "is_in needs a literal list of values")
        lit = _at(inputs[1], "Literal")
        if not (isinstance(lit, dict) and ("Scalar" in lit or "Dyn" in lit or "Series" in lit)):
            raise _Refused(node, "is_in needs a literal list of values")
        return self.walk(inputs[0])

    def _pattern(self, node: JSON, inputs: list[JSON], detail: JSON) -> None:
        pat = inputs[1] if len(inputs) == 2 else None
        try:
            value = _at(pat, "Literal", "Scalar", "String")
        except (TypeError, KeyError):
            raise _Refused(node, "str.contains needs a literal string pattern") from None
        if not isinstance(value, str):
            raise _Refused(node, "str.contains needs a literal string pattern")
        if isinstance(detail, dict) and not _fields(detail.get("Contains", {})).get("literal",
                                                                                   False):
            self.patterns.append(value)


_INT_BITS = {"Int8": 8, "Int16": 16, "Int32": 32, "Int64": 64}
_UINT_BITS = {"UInt8": 8, "UInt16": 16, "UInt32": 32, "UInt64": 64}


def _widening(source: DType | None, target: str) -> bool:
    """Can a strict cast from ``source`` to ``target`` never fail (same type, Boolean to a
    number, any number to Float64 or String, an integer to a wider integer)?"""
    if source is None:
        return False
    src = str(source.base_type()) if hasattr(source, "base_type") else str(source)
    if src == target or (target == "String" and (src in _INT_BITS or src in _UINT_BITS
                                                 or src in ("Float32", "Float64", "Boolean"))):
        return True
    if src == "Boolean":
        return target in _INT_BITS or target in _UINT_BITS or target.startswith("Float")
    if target == "Float64" and (src in _INT_BITS or src in _UINT_BITS or src == "Float32"):
        return True
    if src in _INT_BITS and target in _INT_BITS:
        return _INT_BITS[target] >= _INT_BITS[src]
    if src in _UINT_BITS and target in _UINT_BITS:
        return _UINT_BITS[target] >= _UINT_BITS[src]
    if src in _UINT_BITS and target in _INT_BITS:
        return _INT_BITS[target] > _UINT_BITS[src]
    return False


def _refuse(label: str, node: JSON, why: str) -> UnsafeExpression:
    return UnsafeExpression(
        f"expression {label} reads other rows or can fail on some values: {_render(node)} "
        f"{why}; filters may use only row-local, infallible operations (see "
        "dpcert.backends.polars_expr)")


def check_row_local(expr: object, schema: SchemaLike) -> pl.Expr:
    """Return ``expr`` (a SQL string is parsed first) if it is row-local and infallible on
    every value of ``schema``'s types; raise `UnsafeExpression` naming the
    offending sub-expression otherwise.  Reads no rows.

    Parameters
    ----------
    expr
        A Polars expression, or a SQL expression string (``"age >= 18 AND region = 'n'"``).
    schema
        The data's schema (Polars schema, ``{column: dtype}``, or ``{column: logical type}``).
    """
    sch = polars_schema(schema)
    if isinstance(expr, str):
        label = repr(expr)
        try:
            parsed = pl.sql_expr(expr)
        except Exception as e:
            raise UnsafeExpression(f"expression {label} is not valid SQL: {e}") from None
        if not isinstance(parsed, pl.Expr):
            raise UnsafeExpression(f"expression {label} is not one SQL expression")
        e_: pl.Expr = parsed
    elif isinstance(expr, pl.Expr):
        e_ = expr
        label = str(expr)
    else:
        raise UnsafeExpression(
            f"expression={expr!r} of type {type(expr).__name__} is neither a Polars "
            "expression nor a SQL string")
    try:
        tree = json.loads(e_.meta.serialize(format="json"))
    except Exception:
        raise UnsafeExpression(
            f"expression {label} cannot be inspected (a Python function such as map_elements "
            "or a custom plugin?); filters may use only row-local, infallible operations"
        ) from None
    walker = _Walker(sch)
    try:
        walker.walk(tree)
    except _Refused as r:
        raise _refuse(label, r.node, r.why) from None
    except (TypeError, KeyError, AttributeError, IndexError, ValueError):  # unexpected shape
        raise UnsafeExpression(
            f"expression {label} has a form dpcert does not know; filters may use only "
            "row-local, infallible operations (see dpcert.backends.polars_expr)") from None
    for p in walker.patterns:
        try:
            pl.select(pl.lit("").str.contains(p, literal=False, strict=True))
        except Exception:
            raise UnsafeExpression(
                f"expression {label}: regular expression {p!r} does not compile") from None
    _dry_run(e_, sch, label)
    return e_


def _dry_run(expr: pl.Expr, schema: dict[str, DType], label: str) -> pl.DataFrame:
    """Evaluate on an empty and a one-row all-null frame of the schema: type errors show here
    (they do not depend on values).  Returns the one-row result."""
    try:
        empty = pl.DataFrame(schema=schema)
        empty.lazy().select(expr.alias("o")).collect()
        nulls = pl.DataFrame([pl.Series(c, [None], dtype=t) for c, t in schema.items()])
        return nulls.lazy().select(expr.alias("o")).collect()
    except Exception as e:
        raise UnsafeExpression(
            f"expression {label} does not type-check against the schema: "
            f"{str(e).splitlines()[0]}") from None


def check_predicate(expr: object, schema: SchemaLike) -> pl.Expr:
    """`check_row_local`, and the result must be Boolean (a filter predicate)."""
    e_ = check_row_local(expr, schema)
    sch = polars_schema(schema)
    label = repr(expr) if isinstance(expr, str) else str(expr)
    out = _dry_run(e_, sch, label)
    if out.height != 1 or out.schema["o"] != pl.Boolean:
        raise InvalidParameter(
            f"filter {label} gives {out.schema['o']}, not a Boolean per row")
    return e_
