"""JSON Pointers (RFC 6901): how a path into a JSON document is written and read."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["escape_token", "split_pointer", "to_pointer"]


def escape_token(token: Any) -> str:
    """Escape one reference token (`~` as `~0`, `/` as `~1`)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def to_pointer(path: Iterable[Any]) -> str:
    """Return the pointer of a path of keys and indexes (`""` for the document itself)."""
    return "".join("/" + escape_token(part) for part in path)


def split_pointer(pointer: str) -> list[str]:
    """Return the unescaped tokens of a pointer (`[]` for `""`)."""
    if not pointer:
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
