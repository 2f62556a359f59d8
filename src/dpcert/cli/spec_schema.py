"""``dpcert spec-schema``: print the JSON Schema of a release spec (``docs/spec.schema.json``),
for editors that validate TOML against a JSON Schema."""

from __future__ import annotations

import argparse
import json

from dpcert.cli._parsers import Subparsers

__all__ = ["register", "run"]


def register(subparsers: Subparsers) -> None:
    """Add the ``spec-schema`` sub-command."""
    p = subparsers.add_parser("spec-schema", help="print the JSON Schema of a release spec",
                              description="Print the JSON Schema of a release spec.")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the schema."""
    from dpcert.cli.spec import json_schema

    print(json.dumps(json_schema(), indent=2, sort_keys=True))
    return 0
