"""Whether a dotted name that a docs page or a proof note mentions exists (shared by
``test_docs_names`` and ``test_proof_links``; imported as a top-level module, like
``_strategies``)."""

from __future__ import annotations

import importlib


def resolves(dotted: str) -> bool:
    """``dotted`` (``package.module.attr.attr``) imports its longest importable prefix and then
    finds every remaining attribute."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False
