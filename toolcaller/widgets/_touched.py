"""Which fields a user has touched: pointers whose values changed, and whose errors may show.

A blank form is not red: an error shows once the user has changed its field (or a field below
it: an array's minimum shows once an item was edited), or after an attempt to call.
"""

from __future__ import annotations

from typing import Any

from toolcaller.widgets._field import UNSET, is_json_equal
from toolcaller.widgets._schema import escape_token

__all__ = ["changed_pointers", "is_shown"]

MAX_DEPTH = 64  # deeper changes count for the level above (a value that deep is rare)


def changed_pointers(old: Any, new: Any, pointer: str = "", depth: int = 0) -> set[str]:
    """Return the JSON pointers at which `new` differs from `old` (added and removed included)."""
    if depth > MAX_DEPTH:
        return {pointer}
    if isinstance(old, dict) and isinstance(new, dict):
        found: set[str] = set()
        for key in dict.fromkeys([*old, *new]):
            below = f"{pointer}/{escape_token(str(key))}"
            found |= changed_pointers(old.get(key, UNSET), new.get(key, UNSET), below, depth + 1)
        return found
    if isinstance(old, list) and isinstance(new, list):
        found = set()
        for index in range(max(len(old), len(new))):
            a = old[index] if index < len(old) else UNSET
            b = new[index] if index < len(new) else UNSET
            found |= changed_pointers(a, b, f"{pointer}/{index}", depth + 1)
        if len(old) != len(new):
            found.add(pointer)
        return found
    if old is UNSET and new is UNSET:
        return set()
    if old is UNSET or new is UNSET or not is_json_equal(old, new):
        return {pointer}
    return set()


def is_shown(pointer: str, touched: set[str]) -> bool:
    """Say whether an error at `pointer` shows: its field, or one below it, was touched."""
    if pointer in touched:
        return True
    prefix = pointer + "/"
    return any(item.startswith(prefix) for item in touched)
