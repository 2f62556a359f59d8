"""The analyst's release spec: a strict schema of queries, validated before any data is read.

A spec holds the privacy unit and the queries, nothing else: the data source, the ledger, the
dataset, its total budget and the output directory are the curator's
(``docs/threat_model.md``).  The models below (pydantic, ``extra="forbid"``, strict types)
refuse an unknown or misspelled key with its line and the nearest allowed key, a key that belongs
to the curator with where the curator sets it, and a value of the wrong type.
``dpcert spec-schema`` prints the JSON Schema generated from them (``docs/spec.schema.json``).

Examples
--------
>>> spec = parse_spec('[data]\\nprivacy_unit = "pid"\\n[[query]]\\nbudget = { epsilon = 1 }\\n'
...                   'aggregates = [{ kind = "count" }]\\n', "s.toml")
>>> spec.query[0].max_groups, applied_defaults(spec)[0]
(1, 'query 1: name = "query1"')
>>> parse_spec('[data]\\nprivacy_units = "pid"\\n[[query]]\\nbudget = { epsilon = 1 }\\n'
...            'aggregates = [{ kind = "count" }]\\n', "s.toml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dpcert.cli.spec.SpecError: s.toml:2: [data]: unknown key 'privacy_units' (did you mean ...
"""

from __future__ import annotations

import difflib
import re
import tomllib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError
from pydantic_core import ErrorDetails

from dpcert.errors import InvalidParameter

__all__ = ["CuratorConfig", "ReleaseSpec", "SpecError", "applied_defaults", "json_schema",
           "load_spec", "parse_spec", "query_label", "query_span"]


class SpecError(InvalidParameter):
    """A problem in a release spec, with its line number."""


#: Query names become file names: letters, digits, ``_`` and ``-``, not starting with a digit
#: or ``-``, at most 64 characters (no ``/``, ``..`` or drive letters).
NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")

_STRICT = ConfigDict(extra="forbid", strict=True)
Number = StrictInt | float
Key = str | StrictInt | float | StrictBool

#: Keys the curator sets (``docs/threat_model.md``): where the curator sets each one.
CURATOR_KEYS = {
    "budget": "the total budget is the curator's (`dpcert budget init LEDGER DATASET --data "
              "SOURCE --epsilon ...`, or --budget-epsilon/--budget-delta/--budget-rho with "
              "--no-ledger); a query's own budget goes in its [[query]]",
    "ledger": "the ledger is the curator's: `dpcert release SPEC --ledger LEDGER --dataset "
              "DATASET`",
    "dataset": "the ledger dataset is the curator's: --dataset DATASET",
    "create": "datasets are created by the curator: `dpcert budget init`",
    "output": "the output directory is the curator's: --out DIR",
    "dir": "the output directory is the curator's: --out DIR",
    "path": "the data source is the curator's: bound to the ledger dataset by `dpcert budget "
            "init ... --data SOURCE` (or --data with --no-ledger)",
    "engine": "the engine is the curator's: --engine",
    "master": "the Spark master is the curator's: --spark-master",
    "remote": "the Spark Connect server is the curator's: --spark-remote",
    "types": "how the source is read is the curator's: `dpcert budget init ... --type COL=TYPE`",
}


class DataSpec(BaseModel):
    """``[data]``: who the privacy unit is (the source itself is the curator's)."""

    model_config = _STRICT
    privacy_unit: str | Literal[False] = Field(
        description="column identifying a person (a person may have many rows), or false when "
                    "every row is a different person")
    metadata: str | None = Field(
        None, description="table metadata file (types, bounds, public key sets, max_ids; "
                          "docs/guide/sql.md), relative to the spec")


class BudgetSpec(BaseModel):
    """A query's budget: ``epsilon`` (with ``delta``: approximate DP) or ``rho`` (zCDP)."""

    model_config = _STRICT
    epsilon: float | None = None
    delta: float | None = None
    rho: float | None = None


class AggregateSpec(BaseModel):
    """One aggregate of a query."""

    model_config = _STRICT
    kind: Literal["count", "count_distinct", "sum", "mean", "variance", "quantile"]
    column: str | None = Field(None, description="value column (sum, mean, variance, quantile)")
    bounds: Annotated[list[Number], Field(min_length=2, max_length=2)] | None = Field(
        None, description="[lower, upper]: every value is clamped to it; omitted: chosen "
                          "privately from the query's auto_share of its budget")
    q: float | list[float] | None = Field(None, description="quantile level(s) in [0, 1]")
    alias: str | None = Field(None, description="output column name")
    weight: float | None = Field(None, description="share of the query's budget (default 1)")


