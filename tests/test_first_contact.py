"""What a new user meets first: the explorer without its extra says what to install."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from toolcaller import ToolCaller


def test_explore_without_the_notebook_extra_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`caller.explore()` without ipywidgets raises ImportError naming the install line."""
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "ipywidgets" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with ToolCaller() as caller, pytest.raises(ImportError, match=r"pip install '\.\[notebook\]'"):
        caller.explore()
