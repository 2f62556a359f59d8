"""``dpcert verify PROGRAM.dp [--n N] [--json] [--timeout S] [--smt-out DIR] [--confirm
[--samples N] [--confidence C] [--seed S]]``.

Without ``--n`` the verifier first tries a proof for every input size; ``--json`` prints one JSON
object (``verdict``, ``sizes``, ``claim``, ``witness`` for a refutation, ``confirmation`` with
``--confirm``: draws, counts, confidence, ``epsilon_lower``, ``confirmed``, ``needed_draws``).
Exit codes: 0 PROVED; 1 REFUTED or UNKNOWN (not proved: ``--json`` says which); 2 for a program
or option that is invalid (`dpcert.cli.exits`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dpcert.cli._parsers import Subparsers

__all__ = ["register", "run"]

EXIT_CODES = {"PROVED": 0, "REFUTED": 1, "UNKNOWN": 1}


def register(subparsers: Subparsers) -> None:
    """Add the ``verify`` sub-command."""
    from dpcert.cli.exits import EPILOG

    p = subparsers.add_parser(
        "verify",
        help="prove a DP program private (apRHL / randomness alignment) or refute it",
        description="Prove a program of dpcert's DP language private (for every input size "
        "when no --n is given, else for sizes up to N), or refute it with a neighbouring "
        "pair, an event and the exact privacy loss. "
        "Exit code 0 PROVED, 1 REFUTED or UNKNOWN (--json says which), 2 invalid input.",
        epilog=EPILOG,
    )
    p.add_argument("program", help="path of the .dp program")
    p.add_argument("--n", type=int, default=None,
                   help="bounded mode: prove for sizes 1..N only (default: all sizes first)")
    p.add_argument("--smt-out", default=None, metavar="DIR",
                   help="write the SMT-LIB side conditions of a bounded proof to DIR")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds (default 120)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--confirm", action="store_true",
                   help="confirm a refutation by running the program with the exact samplers "
                   "and reporting a Clopper-Pearson lower bound on epsilon")
    p.add_argument("--samples", type=int, default=2_000_000,
                   help="draw budget of --confirm: runs of the program on each input "
                   "(default 2000000); the event is chosen to be confirmable within it")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="confidence of the --confirm bound (default 0.95)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed an INSECURE reproducible source for --confirm (tests, demos)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the verifier and print its report; the exit code encodes the verdict."""
    from dpcert.report.console import status
    from dpcert.verify import verify

    if args.confirm:  # validate before any work
        from dpcert.errors import InvalidParameter

        if args.samples < 100:
            raise InvalidParameter(f"--samples={args.samples} must be >= 100")
        if not 0 < args.confidence < 1:
            raise InvalidParameter(f"--confidence={args.confidence} must be in (0, 1)")
    what = "all sizes first" if args.n is None else f"sizes 1..{args.n}"
    with status(f"dpcert verify: {args.program} ({what}, at most {args.timeout:g} s)"):
        result = verify(args.program, n=args.n, smt_out=args.smt_out, timeout=args.timeout)
    conf = None
    if args.confirm and result.witness is not None:
        from dpcert.samplers import InsecureSeededSource
        from dpcert.verify import parse_program
        from dpcert.verify.confirm import confirm

        with open(args.program, encoding="utf-8") as f:
            prog = parse_program(f.read(), name=Path(args.program).stem)
        src = InsecureSeededSource(args.seed) if args.seed is not None else None
        with status(f"dpcert verify: confirming the witness with {args.samples:,} runs per "
                    "input"):
            conf = confirm(prog, result.witness, samples=args.samples,
                           confidence=args.confidence, source=src)
    if args.json:
        out = result.to_json()
        if conf is not None:
            out["confirmation"] = conf.to_json()
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(result)
        if conf is not None:
            print(conf.describe())
        elif args.confirm:
            print("(--confirm: nothing to confirm, the verdict is not REFUTED)")
    return EXIT_CODES[result.verdict]
