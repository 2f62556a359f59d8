"""``dpcert verify PROGRAM.dp [--n N] [--json] [--timeout S] [--smt-out DIR]``.

Without ``--n`` the verifier first tries a proof for every input size; ``--json`` prints one JSON
object (``verdict``, ``sizes``, ``claim``, ``witness`` for a refutation, ...).
Exit codes: 0 PROVED, 1 REFUTED, 2 UNKNOWN (3 for errors, from :mod:`dpcert.cli.main`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["register", "run"]

EXIT_CODES = {"PROVED": 0, "REFUTED": 1, "UNKNOWN": 2}


def register(subparsers: Any) -> None:
    """Add the ``verify`` sub-command."""
    p = subparsers.add_parser(
        "verify",
        help="prove a DP program private (apRHL / randomness alignment) or refute it",
        description="Prove a program of dpcert's DP language private (for every input size "
        "when no --n is given, else for sizes up to N), or refute it with a neighbouring "
        "pair, an event and the exact privacy loss. "
        "Exit code 0 PROVED, 1 REFUTED, 2 UNKNOWN.",
    )
    p.add_argument("program", help="path of the .dp program")
    p.add_argument("--n", type=int, default=None,
                   help="bounded mode: prove for sizes 1..N only (default: all sizes first)")
    p.add_argument("--smt-out", default=None, metavar="DIR",
                   help="write the SMT-LIB side conditions of a bounded proof to DIR")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds (default 120)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the verifier and print its report; the exit code encodes the verdict."""
    from dpcert.verify import verify

    result = verify(args.program, n=args.n, smt_out=args.smt_out, timeout=args.timeout)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        print(result)
    return EXIT_CODES[result.verdict]
