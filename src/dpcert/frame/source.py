"""Identify a data source without reading its rows: its resolved location and a fingerprint of
its schema, for the curator's binding of a source to a ledger dataset
([`dpcert.accounting.binding`][dpcert.accounting.binding]).

The fingerprint hashes the column names and types in file order, as dpcert's reader
(`dpcert.frame.io.to_lazy`) reads them with the curator's declared ``types``: the same
file read the same way has the same fingerprint; a renamed, added, dropped or retyped column
changes it.  No value of any row enters it.

Examples
--------
>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> path = os.path.join(d, "t.csv")
>>> _ = open(path, "w").write("pid,age\\n1,30\\n2,41\\n")
>>> fp = schema_fingerprint(path)
>>> fp.startswith("sha256:"), fp == schema_fingerprint(path)
(True, True)
>>> fp == schema_fingerprint(path, {"age": "float"})  # read another way: another schema
False
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpcert.errors import InvalidParameter

if TYPE_CHECKING:
    from dpcert.accounting.ledger import Ledger
    from dpcert.frame.aliases import EngineFrame, FrameLike

__all__ = ["TYPE_NAMES", "check_bound_source", "resolve_source", "schema_fingerprint"]

#: Column types a curator may declare for reading a CSV file; cells that do not parse as their
#: type become null (:mod:`dpcert.frame.io`).
TYPE_NAMES = ("bool", "date", "float", "int", "str")


def resolve_source(path: str | os.PathLike[str]) -> str:
    """The absolute real path of a ``.csv`` or ``.parquet`` file (symbolic links resolved);
    refuses a path that does not name an existing file of those kinds."""
    real = Path(os.path.realpath(path))
    if not real.is_file():
        raise InvalidParameter(f"data={str(path)!r}: no such file ({str(real)!r})")
    if real.suffix.lower() not in (".csv", ".parquet", ".pq"):
        raise InvalidParameter(f"data={str(path)!r}: expected a .csv or .parquet file")
    return str(real)


def polars_types(types: Mapping[str, str]) -> dict[str, object]:
    """Declared CSV column types (names of `TYPE_NAMES`) as Polars dtypes."""
    bad = {k: v for k, v in types.items() if v not in TYPE_NAMES}
    if bad:
        raise InvalidParameter(f"types={bad!r}: each type must be one of {list(TYPE_NAMES)}")
    from dpcert.backends.polars_expr import polars_schema

    return dict(polars_schema(dict(types)))


def schema_fingerprint(path: str | os.PathLike[str],
                       types: Mapping[str, str] | None = None) -> str:
    """``sha256:`` hash of the source's column names and types as dpcert reads them (reads the
    schema only: a Parquet footer, or the first rows of a CSV file to infer its types)."""
    from dpcert.frame.io import to_lazy

    schema = polars_types(types) if types else None
    return _fingerprint(to_lazy(resolve_source(path), schema), str(path))


def _fingerprint(lf: Any, where: str) -> str:
    try:
        cols = [[name, str(dtype)] for name, dtype in lf.collect_schema().items()]
    except Exception as e:
        raise InvalidParameter(f"data={where!r}: its schema cannot be read: "
                               f"{type(e).__name__}") from None
    text = json.dumps(cols, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_bound_source(ledger: Ledger, dataset: str, data: FrameLike, lf: EngineFrame,
                       privacy_unit: str | None) -> None:
    """A session on a ledger dataset the curator bound to a source (``dpcert budget init
    --data``) must read that source: a ``.csv``/``.parquet`` path must resolve to the bound
    location and read to the bound schema fingerprint (as the session reads it), and the
    privacy unit must be the bound one.  A frame handed over directly has no location: the
    curator who passes it vouches for it.  Raises `BindingMismatch`
    before anything is charged."""
    from dpcert.accounting.binding import binding_of, check_binding
    from dpcert.errors import BindingMismatch

    binding = binding_of(ledger, dataset)
    if binding is None or not isinstance(data, (str, os.PathLike)):
        return
    check_binding(binding, resolve_source(data), _fingerprint(lf, str(data)), dataset)
    if binding.privacy_unit is not None and privacy_unit != binding.privacy_unit:
        raise BindingMismatch(
            f"privacy_unit={privacy_unit!r}: ledger dataset {dataset!r} protects "
            f"privacy_unit={binding.privacy_unit!r} (bound by the curator); nothing was charged")
