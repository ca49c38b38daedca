"""Plugins: installed packages expose tools through the entry-point group `toolcaller.tools`.

An entry point may name a `Tool` (e.g. a `@tool` function), a plain function, a list of
either, or a callable with no arguments returning such a list.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from importlib.metadata import entry_points
from typing import Any

from toolcaller.core.tool import Tool
from toolcaller.sources.decorator import from_function

__all__ = ["GROUP", "plugin_tools"]

GROUP = "toolcaller.tools"
log = logging.getLogger("toolcaller")


def plugin_tools() -> tuple[list[Tool], list[str]]:
    """Load every plugin's tools; return them and one message per plugin that failed."""
    tools: list[Tool] = []
    problems: list[str] = []
    for point in entry_points(group=GROUP):
        try:
            tools.extend(_as_tools(point.load()))
        except Exception as exc:  # noqa: BLE001 - one broken plugin must not hide the others
            message = f"plugin {point.name!r} ({point.value}): {type(exc).__name__}: {exc}"
            log.warning("toolcaller: skipped %s", message)
            problems.append(message)
    return tools, problems


def _as_tools(obj: Any) -> list[Tool]:
    if isinstance(obj, Tool):
        return [obj]
    if isinstance(obj, Iterable) and not isinstance(obj, str | bytes | dict):
        return [item if isinstance(item, Tool) else from_function(item) for item in obj]
    if callable(obj):
        try:
            import inspect

            takes_nothing = not inspect.signature(obj).parameters
        except (TypeError, ValueError):
            takes_nothing = False
        if takes_nothing and getattr(obj, "__toolcaller_factory__", True):
            produced = obj()
            if isinstance(produced, Tool | list | tuple):
                return _as_tools(produced)
        return [from_function(obj)]
    raise TypeError(f"an entry point must give a Tool, a function or a list, not {obj!r}")
