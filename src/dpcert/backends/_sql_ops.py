"""What the SQL-engine backends (Spark, DuckDB) share: public keys checked against the admitted
key types, the canonical form of a key for lookups, and the predicate methods over the checked
SQL trees of `dpcert.backends.spark_expr`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from dpcert.backends.admission import AdmittedColumn
from dpcert.backends.base import Key, KeyValue
from dpcert.errors import InvalidParameter, OutOfDomain

if TYPE_CHECKING:
    from dpcert.backends.spark_expr import CheckedPredicate

__all__ = ["SqlTreeOps", "canon_key", "public_keys"]


def canon_key(key: Key) -> tuple[object, ...]:
    """``key`` for lookups: ``-0.0`` as ``0.0`` and every NaN as one value."""
    out: list[object] = []
    for v in key:
        if isinstance(v, float):
            out.append(("nan",) if v != v else v + 0.0)
        else:
            out.append(v)
    return tuple(out)


def public_keys(keys: Sequence[Key], by: list[str], schema: Mapping[str, str]) -> list[Key]:
    """Public keys checked against the key column types (no implicit conversion), distinct.
    A ``TIMESTAMP`` column takes time-zone-aware datetimes only, a ``TIMESTAMP_NTZ`` column
    naive ones only: the other kind has no one meaning (it would depend on a time zone)."""
    ok = {"int": (int,), "float": (int, float), "str": (str,), "bool": (bool,),
          "date": (dt.date,), "datetime": (dt.datetime,), "datetime_ntz": (dt.datetime,)}
    out: list[Key] = []
    for k in keys:
        if len(k) != len(by):
            raise InvalidParameter(f"keys: every public key must have {len(by)} values for {by}")
        row: list[KeyValue] = []
        for v, c in zip(k, by, strict=True):
            t = schema[c]
            if v is not None and (t not in ok or not isinstance(v, ok[t])
                                  or (t in ("int", "float") and isinstance(v, bool))
                                  or (t == "date" and isinstance(v, dt.datetime))
                                  or (isinstance(v, dt.datetime) and t != "date"
                                      and (v.utcoffset() is None) == (t == "datetime"))):
                what = {"datetime": "datetime (TIMESTAMP: time-zone-aware keys only)",
                        "datetime_ntz": "datetime (TIMESTAMP_NTZ: naive keys only)"}.get(t, t)
                raise OutOfDomain(f"keys: public key value of type {type(v).__name__} does not "
                                  f"match column {c!r} of type {what}")
            row.append(float(v) if t == "float" and isinstance(v, int) else v)
        out.append(tuple(row))
    if len({canon_key(k) for k in out}) != len(out):
        raise InvalidParameter(f"keys: the {len(out)} public keys are not distinct")
    return out


def checked_tree(p: object) -> CheckedPredicate:
    """``p`` if `check_predicates` returned it (a `CheckedPredicate`), else
    `InvalidParameter`."""
    from dpcert.backends.spark_expr import CheckedPredicate

    if not isinstance(p, CheckedPredicate):
        raise InvalidParameter(f"filter: a predicate of type {type(p).__name__} was not "
                               "checked by check_predicates")
    return p


class SqlTreeOps:
    """The `FrameOps` methods of a backend whose filters are checked SQL trees."""

    def admit_keys(self, by: Sequence[str], keys: Sequence[Key],
                   native: Mapping[str, object], columns: Sequence[AdmittedColumn]
                   ) -> tuple[Key, ...]:
        """Public keys checked against the admitted key types (no implicit conversion)."""
        kinds = {c.internal: c.type for c in columns}
        return tuple(public_keys(keys, [c.internal for c in columns], kinds))

    def predicate_columns(self, predicates: Sequence[object]) -> tuple[str, ...]:
        """The columns the (checked) predicates read."""
        from dpcert.backends.spark_expr import tree_columns

        return tuple(dict.fromkeys(c for p in predicates
                                   for c in tree_columns(checked_tree(p).tree)))

    def rename_predicates(self, predicates: Sequence[object], mapping: Mapping[str, str],
                          schema: Mapping[str, str]) -> tuple[CheckedPredicate, ...]:
        """The checked predicates reading ``mapping[c]`` for each column ``c``."""
        from dpcert.backends.spark_expr import CheckedPredicate, rename_tree

        return tuple(CheckedPredicate(rename_tree(checked_tree(p).tree, mapping))
                     for p in predicates)
