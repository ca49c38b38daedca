"""JSON pointers (RFC 6901): the one place where `~` and `/` in keys are escaped and unescaped."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["escape_token", "split_pointer", "to_pointer", "unescape_token"]


def escape_token(token: str | int) -> str:
    """Escape one reference token: `~` becomes `~0`, then `/` becomes `~1`."""
    text = str(token)
    if "~" in text or "/" in text:
        return text.replace("~", "~0").replace("/", "~1")
    return text


def unescape_token(token: str) -> str:
    """Undo `escape_token`: `~1` becomes `/`, then `~0` becomes `~` (in this order)."""
    return token.replace("~1", "/").replace("~0", "~")


def to_pointer(path: Iterable[str | int]) -> str:
    """Return the JSON pointer of a path of keys and indexes (`""` for the root)."""
    return "".join(["/" + escape_token(part) for part in path])


def split_pointer(pointer: str) -> list[str]:
    """Return the unescaped tokens of a JSON pointer (`""` gives `[]`; a missing `/` is ok)."""
    if not pointer:
        return []
    body = pointer[1:] if pointer.startswith("/") else pointer
    return [unescape_token(token) for token in body.split("/")]
