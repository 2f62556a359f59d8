"""Import the optional extras of [`dpcert.verify`][dpcert.verify] (z3, lark) with a clear error."""

from __future__ import annotations

import importlib
from types import ModuleType

from dpcert.errors import DPCertError

__all__ = ["MissingExtra", "require_lark", "require_z3"]


class MissingExtra(DPCertError, ImportError):
    """An optional dependency of the verifier is not installed."""


def _require(module: str, dist: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingExtra(
            f"dpcert.verify needs {dist!r}, which is not installed: "
            "run `pip install dpcert[verify]`"
        ) from e


def require_z3() -> ModuleType:
    """The `z3` module, or `MissingExtra` telling how to install it."""
    return _require("z3", "z3-solver")


def require_lark() -> ModuleType:
    """The `lark` module, or `MissingExtra` telling how to install it."""
    return _require("lark", "lark")
