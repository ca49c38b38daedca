"""A plugin for the browser pages: a tool kind whose attempts report progress, as MCP servers do.

Installed for the page kernels through a fake dist-info (see `conftest.plugin_site`): the
entry point `toolcaller.adapters: steps` runs `StepsAdapter`, and `toolcaller.tools: steps`
adds the tool `plugin.steps`. Each step calls `ctx.report_progress(...)`, the same engine hook
an adapter uses for an MCP server's `notifications/progress`, so the explorer's running display
is tested end to end: engine event, kernel, widget, browser.
"""

from __future__ import annotations

import asyncio
from typing import Any

from toolcaller import Tool
from toolcaller.core.context import AttemptContext

__all__ = ["TOOLS", "StepsAdapter"]

STEP_S = 0.6


class StepsAdapter:
    """Runs `steps` tools: `count` steps of `STEP_S` seconds, each reported as progress."""

    kind = "steps"

    async def invoke(self, tool: Tool, params: dict[str, Any], ctx: AttemptContext) -> object:
        """Report each step, then answer how many there were."""
        count = int(params.get("count", 3))
        for step in range(1, count + 1):
            ctx.report_progress(step, count, f"step {step} of {count}: working")
            await asyncio.sleep(STEP_S)
        return {"steps": count}

    async def aclose(self) -> None:
        """Hold nothing."""


TOOLS = [Tool(
    name="plugin.steps",
    description="Work in steps, reporting progress after each (a plugin tool kind).",
    params_schema={"type": "object", "properties": {
        "count": {"type": "integer", "minimum": 1, "maximum": 20, "default": 3}}},
    kind="steps", target=None, metadata={"tags": ["plugin", "progress"]},
    options={"timeout": 30000, "deadline": 30000, "retries": 0},
)]