class QuerySpec(BaseModel):
    """``[[query]]``: one release."""

    model_config = _STRICT
    name: str | None = Field(None, description="output file name; default query1, query2, ...")
    filter: str | None = Field(None, description="row-local SQL predicate")
    group_by: list[str] | None = Field(None, description="key columns; omitted: one group")
    keys: Literal["private"] | list[Key] | list[list[Key]] | None = Field(
        None, description='public keys, or "private" for DP partition selection')
    max_groups: Annotated[int, Field(ge=1)] | Literal["auto"] = Field(
        1, description='an integer >= 1 (groups a privacy unit may contribute to), or "auto" '
                       "(chosen privately)")
    max_rows_per_group: Annotated[int, Field(ge=1)] | Literal["auto"] = Field(
        1, description='an integer >= 1 (rows a privacy unit may contribute per group), or '
                       '"auto" (chosen privately)')
    auto_share: Annotated[float, Field(gt=0, lt=1)] | None = Field(
        None, description="share of the query's budget spent choosing omitted bounds and "
                          '"auto" contribution bounds (default 0.3)')
    budget: BudgetSpec | None = Field(
        None, description="required, except for a sql query whose OPTIONS give epsilon")
    aggregates: Annotated[list[AggregateSpec], Field(min_length=1)] | None = Field(
        None, description="what to release (required unless sql is given)")
    sql: str | None = Field(
        None, description="a SQL SELECT over the table `data` (docs/guide/sql.md), instead of "
                          "filter, group_by, aggregates, max_groups and max_rows_per_group")
    bounds: dict[str, Annotated[list[Number], Field(min_length=2, max_length=2)]] | None = Field(
        None, description="sql only: {column = [lower, upper]} for aggregates without "
                          "contribution_bounds_per_group")


class ReleaseSpec(BaseModel):
    """A release spec: the privacy unit and the queries, in order."""

    model_config = ConfigDict(extra="forbid", strict=True,
                              json_schema_extra={"$id": "https://dpcert/spec.schema.json"})
    data: DataSpec
    query: Annotated[list[QuerySpec], Field(min_length=1)]


class CuratorConfig(BaseModel):
    """The curator config file of ``dpcert release`` (`dpcert.cli.curator`; every key
    optional, a flag wins over it)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    ledger: str | None = None
    dataset: str | None = None
    out: str | None = None
    data: str | None = None
    no_ledger: bool = False
    budget_epsilon: str | float | None = None
    budget_delta: str | float | None = None
    budget_rho: str | float | None = None
    engine: Literal["polars", "spark", "duckdb"] | None = None
    spark_master: str | None = None
    spark_remote: str | None = None


def json_schema() -> dict[str, object]:
    """The JSON Schema of a release spec (TOML read as JSON), for editors."""
    out: dict[str, object] = {"$schema": "https://json-schema.org/draft/2020-12/schema"}
    out.update(ReleaseSpec.model_json_schema())
    return out


def load_spec(path: Path) -> tuple[ReleaseSpec, str]:
    """Read and validate a spec file; returns the model and the file's text."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError(f"cannot read spec {str(path)!r}: {type(e).__name__}") from None
    return parse_spec(text, str(path)), text


