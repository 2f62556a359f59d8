"""``dpcert certificate``: re-check a compiled release certificate.

::

    dpcert certificate check FILE

re-compiles the certificate's plan under its budget (``dpcert.frame.certify``) and confirms the
charged amount ``m.map(1)`` and every recorded step (constructor, ``d_in``, ``d_out``, proof
note).  Exit code 0 when everything matches, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from dpcert.errors import InvalidParameter

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``certificate`` sub-command to the ``dpcert`` parser."""
    p = subparsers.add_parser("certificate", help="re-check release certificates",
                              description="Re-check a compiled release certificate.")
    sub = p.add_subparsers(dest="certificate_command", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="re-compile the plan and confirm the charged amount")
    check.add_argument("file", help="certificate JSON (a release's certificate)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``dpcert certificate check``."""
    from dpcert.frame.certify import budget_from_json, check_certificate

    path = Path(args.file)
    try:
        cert = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InvalidParameter(f"file={str(path)!r} is not a readable JSON certificate: "
                               f"{type(e).__name__}") from None
    if isinstance(cert, dict) and "compiled" in cert and "format" not in cert:
        cert = cert["compiled"]
    if not isinstance(cert, dict):
        raise InvalidParameter(f"file={str(path)!r} does not hold a certificate object")
    res = check_certificate(cert)
    budget = budget_from_json(cert["budget"])
    status = "OK" if res.ok else "MISMATCH"
    print(f"{status}: charged {budget.describe(res.charged)} at {cert.get('d_in', '1 unit')} "
          f"(budget {budget!r}); {len(cert.get('steps', []))} steps re-derived")
    for m in res.messages:
        print(f"  {m}")
    return 0 if res.ok else 1
