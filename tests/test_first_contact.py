"""What a new user meets first: the explorer without its extra says what to install."""

from __future__ import annotations

import sys

import pytest

from toolcaller import ToolCaller


def test_explore_without_the_notebook_extra_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`caller.explore()` without ipywidgets raises ImportError naming the install line."""
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # as if it were not installed
    for name in [n for n in sys.modules if n.startswith("toolcaller.widgets")]:
        monkeypatch.delitem(sys.modules, name)
    with ToolCaller() as caller, pytest.raises(ImportError, match=r"pip install '\.\[notebook\]'"):
        caller.explore()
