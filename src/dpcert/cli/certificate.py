"""``dpcert certificate``: re-check release certificates.

::

    dpcert certificate check FILE [--ledger LEDGER]

re-compiles each certificate's plan under its budget (``dpcert.frame.certify``), confirms the
charged amount ``m.map(1)`` and every recorded step (constructor, ``d_in``, ``d_out``, proof
note), re-checks every filter with the engine's allow-list, and re-derives every displayed
field of a release's certificate (measurements and their scales, totals, contribution bounds,
privacy unit, session, ledger fields, the charge body's hash).  ``FILE`` may be one release's
certificate or a spec's combined ``certificate.json`` (every query's certificate is checked).

Without ``--ledger`` this proves the certificate's internal consistency only (anyone can write
a consistent certificate); with ``--ledger`` the charge is confirmed in the ledger: the hash of
the certificate's charge body at the position it states, the charged event, the dataset's
budget, the remaining budget and chain head right after the charge, the whole chain verified.

Exit codes: 0 every check passed; 1 a check failed; 2 the file (or the ledger path) is not
valid input (not JSON, wrong shape or types, out-of-range numbers, too deep, missing or unknown
fields).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dpcert.cli._parsers import Subparsers

__all__ = ["register", "run"]

#: What a check without the ledger proves (printed with its result).
CONSISTENCY_ONLY = ("note: checked without --ledger: this proves the certificate's internal "
                    "consistency only, not that its charge happened; pass --ledger LEDGER to "
                    "confirm the charge")


def register(subparsers: Subparsers) -> None:
    """Add the ``certificate`` sub-command to the ``dpcert`` parser."""
    from dpcert.cli.exits import EPILOG

    p = subparsers.add_parser("certificate", help="re-check release certificates",
                              description="Re-check release certificates.", epilog=EPILOG)
    sub = p.add_subparsers(dest="certificate_command", metavar="ACTION", required=True)
    check = sub.add_parser(
        "check", help="re-derive a certificate and confirm its charge",
        description="Re-derive every field of a certificate from its recompiled plan; with "
                    "--ledger, confirm its charge in the ledger's chain. Exit codes: 0 OK, "
                    "1 check failed, 2 invalid input.", epilog=EPILOG)
    check.add_argument("file", help="certificate JSON (a release's, or a spec's combined "
                                    "certificate.json)")
    check.add_argument("--ledger", help="the ledger that charged the release (SQLite)")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``dpcert certificate check``; 0 OK, 1 check failed, 2 invalid input."""
    from dpcert.frame.certshape import CertificateError, load_certificates

    path = Path(args.file)
    try:
        certs = load_certificates(path.read_bytes())
        if args.ledger is not None and not Path(args.ledger).is_file():
            raise CertificateError(f"--ledger={args.ledger!r} is not a ledger file")
        results = [(name, *_check_one(cert, args.ledger)) for name, cert in certs.items()]
    except OSError as e:
        return _fail(args, f"file={str(path)!r} cannot be read: {type(e).__name__}", "OSError")
    except CertificateError as e:
        return _fail(args, f"{type(e).__name__}: file={str(path)!r}: {e}", type(e).__name__)
    ok = all(good for _, good, _, _ in results)
    if getattr(args, "json", False):
        print(json.dumps({
            "ok": ok, "status": "OK" if ok else "MISMATCH", "exit_code": 0 if ok else 1,
            "ledger_confirmed": args.ledger is not None,
            "certificates": [{"name": name, "ok": good, "summary": line, "messages": msgs}
                             for name, good, line, msgs in results],
            "note": None if args.ledger is not None else CONSISTENCY_ONLY}, ensure_ascii=False))
        return 0 if ok else 1
    for name, _, line, msgs in results:
        print(f"{name}: {line}" if name else line)
        for m in msgs:
            print(f"  {m}")
    if args.ledger is None:
        print(CONSISTENCY_ONLY)
    return 0 if ok else 1


def _fail(args: argparse.Namespace, text: str, kind: str = "InvalidParameter") -> int:
    """Invalid input: exit 2, with the reason (as JSON under ``--json``)."""
    if getattr(args, "json", False):
        print(json.dumps({"ok": False, "exit_code": 2,
                          "error": {"type": kind, "message": text}}, ensure_ascii=False))
    else:
        print(f"dpcert: error: {text}", file=sys.stderr)
    return 2


def _check_one(cert: dict[str, Any], ledger: str | None) -> tuple[bool, str, list[str]]:
    from dpcert.frame.certify import _recompile, check_certificate
    from dpcert.frame.chargecheck import charge_mismatches

    res = check_certificate(cert)
    msgs = list(res.messages)
    _, budget, m = _recompile(cert)
    if ledger is not None:
        if "charge" not in cert:
            msgs.append("charge: a compiled certificate records no charge to confirm")
        else:
            msgs += charge_mismatches(cert, ledger, m, budget)
    good = not msgs
    where = " and confirmed in the ledger" if ledger is not None and good else ""
    line = (f"{'OK' if good else 'MISMATCH'}: charged {budget.describe(res.charged)} at "
            f"{cert.get('d_in', '1 unit')} (budget {budget!r}); {len(cert.get('steps', []))} "
            f"steps re-derived{where}")
    return good, line, msgs
