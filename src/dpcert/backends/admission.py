"""The closed set of internal column types and the admission rule of every backend.

Before anything is charged, each column a plan reads is *admitted*: given an internal positional
name (`internal_name`: ``c0``, ``c1``, ...) and mapped into one of a few internal types that
every backend supports end to end.  The admitted frame holds those columns only, so no user name
ever meets an internal one (the backends' scratch columns all start with ``_`` or ``#``), and
code after the charge sees no dtype outside the closed set below.

==================  ==================================  ==========================================
internal type       Polars dtype in the admitted frame  admitted from (Polars; Spark alike)
==================  ==================================  ==========================================
``int``             Int64                               Int8-64, UInt8-32 (Spark tinyint-bigint)
``float``           Float64 (one NaN, no −0.0)          Float32/64; for values also every integer,
                                                        Decimal, Int128/UInt128/UInt64 and Null
``str``             String                              String, Categorical, Enum (Spark string,
                                                        char, varchar)
``bool``            Boolean                             Boolean
``date``            Date                                Date
``datetime``        Datetime(its unit, "UTC")           Datetime with a time zone (converted to
                                                        UTC: the same instants)
``datetime_ntz``    Datetime(its unit)                  naive Datetime (Spark timestamp_ntz)
==================  ==================================  ==========================================

Roles: a privacy **unit**, a group **key** and a **filter** column may be of any internal type
(every cast there is injective, so units stay units: a unit added to the data is a unit added to
the admitted frame); a **value** (sum, mean, variance, quantile) is always ``float`` (the value
rule of `dpcert.backends.base` works on doubles).  Everything else -- Time, Duration, Binary,
Decimal, 128-bit and UInt64 keys or units, List, Array, Struct, Object, Null keys, numeric values
of text or boolean columns -- is refused with `InadmissibleColumn` naming
the column, its type and the nearest cast that would admit it.

Examples
--------
>>> internal_name(0), internal_name(12)
('c0', 'c12')
>>> print(refuse("when", "Duration", "unit", "to Int64"))  # doctest: +NORMALIZE_WHITESPACE
when: column 'when' has type Duration, which dpcert does not admit as a privacy unit; cast it
first (to Int64), see docs/engine.md#admitted-types
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dpcert.errors import InadmissibleColumn

__all__ = ["ADMITTED_TYPES", "ROLES", "AdmittedColumn", "AdmittedType", "Role", "internal_name",
           "refuse"]

AdmittedType = Literal["int", "float", "str", "bool", "date", "datetime", "datetime_ntz"]
Role = Literal["unit", "key", "value", "filter"]

#: The closed set of internal types.
ADMITTED_TYPES: tuple[AdmittedType, ...] = ("int", "float", "str", "bool", "date", "datetime",
                                            "datetime_ntz")
#: The roles a column can play in a plan, in the order their columns are numbered.
ROLES: tuple[Role, ...] = ("unit", "key", "value", "filter")

_ROLE_TEXT = {"unit": "a privacy unit", "key": "a group key", "value": "a value column",
              "filter": "a filter column"}


def internal_name(i: int) -> str:
    """The ``i``-th internal column name (no backend scratch column looks like it)."""
    return f"c{i}"


@dataclass(frozen=True)
class AdmittedColumn:
    """One column of an admitted frame: the user's name, its internal name and type, the source
    dtype as the backend printed it, and the roles it plays."""

    user: str
    internal: str
    type: AdmittedType
    source: str
    roles: tuple[Role, ...]


def refuse(column: str, dtype: str, role: Role, cast: str) -> InadmissibleColumn:
    """The error for a column of type ``dtype`` that cannot play ``role``; ``cast`` names the
    nearest cast that would admit it.  (The column name is the user's: it is schema, not data.)"""
    return InadmissibleColumn(
        f"{column}: column {column!r} has type {dtype}, which dpcert does not admit as "
        f"{_ROLE_TEXT[role]}; cast it first ({cast}), see docs/engine.md#admitted-types")
