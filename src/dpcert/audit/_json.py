"""The JSON value type of the audit's reports (``AuditResult.to_dict``)."""

from __future__ import annotations

from typing import TypeAlias

__all__ = ["JSON"]

# TODO(lead): use dpcert._types.JSON
#: A JSON value as `json.dumps` accepts it.
JSON: TypeAlias = "dict[str, JSON] | list[JSON] | str | int | float | bool | None"
