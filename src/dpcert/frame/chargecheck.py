"""Confirming a release certificate's charge against the ledger that took it.

`charge_mismatches` opens the ledger read-only (which verifies its whole hash chain),
finds the charge at the position the certificate states, and confirms that the chain stores the
hash of the certificate's charge body there (`dpcert.frame.binding`), that the charge's
event is the recompiled measurement's event (so its amount), that the ledger dataset's budget
is the one the certificate states, and that the chain head and remaining budget the certificate
shows are the ledger's right after that charge.  An edited certificate — its budget, plan,
scales, totals, session or ledger fields, even with every hash recomputed — no longer hashes
to what the chain holds.

Examples
--------
>>> import os, tempfile
>>> from dpcert.accounting.ledger import Ledger
>>> path = os.path.join(tempfile.mkdtemp(), "l.sqlite")
>>> Ledger(path).create("d", __import__("dpcert").PureDP(1))
>>> charge_mismatches({"binding": {"dataset": None}}, path)
['binding.dataset: the certificate names no ledger dataset (released without a ledger)']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dpcert.core.measurement import Measurement
from dpcert.core.measures import Measure

if TYPE_CHECKING:
    from dpcert.accounting.filters import Amount

__all__ = ["charge_mismatches"]


def charge_mismatches(cert: Mapping[str, Any], ledger_path: str,
                      m: Measurement | None = None, budget: Measure | None = None
                      ) -> list[str]:
    """Why the ledger at ``ledger_path`` does not confirm ``cert``'s charge (empty: it does).
    ``m``/``budget``: the certificate's recompiled measurement and budget
    (`dpcert.frame.certify.check_certificate` gives them)."""
    from dpcert.accounting.codec import event_to_json
    from dpcert.accounting.ledger import Ledger, LedgerIntegrityError
    from dpcert.core.events import ComposedEvent
    from dpcert.errors import DPCertError
    from dpcert.frame.binding import charge_body_hash
    from dpcert.frame.recheck import amount_from_json

    dataset = cert.get("binding", {}).get("dataset")
    if dataset is None:
        return ["binding.dataset: the certificate names no ledger dataset (released without "
                "a ledger)"]
    where, shown = cert["charge"]["ledger"], cert.get("ledger")
    if where is None or shown is None:
        return ["charge.ledger, ledger: the certificate names a ledger dataset but not where "
                "its charge is"]
    if shown["dataset"] != dataset:
        return [f"ledger.dataset={shown['dataset']!r} is not binding.dataset={dataset!r}"]
    try:
        led = Ledger(ledger_path, read_only=True)
        if dataset not in led.datasets():
            return [f"binding.dataset={dataset!r} is not in the ledger {ledger_path!r}"]
        history = led.history(dataset)
        status = led.status(dataset)
    except LedgerIntegrityError as e:
        return [f"ledger: its hash chain does not verify: {e}"]
    except DPCertError as e:
        return [f"ledger: cannot be read: {type(e).__name__}: {e}"]
    pos = where["position"]
    if not 1 <= pos <= len(history):
        return [f"charge.ledger.position={pos}: the ledger dataset {dataset!r} has "
                f"{len(history)} charges"]
    spend = history[pos - 1]
    msgs: list[str] = []
    if spend.id != where["charge_id"]:
        msgs.append(f"charge.ledger.charge_id: recorded {where['charge_id']} != the ledger's "
                    f"{spend.id} at position {pos}")
    body = charge_body_hash(cert)
    i = where["index"]
    if not 0 <= i < len(spend.certificates) or spend.certificates[i] != body:
        msgs.append(f"charge: the ledger's charge at position {pos} does not hold this "
                    f"certificate's charge body hash {body[:16]}... at index {i} (it holds "
                    f"{[h[:16] for h in spend.certificates]})")
    batch = cert["binding"]["batch"]
    if m is not None:
        ev = spend.event
        if batch is not None and isinstance(ev, ComposedEvent) and batch["size"] == len(
                ev.events) and 0 <= batch["index"] < batch["size"]:
            ev = ev.events[batch["index"]]
        if ev is None or event_to_json(ev) != event_to_json(m.event(1)):
            msgs.append(f"charge: the ledger charged {ev!r} at position {pos}, not the "
                        f"recompiled release {m.event(1)!r}")
    if budget is not None:
        if status.measure != type(budget).__name__:
            msgs.append(f"budget: the ledger dataset keeps a {status.measure} budget")
        else:
            stated: Amount | str
            try:
                stated = amount_from_json(budget, cert["binding"]["ledger_budget"])
            except ValueError as e:
                stated = str(e)
            if stated != status.total:
                msgs.append(f"binding.ledger_budget: recorded {stated} != the ledger's "
                            f"{status.total}")
            at = led.status_at(dataset, pos)
            if shown["remaining"] != budget.to_json(at.remaining):
                msgs.append(f"ledger.remaining: recorded != the ledger's after charge {pos} "
                            f"({budget.describe(at.remaining)})")
    if shown["chain_head"] != spend.hash:
        msgs.append(f"ledger.chain_head: recorded != the ledger's hash at position {pos}")
    return msgs
