"""A JSON value, as `json.loads` returns it and `json.dumps` accepts it (certificates)."""

from __future__ import annotations

from typing import TypeAlias

__all__ = ["JSON"]

# TODO(lead): use dpcert._types.JSON
JSON: TypeAlias = "dict[str, JSON] | list[JSON] | str | int | float | bool | None"
