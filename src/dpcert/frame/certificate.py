"""Release certificates: the charge body plus what is known only after the charge.

`release_certificate` completes a charge body (`dpcert.frame.binding.charge_body`:
the compiled chain's certificate of `dpcert.frame.certify.compiled_certificate`, the
measurements, totals, contribution bounds, privacy unit, session and ledger binding, all fixed
before the charge) with the creation time, the ledger's state right after the charge and the
``charge`` record: the body's SHA-256 and, with a ledger, where the chain stores it.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import TYPE_CHECKING

from dpcert.frame.binding import charge_body_hash

if TYPE_CHECKING:
    from dpcert._types import JSON

__all__ = ["release_certificate"]


def release_certificate(body: Mapping[str, JSON], *, ledger: dict[str, JSON] | None,
                        charge: dict[str, JSON] | None) -> dict[str, JSON]:
    """The certificate of a charged release: ``body`` (hashed into the ledger's chain when it
    was charged), ``ledger`` (path, dataset, remaining, chain head and charges right after the
    charge) and ``charge`` (``{"charge_id", "position", "index"}`` in the ledger, or ``None``
    without a ledger)."""
    cert = dict(body)
    cert.update({
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "ledger": ledger,
        "charge": {"body_sha256": charge_body_hash(body), "ledger": charge},
    })
    return cert
