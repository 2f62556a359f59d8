"""Table metadata: a small file that says what is public about a table (after SmartNoise SQL's
metadata): its name, the privacy unit, each column's type, value bounds and public key set, and
how many groups (``max_ids``) and rows per group a unit may contribute.

TOML (or YAML, with PyYAML installed)::

    name = "people"            # the table's name in SQL (default "data")
    privacy_unit = "pid"       # or false: every row is a different person
    max_ids = 2                # groups a unit may contribute to (SmartNoise's max_ids)
    max_rows_per_group = 1     # rows a unit may contribute to one group

    [columns.income]
    type = "float"             # int, float, str, bool, date, datetime
    lower = 0
    upper = 200000

    [columns.region]
    type = "str"
    keys = ["n", "s", "e", "w"]  # the public key set of GROUP BY region

Read by `load_metadata` through strict pydantic models (a misspelled key, a wrong type, a
bound on a text column, repeated keys: `InvalidParameter` naming it), and
admitted against the data's schema by `TableMetadata.check_schema` when the session opens,
before anything can be charged.  A session uses it as defaults: the privacy unit and table name,
the bounds of aggregates that give none, the public keys of a ``GROUP BY`` whose columns all have
a key set, and ``max_ids`` / ``max_rows_per_group`` for SQL queries whose ``OPTIONS`` give none.
Bounds may be omitted: an aggregate that needs them then says so, naming the column.

Examples
--------
>>> meta = parse_metadata({"privacy_unit": "pid", "max_ids": 2,
...                        "columns": {"x": {"type": "float", "lower": 0, "upper": 10},
...                                    "g": {"type": "str", "keys": ["a", "b"]}}})
>>> meta.bounds(), meta.keys_for(["g"])
({'x': (0, 10)}, [('a',), ('b',)])
>>> parse_metadata({"privacy_unit": "pid", "colums": {}})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.errors.InvalidParameter: metadata: colums: Extra inputs are not permitted...
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from dpcert.errors import InvalidParameter

__all__ = ["ColumnMetadata", "TableMetadata", "load_metadata", "parse_metadata"]

_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)
ColumnType = Literal["int", "float", "str", "bool", "date", "datetime"]
Key = int | float | str | bool | dt.date | dt.datetime
#: The logical types of the data each declared type accepts.
_ACCEPTS: dict[str, tuple[str, ...]] = {
    "int": ("int",), "float": ("float", "int"), "str": ("str",), "bool": ("bool",),
    "date": ("date",), "datetime": ("datetime", "datetime_ntz")}
_KEY_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,), "float": (int, float), "str": (str,), "bool": (bool,), "date": (dt.date,),
    "datetime": (dt.datetime,)}


class ColumnMetadata(BaseModel):
    """One column: its type, optional value bounds and optional public key set."""

    model_config = _STRICT
    type: ColumnType
    lower: int | float | None = Field(None, description="smallest value (numeric columns)")
    upper: int | float | None = Field(None, description="largest value (numeric columns)")
    keys: list[Key | None] | None = Field(None, description="the column's public key set")

    @model_validator(mode="after")
    def _consistent(self) -> ColumnMetadata:
        if (self.lower is None) != (self.upper is None):
            raise ValueError("give both lower and upper, or neither")
        if self.lower is not None:
            if self.type not in ("int", "float"):
                raise ValueError(f"lower/upper need a numeric column, not type={self.type!r}")
            assert self.upper is not None
            if not self.lower <= self.upper:
                raise ValueError(f"lower={self.lower} > upper={self.upper}")
        if self.keys is not None:
            ok = _KEY_TYPES[self.type]
            for k in self.keys:
                bad = k is not None and (not isinstance(k, ok) or (
                    isinstance(k, bool) and self.type != "bool") or (
                    self.type == "date" and isinstance(k, dt.datetime)))
                if bad:
                    raise ValueError(f"key {k!r} is not of type {self.type!r}")
            if len({repr(k) for k in self.keys}) != len(self.keys):
                raise ValueError(f"keys {self.keys!r} repeat a key")
        return self


class TableMetadata(BaseModel):
    """A table's metadata (module docstring)."""

    model_config = _STRICT
    name: str = Field("data", min_length=1, description="the table's name in SQL")
    privacy_unit: str | Literal[False] = Field(
        description="column identifying a person, or false when every row is one")
    max_ids: Annotated[int, Field(ge=1)] = Field(
        1, description="groups a unit may contribute to (SmartNoise's max_ids)")
    max_rows_per_group: Annotated[int, Field(ge=1)] | None = Field(
        None, description="rows a unit may contribute to one group (default 1)")
    columns: dict[str, ColumnMetadata] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unit_is_not_a_value(self) -> TableMetadata:
        col = self.columns.get(self.privacy_unit) if self.privacy_unit else None
        if col is not None and (col.lower is not None or col.keys is not None):
            raise ValueError(f"the privacy unit {self.privacy_unit!r} cannot have bounds or "
                             "public keys")
        return self

    @property
    def unit(self) -> str | None:
        """The privacy unit column (``None``: every row is a different person)."""
        return self.privacy_unit or None

    def bounds(self) -> dict[str, tuple[int | float, int | float]]:
        """``{column: (lower, upper)}`` of the columns with bounds."""
        return {c: (m.lower, m.upper) for c, m in self.columns.items()
                if m.lower is not None and m.upper is not None}

    def keys_for(self, by: Sequence[str]) -> list[tuple[Key | None, ...]] | None:
        """The public keys of a group-by on ``by``: the cross product of the columns' key sets,
        or ``None`` when a column has none (private keys)."""
        sets = [self.columns[c].keys if c in self.columns else None for c in by]
        if not by or any(s is None for s in sets):
            return None
        return [tuple(k) for k in itertools.product(*[s for s in sets if s is not None])]

    def check_schema(self, schema: Mapping[str, str]) -> None:
        """Admit the metadata against the data's schema (column → logical type): every column
        it describes exists and has a type the declared one accepts (reads no row)."""
        if self.unit is not None and self.unit not in schema:
            raise InvalidParameter(f"metadata: privacy_unit={self.unit!r} is not a column; the "
                                   f"data has {sorted(schema)}")
        for c, m in self.columns.items():
            if c not in schema:
                raise InvalidParameter(f"metadata: column {c!r} is not in the data; it has "
                                       f"{sorted(schema)}")
            if schema[c] not in _ACCEPTS[m.type]:
                raise InvalidParameter(f"metadata: column {c!r} is declared type={m.type!r} but "
                                       f"the data's column is {schema[c]}")


