"""What a tool says of itself, as badges: read-only, idempotent, destructive, open-world.

From MCP tool annotations (`metadata["annotations"]`, as the MCP source stores them), a
registry entry's own `metadata.annotations`, and for HTTP tools their method (GET reads, PUT
and DELETE may be repeated, DELETE destroys, any HTTP call reaches the outside world). What a
tool states itself wins over what its method suggests.
"""

from __future__ import annotations

import html

from toolcaller.core.tool import Tool
from toolcaller.widgets._style import COLOURS

__all__ = ["HINTS", "annotations_of", "badges_html", "tool_card_html"]

HINTS = ("readOnlyHint", "idempotentHint", "destructiveHint", "openWorldHint")
_BY_METHOD: dict[str, dict[str, bool]] = {
    "GET": {"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False},
    "HEAD": {"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False},
    "OPTIONS": {"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False},
    "PUT": {"readOnlyHint": False, "idempotentHint": True},
    "DELETE": {"readOnlyHint": False, "idempotentHint": True, "destructiveHint": True},
    "POST": {"readOnlyHint": False, "idempotentHint": False},
    "PATCH": {"readOnlyHint": False, "idempotentHint": False},
}
_BADGES = (  # (hint, value that earns the badge, text, colour, what it means)
    ("readOnlyHint", True, "read-only", COLOURS["success"], "does not change anything"),
    ("destructiveHint", True, "destructive", COLOURS["error"], "may delete or overwrite data"),
    ("idempotentHint", True, "idempotent", COLOURS["info"], "calling it again does no more"),
    ("openWorldHint", True, "open-world", COLOURS["warn"], "reaches outside systems"),
)


def http_method(tool: Tool) -> str | None:
    """Return an HTTP tool's method (upper case), else None."""
    if tool.kind != "http" or not isinstance(tool.target, dict):
        return None
    method = tool.target.get("method", "GET")
    return method.upper() if isinstance(method, str) else None


def annotations_of(tool: Tool) -> dict[str, bool]:
    """Return the tool's behaviour hints (MCP's names), stated or derived; unknown ones absent."""
    found: dict[str, bool] = {}
    stated = tool.metadata.get("annotations")
    if isinstance(stated, dict):
        found.update({k: v for k, v in stated.items() if k in HINTS and isinstance(v, bool)})
    method = http_method(tool)
    if method is not None:
        for key, value in {**_BY_METHOD.get(method, {}), "openWorldHint": True}.items():
            found.setdefault(key, value)
    if tool.idempotent:
        found.setdefault("idempotentHint", True)
    if found.get("readOnlyHint"):
        found.pop("destructiveHint", None)  # MCP: destructive means nothing for a read-only tool
    return found


def badges_html(tool: Tool) -> str:
    """Return the tool's badges (an HTTP method first), each with a tooltip saying what it means."""
    hints = annotations_of(tool)
    parts = []
    method = http_method(tool)
    if method is not None:
        parts.append(_flag(method, COLOURS["muted"], f"an HTTP {method} request"))
    for hint, wanted, text, colour, meaning in _BADGES:
        if hints.get(hint) is wanted:
            parts.append(_flag(text, colour, f"{text}: {meaning} ({hint})"))
    return "".join(parts)


def _flag(text: str, colour: str, title: str) -> str:
    return (f'<span class="tc-flag tc-badge-{html.escape(text.lower())}" '
            f'style="color:{colour}" title="{html.escape(title)}">{html.escape(text)}</span>')


def tool_card_html(tool: Tool, required: list[str]) -> str:
    """Return the selected tool's card: name, badges, its whole description, tags, kind."""
    description = tool.description if isinstance(tool.description, str) else ""
    tags = ", ".join(html.escape(t) for t in tool.tags) or "—"
    needs = ", ".join(html.escape(name) for name in required) or "—"
    return (f'<div class="tc-tool-card"><div><b>{html.escape(tool.name)}</b> '
            f"{badges_html(tool)}</div>"
            f"<div>{html.escape(description)}</div>"
            f'<div class="tc-muted">{html.escape(tool.kind)} tool · tags: {tags} · '
            f"required: {needs}</div></div>")