def parse_spec(text: str, where: str) -> ReleaseSpec:
    """Validate the TOML ``text`` of a spec; every problem is named with its line."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{where}: {e}") from None
    try:
        return ReleaseSpec.model_validate(raw)
    except ValidationError as e:
        errors = _merge_alternatives(_drop_misspelled_missing(e.errors()))
        names = _query_names(raw)
        problems = sorted(dict.fromkeys(_describe(err, text, where, names) for err in errors),
                          key=_line_number)
    raise SpecError("\n".join(problems))


def _query_names(raw: Mapping[str, object]) -> list[str | None]:
    """The ``name`` each ``[[query]]`` of the raw TOML gives (``None`` where it gives none or
    not a string), to name a query in an error as the analyst does."""
    queries = raw.get("query")
    if not isinstance(queries, list):
        return []
    return [q.get("name") if isinstance(q, dict) and isinstance(q.get("name"), str) else None
            for q in queries]


def query_label(index: int, names: list[str | None]) -> str:
    """``query 'wages'`` for a named query, ``query 2`` otherwise (``index`` from 0)."""
    name = names[index] if index < len(names) else None
    return f"query {name!r}" if name is not None else f"query {index + 1}"


def query_span(text: str, index: int) -> tuple[int, int]:
    """0-based lines ``[start, end)`` of the ``index``-th ``[[query]]`` table of ``text``: from
    its header to the next header that is not one of its sub-tables (``[query.budget]``,
    ``[[query.aggregates]]``).  ``(0, 0)`` when there is no such table."""
    lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    starts = [i for i, ln in enumerate(lines) if ln == "[[query]]"]
    if index >= len(starts):
        return 0, 0
    start = starts[index]
    for i in range(start + 1, len(lines)):
        if lines[i].startswith("[") and not lines[i].startswith(("[query.", "[[query.")):
            return start, i
    return start, len(lines)


#: Where a validation error points: keys and list indices from the spec's root.
Loc: TypeAlias = tuple[int | str, ...]


def _drop_misspelled_missing(errors: list[ErrorDetails]) -> list[ErrorDetails]:
    """A required key reported missing because it was misspelled is reported once: as the
    unknown key with its "did you mean"."""
    extra = {(tuple(e["loc"][:-1]), str(e["loc"][-1])) for e in errors
             if e["type"] == "extra_forbidden"}

    def misspelled(e: ErrorDetails) -> bool:
        parent, key = tuple(e["loc"][:-1]), str(e["loc"][-1])
        near = [k for p, k in extra if p == parent]
        return e["type"] == "missing" and bool(difflib.get_close_matches(key, near, n=1))

    return [e for e in errors if not misspelled(e)]


def _field_path(loc: Loc) -> Loc:
    """``loc`` cut before the first part that is not a field (a union branch's tag)."""
    model: type[BaseModel] | None = ReleaseSpec
    for i, part in enumerate(loc):
        if isinstance(part, int):
            continue
        if model is None or part not in model.model_fields:
            return loc[:i]
        model = _model_at(loc[: i + 1])
    return loc


def _merge_alternatives(errors: list[ErrorDetails]) -> list[ErrorDetails]:
    """One error per field whose value matched none of its alternatives (a union's branches
    each report their own error): what the field expects, and the value given."""
    out: list[ErrorDetails] = []
    groups: dict[Loc, list[ErrorDetails]] = {}
    for e in errors:
        path = tuple(e["loc"]) if e["type"] == "extra_forbidden" else _field_path(tuple(e["loc"]))
        if path == tuple(e["loc"]):
            out.append(e)
        else:
            groups.setdefault(path, []).append(e)
    for path, errs in groups.items():
        model = _model_at(path[:-1])
        info = model.model_fields.get(str(path[-1])) if model is not None else None
        shallow = min(errs, key=lambda e: len(e["loc"]))
        wanted = sorted({e["msg"].removeprefix("Input should be ") for e in errs
                         if len(e["loc"]) == len(shallow["loc"])})
        expect = (info.description if info is not None and info.description
                  else " or ".join(wanted))
        out.append({"loc": path, "type": "value", "msg": f"expected {expect}",
                    "input": shallow["input"]})
    return out


def _line_number(message: str) -> int:
    m = re.search(r":(\d+): ", message)
    return int(m.group(1)) if m else 0


# -- error messages ---------------------------------------------------------------------------

def _section(loc: Loc, names: list[str | None] | None = None) -> str:
    if not loc:
        return "the spec"
    if loc[0] == "query" and len(loc) > 1 and isinstance(loc[1], int):
        rest = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[2:])
        return query_label(loc[1], names or []) + (f" {rest.lstrip('.')}" if rest else "")
    return f"[{loc[0]}]" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}"
                                   for p in loc[1:])


def _model_at(loc: Loc) -> type[BaseModel] | None:
    """The model class that holds the keys at ``loc`` (list indices skipped)."""
    model: type[BaseModel] = ReleaseSpec
    for part in loc:
        if isinstance(part, int):
            continue
        info = model.model_fields.get(part)
        if info is None:
            return None
        found = [a for a in _flat_args(info.annotation)
                 if isinstance(a, type) and issubclass(a, BaseModel)]
        if not found:
            return None
        model = found[0]
    return model


def _flat_args(t: object) -> list[object]:
    args = typing.get_args(t)
    if not args:
        return [t]
    return [x for a in args for x in _flat_args(a)]


