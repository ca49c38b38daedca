"""Badges: what a tool says of itself (annotations), or what its HTTP method implies."""

from __future__ import annotations

from typing import Any

import pytest

from toolcaller import Tool
from toolcaller.widgets._badges import annotations_of, badges_html, tool_card_html


def _tool(kind: str = "python", target: Any = None, **metadata: Any) -> Tool:
    return Tool(name="t.x", description="A <tool>.", params_schema={"type": "object"},
                kind=kind, target=target, metadata=metadata)


@pytest.mark.parametrize(("tool", "hints"), [
    (_tool(annotations={"readOnlyHint": True, "idempotentHint": True}),
     {"readOnlyHint": True, "idempotentHint": True}),
    (_tool(annotations={"readOnlyHint": True, "destructiveHint": True}),
     {"readOnlyHint": True}),  # MCP: destructive means nothing for a read-only tool
    (_tool("http", {"method": "get", "url": "http://h/"}),
     {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": True}),
    (_tool("http", {"method": "DELETE", "url": "http://h/"}),
     {"readOnlyHint": False, "idempotentHint": True, "destructiveHint": True,
      "openWorldHint": True}),
    (_tool("http", {"method": "POST", "url": "http://h/"}, annotations={"idempotentHint": True}),
     {"readOnlyHint": False, "idempotentHint": True, "openWorldHint": True}),  # stated wins
    (_tool(annotations="not a dict"), {}),
], ids=["mcp-like", "read-only-not-destructive", "get", "delete", "stated-wins", "bad"])
def test_annotations(tool: Tool, hints: dict[str, bool]) -> None:
    """Stated hints, else what the HTTP method implies."""
    assert annotations_of(tool) == hints


def test_an_idempotent_tool_is_marked_so() -> None:
    """`Tool.idempotent` (MCP's idempotentHint, the registry's `idempotent`) earns the badge."""
    tool = _tool()
    tool.idempotent = True
    assert "idempotent" in badges_html(tool)


def test_badges_explain_themselves_and_the_card_escapes() -> None:
    """Each badge has a tooltip saying what it means; the card shows the whole description."""
    tool = _tool("http", {"method": "GET", "url": "http://h/"})
    shown = badges_html(tool)
    assert ">GET<" in shown
    assert ">read-only<" in shown
    assert ">open-world<" in shown
    assert 'title="read-only: does not change anything (readOnlyHint)"' in shown
    card = tool_card_html(tool, ["a"])
    assert "A &lt;tool&gt;." in card
    assert "required: a" in card
