"""``dpcert sql "SELECT ..." --privacy-unit COL [curator flags]``: one SQL query released as
``dpcert release`` releases a spec with one ``sql`` query (same checks, charge, outputs and
certificate; ``docs/guide/sql.md``).

Examples
--------
>>> print(spec_text("SELECT COUNT(*) FROM data", ("pid", None), name="q", keys=None,
...                 bounds=["x=0:10"]))
[data]
privacy_unit = "pid"
<BLANKLINE>
[[query]]
name = "q"
sql = "SELECT COUNT(*) FROM data"
bounds = { "x" = [0.0, 10.0] }
<BLANKLINE>
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

from dpcert.cli._parsers import Subparsers
from dpcert.cli.spec import SpecError

__all__ = ["register", "spec_text"]


def _bound(item: str) -> tuple[str, float, float]:
    col, sep, rng = item.rpartition("=")
    lo, sep2, hi = rng.partition(":")
    try:
        if not (sep and sep2 and col):
            raise ValueError
        return col, float(lo), float(hi)
    except ValueError:
        raise SpecError(f"--bounds={item!r} must be COLUMN=LOWER:UPPER") from None


def spec_text(sql: str, data: tuple[str | None, str | None], *, name: str, keys: str | None,
              bounds: list[str] | None) -> str:
    """The release spec of one SQL query (TOML; JSON strings and arrays are valid TOML);
    ``data``: the privacy unit and the metadata file (either may be ``None``)."""
    unit, metadata = data
    lines = ["[data]", f"privacy_unit = {json.dumps(unit) if unit else 'false'}"]
    if metadata is not None:
        lines.append(f"metadata = {json.dumps(metadata)}")
    lines += ["", "[[query]]", f"name = {json.dumps(name)}", f"sql = {json.dumps(sql)}"]
    if keys is not None:
        try:
            parsed = keys if keys == "private" else json.loads(keys)
        except ValueError:
            raise SpecError(f"--keys={keys!r} must be a JSON list or 'private'") from None
        lines.append(f"keys = {json.dumps(parsed)}")
    if bounds:
        items = [_bound(b) for b in bounds]
        inner = ", ".join(f"{json.dumps(c)} = [{lo!r}, {hi!r}]" for c, lo, hi in items)
        lines.append(f"bounds = {{ {inner} }}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    """Write the one-query spec to a scratch file and release it as ``dpcert release``."""
    from dpcert.cli.release import run as release

    meta = None
    if args.metadata is not None:
        from dpcert.frame.metadata import load_metadata

        meta = str(Path(args.metadata).resolve())
        if args.privacy_unit is None:
            args.privacy_unit = load_metadata(meta).unit or "none"
    if args.privacy_unit is None:
        raise SpecError("dpcert sql needs --privacy-unit COL (or 'none'), or --metadata FILE "
                        "that names it")
    unit = None if args.privacy_unit == "none" else args.privacy_unit
    text = spec_text(args.sql, (unit, meta), name=args.name, keys=args.keys,
                     bounds=args.bounds)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sql-query.toml"
        path.write_text(text, encoding="utf-8")
        args.spec = str(path)
        try:
            return release(args)
        except SpecError as e:  # the scratch spec's lines mean nothing to the user: drop them
            where = re.compile(rf"{re.escape(str(path))}:\d+:? ?(?:\((query '[^']*')\))?")
            raise SpecError(where.sub(lambda m: m.group(1) or "", str(e))) from None


def register(sub: Subparsers) -> None:
    """Add the ``sql`` sub-command."""
    from dpcert.cli.curator import add_curator_flags
    from dpcert.cli.exits import EPILOG
    from dpcert.cli.release import add_quiet_flag

    p = sub.add_parser(
        "sql", help="DP release of one SQL query on the curator's table",
        description="One SQL SELECT over the table `data` (docs/guide/sql.md), released as "
                    "`dpcert release` releases a spec with that one query.", epilog=EPILOG)
    p.add_argument("sql", help="the query, e.g. \"SELECT region, COUNT(*) FROM data GROUP BY "
                               "region\"")
    p.add_argument("--privacy-unit",
                   help="column identifying a person, or 'none' when every row is one "
                        "(default: the metadata's)")
    p.add_argument("--metadata", metavar="FILE",
                   help="table metadata (.toml/.yaml): types, bounds, public key sets, max_ids")
    p.add_argument("--keys", help="public keys of the GROUP BY as a JSON list, or 'private' "
                                  "(default)")
    p.add_argument("--bounds", action="append", metavar="COL=LO:HI",
                   help="bounds of a column for aggregates without contribution bounds")
    p.add_argument("--name", default="query", help="output name (default: query)")
    add_curator_flags(p)
    p.add_argument("--dry-run", action="store_true",
                   help="print the budget, accuracy and defaults; read only the schema")
    p.add_argument("--alpha", type=float, default=None,
                   help="1 - confidence level of the intervals (default 0.05)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_quiet_flag(p)
    p.set_defaults(func=run)
