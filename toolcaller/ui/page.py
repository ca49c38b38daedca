"""What the explorer page's notebook runs: a caller built from the server's environment."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["PLUGINS_ENV", "REGISTRY_ENV", "caller_from_env"]

REGISTRY_ENV = "TOOLCALLER_REGISTRY"
"""Absolute path of the registry file the page lists; unset or empty: the embedded demo."""
PLUGINS_ENV = "TOOLCALLER_PLUGINS"
"""Set to "1" to add the tools of installed plugins (entry-point group `toolcaller.tools`)."""


def caller_from_env() -> ToolCaller:
    """Return a caller of the registry `TOOLCALLER_REGISTRY` names (default: the demo registry).

    With `TOOLCALLER_PLUGINS=1`, plugin tools are added too; a plugin that cannot be loaded, or
    whose tool's name is taken, is reported on stderr (the server's log) and skipped.
    """
    from toolcaller.caller import ToolCaller

    registry = os.environ.get(REGISTRY_ENV, "")
    caller = ToolCaller.from_file(registry) if registry else ToolCaller()
    if os.environ.get(PLUGINS_ENV) == "1":
        for problem in caller.add_plugins():
            print(f"toolcaller: warning: {problem}", file=sys.stderr)
    return caller
