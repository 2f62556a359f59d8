"""Which Polars predicates a backend accepts: the engine's allow-list,
`dpcert.backends.polars_expr.check_row_local` (row-local, infallible expressions; SQL
strings parsed with ``pl.sql_expr`` and walked the same way).  The Spark backend runs SQL strings
through it too, so a string is accepted by both engines or by neither.

Examples
--------
>>> check_polars_predicate("x > 3 AND y IS NULL", {"x": "int", "y": "str"}) is not None
True
>>> check_polars_predicate("x > (SELECT 1)", {"x": "int"})  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
dpcert.errors.UnsafeExpression: filter 'x > (SELECT 1)' is not allowed
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from dpcert.backends.polars_expr import check_row_local

__all__ = ["check_polars_predicate"]


def check_polars_predicate(p: object, schema: Mapping[str, str]) -> pl.Expr:
    """The predicate as an allow-listed ``pl.Expr`` or `UnsafeExpression`."""
    return check_row_local(p, schema)