def parse_metadata(raw: object, where: str = "metadata") -> TableMetadata:
    """The `TableMetadata` of a parsed mapping (errors name the key and the file)."""
    try:
        return TableMetadata.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise InvalidParameter(f"{where}: {loc}: {first['msg']}") from None


def load_metadata(source: str | os.PathLike[str] | TableMetadata) -> TableMetadata:
    """Read a metadata file (``.toml``, or ``.yaml``/``.yml``), or pass a
    `TableMetadata` through."""
    if isinstance(source, TableMetadata):
        return source
    if not isinstance(source, (str, os.PathLike)):
        raise InvalidParameter(f"metadata={source!r} must be a path or a TableMetadata")
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InvalidParameter(f"metadata={str(path)!r} cannot be read "
                               f"({type(e).__name__})") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml  # type: ignore[import-untyped]

            raw = yaml.safe_load(text)
        else:
            import tomllib

            raw = tomllib.loads(text)
    except ImportError:
        raise InvalidParameter("YAML metadata needs PyYAML (pip install pyyaml); or write it "
                               "as TOML") from None
    except Exception as e:
        raise InvalidParameter(f"metadata={str(path)!r} is not valid "
                               f"{'YAML' if path.suffix in ('.yaml', '.yml') else 'TOML'}: "
                               f"{str(e)[:200]}") from None
    return parse_metadata(raw, str(path))
