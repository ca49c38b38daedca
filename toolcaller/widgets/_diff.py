"""The difference of two envelopes, as a person reads it: a coloured line diff of their JSON.

Fields that differ on every call (call id, timestamp, durations, waits) are left out unless
asked for, so that what remains is what changed: the result, the error, the attempts' codes.
"""

from __future__ import annotations

import copy
import difflib
import html
import json
from typing import Any

__all__ = ["VOLATILE", "diff_html", "diff_lines", "steady"]

VOLATILE = frozenset({"callId", "timestamp", "duration", "wait", "started", "elapsed", "at"})
"""Keys whose values change from call to call whatever the tool does."""


def steady(value: Any) -> Any:
    """Return a copy of an envelope (or any JSON) without the `VOLATILE` keys, at any depth."""
    if isinstance(value, dict):
        return {k: steady(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [steady(v) for v in value]
    return copy.deepcopy(value)


def diff_lines(old: Any, new: Any, *, timing: bool = False) -> list[str]:
    """Return the unified diff of two JSON values' indented text (`timing`: keep every key)."""
    if not timing:
        old, new = steady(old), steady(new)
    a = json.dumps(old, indent=2, sort_keys=True, ensure_ascii=False, default=str).splitlines()
    b = json.dumps(new, indent=2, sort_keys=True, ensure_ascii=False, default=str).splitlines()
    return list(difflib.unified_diff(a, b, "before", "after", lineterm="", n=2))


def diff_html(old: Any, new: Any, *, timing: bool = False, old_name: str = "before",
              new_name: str = "after") -> str:
    """Return the diff as HTML: removed lines red, added green; or a line saying they agree."""
    lines = diff_lines(old, new, timing=timing)
    if not lines:
        what = "the same" if timing else "the same (call ids, times and durations aside)"
        names = f"{html.escape(old_name)} and {html.escape(new_name)}"
        return f'<div class="tc-muted">{names} are {what}</div>'
    rows = []
    for line in lines[2:]:  # the ---/+++ header is said in words above
        kind = "tc-add" if line.startswith("+") else "tc-del" if line.startswith("-") else ""
        rows.append(f'<div class="{kind}">{html.escape(line) or "&nbsp;"}</div>')
    head = (f'<div class="tc-muted"><span class="tc-del">− {html.escape(old_name)}</span> · '
            f'<span class="tc-add">+ {html.escape(new_name)}</span></div>')
    return (f'{head}<div class="tc-diff tc-pre" style="white-space:pre;line-height:1.4">'
            f'{"".join(rows)}</div>')
