"""The exit codes of every ``dpcert`` command, and the one-object JSON error of ``--json``.

====  ===========================================================================
code  meaning
====  ===========================================================================
0     success
1     refused, or a check failed; nothing was charged
2     usage error or invalid input (spec, flags, files); nothing was charged
3     partially charged: a failure after a charge (the charge stands)
====  ===========================================================================

``dpcert verify`` keeps its verdict codes: 0 PROVED, 1 REFUTED, 2 UNKNOWN.

>>> from dpcert.errors import BudgetExceeded, InvalidParameter, ReleaseFailed
>>> [exit_code(e("x")) for e in (BudgetExceeded, InvalidParameter, ReleaseFailed)]
[1, 2, 3]
"""

from __future__ import annotations

import json

from dpcert.errors import (
    AuditFailed,
    BackendUnavailable,
    BindingMismatch,
    BudgetExceeded,
    DPCertError,
    ReleaseFailed,
)

__all__ = ["EPILOG", "OK", "PARTIAL", "REFUSED", "USAGE", "error_json", "exit_code"]

OK, REFUSED, USAGE, PARTIAL = 0, 1, 2, 3

EPILOG = ("exit codes: 0 success; 1 refused or check failed, nothing charged; 2 usage error or "
          "invalid input, nothing charged; 3 partially charged (a failure after a charge). "
          "--json prints one JSON object on stdout, errors included.")

_KIND = {OK: "ok", REFUSED: "refused", USAGE: "invalid", PARTIAL: "partially_charged"}


def exit_code(err: DPCertError) -> int:
    """The exit code of a command that raised ``err``."""
    from dpcert.accounting.ledger import LedgerIntegrityError

    if isinstance(err, ReleaseFailed):
        return PARTIAL
    if isinstance(err, (BudgetExceeded, BindingMismatch, LedgerIntegrityError, AuditFailed,
                        BackendUnavailable)):
        return REFUSED
    return USAGE


def error_json(err: DPCertError, code: int) -> str:
    """One JSON object describing a failed command."""
    out: dict[str, object] = {"ok": False, "status": _KIND[code], "exit_code": code,
                           "error": {"type": type(err).__name__, "message": str(err)}}
    return json.dumps(out, ensure_ascii=False)
