"""Registers the audit test subjects (``subjects.py``, DP-Sniper's mechanisms) as the module
``audit_subjects`` so that test modules can ``import audit_subjects``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if "audit_subjects" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("audit_subjects",
                                                   Path(__file__).with_name("subjects.py"))
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["audit_subjects"] = _module
    _spec.loader.exec_module(_module)
