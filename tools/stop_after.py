"""A pytest plugin for ``tools/mutate.py --killers``: stop the run once tests in
``DPCERT_STOP_AFTER`` distinct test *functions* have failed (parametrisations of one function
count once).  With 2, a mutant's run stops as soon as it is known not to be a single-killer
mutant, and runs to the end otherwise -- so "killed by exactly one test function" stays exact.
Loaded with ``-p tools.stop_after`` (the runner's working directory is the repository root)."""

from __future__ import annotations

import os
from typing import Any

_failed: set[str] = set()
_session: Any = None


def pytest_sessionstart(session: Any) -> None:
    global _session
    _session = session


def pytest_runtest_logreport(report: Any) -> None:
    if not report.failed:
        return
    _failed.add(report.nodeid.split("[")[0])
    limit = int(os.environ.get("DPCERT_STOP_AFTER", "0"))
    if limit and len(_failed) >= limit and _session is not None:
        _session.shouldstop = f"failures in {limit} distinct test functions"
