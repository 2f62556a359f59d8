"""Entry point of the ``dpcert`` command.

Each sub-command lives in its own module of `dpcert.cli` exposing
``register(subparsers) -> None``; the module adds its parser and sets ``func`` (a callable taking
the parsed arguments and returning the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from dpcert.cli.exits import EPILOG, USAGE, error_json, exit_code
from dpcert.errors import DPCertError

__all__ = ["build_parser", "main"]

#: Sub-command modules, in the order they appear in ``dpcert --help``.
SUBCOMMANDS = ("example", "release", "sql", "spec_schema", "budget", "certificate", "audit",
               "verify", "bench")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available sub-command registered."""
    from dpcert import __version__

    parser = argparse.ArgumentParser(
        prog="dpcert",
        description="Differential privacy you can trust and check.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"dpcert {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            mod = importlib.import_module(f"dpcert.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"dpcert.cli.{name}":
                continue  # this sub-command is not part of this build
            raise
        mod.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return USAGE
    try:
        code = func(args)
    except DPCertError as e:
        code = exit_code(e)
        if getattr(args, "json", False):
            print(error_json(e, code))
        print(f"dpcert: error: {type(e).__name__}: {e}", file=sys.stderr)
        return code
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
