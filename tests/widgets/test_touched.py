"""Which pointers a user changed, and whose errors therefore show."""

from __future__ import annotations

from typing import Any

import pytest

from toolcaller.widgets._field import UNSET
from toolcaller.widgets._touched import changed_pointers, is_shown


@pytest.mark.parametrize(("old", "new", "changed"), [
    ({"a": 1}, {"a": 1}, set()),
    ({"a": 1}, {"a": 2}, {"/a"}),
    ({}, {"a": 1}, {"/a"}),
    ({"a": 1}, {}, {"/a"}),
    ({"o": {"x": 1}}, {"o": {"x": 1, "y": 2}}, {"/o/y"}),
    ({"l": [1]}, {"l": [1, 2]}, {"/l", "/l/1"}),
    ({"a/b": 1}, {"a/b": 2}, {"/a~1b"}),
    ({"t": True}, {"t": 1}, {"/t"}),  # true is not 1
    (UNSET, {"a": 1}, {""}),
], ids=["same", "changed", "added", "removed", "nested", "item", "escaped", "bool", "unset"])
def test_changed_pointers(old: Any, new: Any, changed: set[str]) -> None:
    """Every pointer whose value differs, added and removed keys included."""
    assert changed_pointers(old, new) == changed


def test_an_error_shows_at_its_field_or_once_a_field_below_was_touched() -> None:
    """`/items` (too few) shows once `/items/0/x` was edited; `/a` does not for `/b`."""
    touched = {"/items/0/x", "/b"}
    assert is_shown("/items", touched)
    assert is_shown("/b", touched)
    assert not is_shown("/a", touched)
    assert not is_shown("/items/1", touched)
