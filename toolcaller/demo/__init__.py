"""The embedded demo registry: tools of every kind that exercise every error code, offline.

Python tools live in `tools.py`, script tools in `scripts/`, and the `http.*` tools call the
local server of `server.py`. Their URLs start with `${TOOLCALLER_DEMO_URL}`: loading the demo
registry starts that server (once per process, in a daemon thread, in well under a millisecond)
and writes its URL into those tools. When `TOOLCALLER_DEMO_URL` is set in the environment, no
server is started and the variable is read at call time instead (your own
`python -m toolcaller.demo.server`, say). Discovery never depends on the server: if it cannot
start, the demo loads all the same and its `http.*` calls fail with a permanent EXECUTION_ERROR
naming the variable.
"""

from __future__ import annotations

import os
from pathlib import Path

from toolcaller.core.tool import Tool

__all__ = ["DEMO_REGISTRY", "DEMO_URL_VAR", "demo_tools"]

DEMO_REGISTRY = Path(__file__).resolve().parent / "registry.json"
DEMO_URL_VAR = "TOOLCALLER_DEMO_URL"
_PLACEHOLDER = "${" + DEMO_URL_VAR + "}"


def demo_tools() -> list[Tool]:
    """Return the tools of the demo registry, its `http` tools pointed at the demo server."""
    from toolcaller.sources.registry_file import load_registry

    tools = load_registry(DEMO_REGISTRY).tools
    _point_at_demo_server(tools)
    return tools


def _point_at_demo_server(all_tools: list[Tool]) -> None:
    """Write the running demo server's URL into the `http` tools that name it."""
    if os.environ.get(DEMO_URL_VAR):
        return  # the user's server, read through `${VAR}` at call time
    tools = [t for t in all_tools
             if t.kind == "http" and _PLACEHOLDER in str(t.target.get("url", ""))]  # fmt: skip
    if not tools:
        return
    from toolcaller.demo.server import demo_url

    try:
        url = demo_url()
    except OSError:
        return  # no loopback socket: calls will say that the variable is not set
    for tool in tools:
        tool.target = {**tool.target, "url": tool.target["url"].replace(_PLACEHOLDER, url)}
