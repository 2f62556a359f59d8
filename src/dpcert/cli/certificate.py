"""``dpcert certificate``: re-check a compiled release certificate.

::

    dpcert certificate check FILE

re-compiles the certificate's plan under its budget (``dpcert.frame.certify``) and confirms the
charged amount ``m.map(1)`` and every recorded step (constructor, ``d_in``, ``d_out``, proof
note).  Exit code 0 when everything matches, 1 otherwise, 2 for a file that is not a
certificate; ``--json`` prints one JSON object.
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
    from dpcert.cli.exits import EPILOG

    p = subparsers.add_parser("certificate", help="re-check release certificates",
                              description="Re-check a compiled release certificate.",
                              epilog=EPILOG)
    sub = p.add_subparsers(dest="certificate_command", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="re-compile the plan and confirm the charged amount",
                           epilog=EPILOG)
    check.add_argument("file", help="certificate JSON (a release's certificate)")
    check.add_argument("--json", action="store_true", help="print one JSON object")
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
    if args.json:
        print(json.dumps({"ok": bool(res.ok), "status": status, "exit_code": 0 if res.ok else 1,
                          "charged": budget.describe(res.charged), "budget": repr(budget),
                          "d_in": cert.get("d_in", "1 unit"),
                          "steps": len(cert.get("steps", [])),
                          "messages": [str(m) for m in res.messages]}, ensure_ascii=False))
        return 0 if res.ok else 1
    print(f"{status}: charged {budget.describe(res.charged)} at {cert.get('d_in', '1 unit')} "
          f"(budget {budget!r}); {len(cert.get('steps', []))} steps re-derived")
    for m in res.messages:
        print(f"  {m}")
    return 0 if res.ok else 1
