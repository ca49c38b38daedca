"""JSON type aliases shared by the whole package."""

from __future__ import annotations

from typing import Any, TypeAlias

JSONValue: TypeAlias = Any
"""Any value that `json.dumps` accepts (kept as Any: recursive aliases slow mypy down)."""

JSONObject: TypeAlias = dict[str, Any]
"""A JSON object."""

Schema: TypeAlias = dict[str, Any] | bool
"""A JSON Schema (an object, or `true`/`false`)."""