def _line(text: str, key: str, loc: Loc) -> int:
    """1-based line of ``key =`` inside the table of ``loc`` (its ``[[query]]``, searched up to
    the next table only: tomllib keeps no positions), or the table's header line."""
    lines = text.splitlines()
    start, end = 0, len(lines)
    if loc and loc[0] == "query" and len(loc) > 1 and isinstance(loc[1], int):
        start, end = query_span(text, loc[1])
    elif loc:
        head = [i for i, ln in enumerate(lines) if ln.strip().startswith(f"[{loc[0]}]")]
        start = head[0] if head else 0
    pat = re.compile(rf"(^|[\s{{,]){re.escape(str(key))}\s*=")
    for i in range(start, end):
        if pat.search(lines[i].split("#", 1)[0]):
            return i + 1
    return start + 1


def _describe(err: ErrorDetails, text: str, where: str, names: list[str | None]) -> str:
    loc = tuple(err["loc"])
    kind = err["type"]
    if kind == "extra_forbidden":
        key, parent = str(loc[-1]), loc[:-1]
        line = _line(text, key if parent else f"[{key}", parent) if parent else \
            _top_line(text, key)
        if key in CURATOR_KEYS:
            return f"{where}:{line}: {_section(parent, names)}: {key!r} is not for a spec: " \
                   f"{CURATOR_KEYS[key]}; nothing was read or charged"
        model = _model_at(parent)
        allowed = sorted(model.model_fields) if model else []
        near = difflib.get_close_matches(key, allowed, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return (f"{where}:{line}: {_section(parent, names)}: unknown key {key!r}{hint}; allowed: "
                f"{', '.join(allowed)}")
    field = str(loc[-1]) if loc and not isinstance(loc[-1], int) else None
    named = [p for p in loc if not isinstance(p, int)]
    line = _line(text, named[-1], loc) if named and len(named) > 1 else _top_line(
        text, named[0] if named else "")
    if kind == "missing":
        return f"{where}:{line}: {_section(loc[:-1], names)}: {field!r} is required"
    value = err.get("input")
    shown = repr(value) if not isinstance(value, dict) else "a table"
    return f"{where}:{line}: {_section(loc, names)}: {err['msg']} (got {shown[:80]})"


def _top_line(text: str, key: str) -> int:
    """1-based line of the top-level table ``[key]``/``[[key]]``, or of ``key =`` before the
    first table."""
    in_table = False
    for i, ln in enumerate(text.splitlines()):
        s = ln.split("#", 1)[0].strip()
        if s.startswith((f"[{key}]", f"[[{key}]]", f"[{key}.")):
            return i + 1
        in_table = in_table or s.startswith("[")
        if not in_table and re.match(rf"{re.escape(key)}\s*=", s):
            return i + 1
    return 1


# -- the defaults a run applies ---------------------------------------------------------------

def applied_defaults(spec: ReleaseSpec) -> list[str]:
    """Every default the spec leaves to dpcert, as ``where: key = value`` lines."""
    out = []
    for i, q in enumerate(spec.query):
        where = f"query {i + 1}"
        unset = set(QuerySpec.model_fields) - q.model_fields_set
        if "name" in unset:
            out.append(f'{where}: name = "query{i + 1}"')
        if q.sql is not None:
            continue
        if "filter" in unset:
            out.append(f"{where}: filter = none (every row)")
        if "group_by" in unset:
            out.append(f"{where}: group_by = none (one group: the whole table)")
        for key in ("max_groups", "max_rows_per_group"):
            if key in unset and spec.data.privacy_unit is not False:
                out.append(f"{where}: {key} = {getattr(q, key)}")
        auto = any(getattr(q, k) == "auto" for k in ("max_groups", "max_rows_per_group"))
        for j, a in enumerate(q.aggregates or []):
            if a.bounds is None and a.kind in ("sum", "mean", "variance", "quantile"):
                auto = True
                out.append(f"{where}: aggregates[{j}] ({a.kind}).bounds = chosen privately")
            if a.alias is None:
                out.append(f"{where}: aggregates[{j}] ({a.kind}).alias = default name")
            if a.weight is None:
                out.append(f"{where}: aggregates[{j}] ({a.kind}).weight = 1 (an even split)")
        if auto and "auto_share" in unset:
            out.append(f"{where}: auto_share = 0.1 (of the budget, to choose the bounds)")
    return out
