"""The history view's HTML: calls and attempts tables, the timing chart, a call's details."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from toolcaller.widgets.result import (
    CODE_COLOURS,
    GREEN,
    GREY,
    MUTED,
    RED,
    trail_html,
    trail_text,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MASK", "attempts_html", "call_label", "calls_html", "chart_html", "details_html",
           "has_masked_secret", "summary_html"]

MASK = "***"  # what the history holds in place of a secret
SCROLL_STYLE = "max-height:20em;overflow:auto"
CHART_ROWS = 30  # calls drawn in the timing chart


def has_masked_secret(value: Any) -> bool:
    """Say whether params recorded in the history hold a masked secret (`***`) anywhere."""
    if isinstance(value, str):
        return MASK in value
    if isinstance(value, Mapping):
        return any(has_masked_secret(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(has_masked_secret(v) for v in value)
    return False


def tuples(frame: pd.DataFrame) -> Iterator[Any]:
    """The frame's rows as named tuples (typed `Any`: the stubs type each cell as a union)."""
    return iter(frame.itertuples(index=False))


def _name(value: Any) -> str:
    """A tool name for display: "?" when the request had none (None, NaN or "")."""
    return value if isinstance(value, str) and value else "?"


def status_html(success: Any, code: Any, status: Any = None) -> str:
    """A call's (or attempt's) outcome in its colour: success, cancelled, or its error code."""
    if status == "cancelled":
        return f'<span style="color:{GREY};font-weight:600">cancelled</span>'
    if success:
        return f'<span style="color:{GREEN};font-weight:600">✓ success</span>'
    text = html.escape(str(code)) if isinstance(code, str) else "failed"
    colour = CODE_COLOURS.get(str(code), RED)
    return f'<span style="color:{colour};font-weight:600">{text}</span>'


def _time(value: Any) -> str:
    try:
        return str(value.strftime("%H:%M:%S.%f")[:-3])
    except (AttributeError, ValueError):  # NaT or a value that is not a timestamp
        return ""


def _short(value: Any, width: int) -> str:
    if value is None or (isinstance(value, float) and value != value):  # None or NaN
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return html.escape(text if len(text) <= width else text[: width - 1] + "…")


def _table(head: list[str], rows: list[list[str]], selected: int | None = None) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = []
    for i, cells in enumerate(rows):
        picked = ' class="tc-picked"' if i == selected else ""
        body.append(f"<tr{picked}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (f'<div style="{SCROLL_STYLE}"><table class="tc-table" style="line-height:1.4">'
            f"<thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def calls_html(calls: pd.DataFrame, selected: str) -> str:
    """The calls table, newest first, the picked call shaded."""
    if calls.empty:
        return f'<div style="{MUTED}">no calls yet</div>'
    # The model's call id only when some row answers a model's tool call (run_tool_calls).
    model_ids = "tool_call_id" in calls and bool(calls["tool_call_id"].notna().any())
    rows, chosen = [], None
    for i, r in enumerate(tuples(calls)):
        chosen = i if r.call_id == selected else chosen
        rows.append([_time(r.timestamp), _short(_name(r.tool_name), 40),
                     status_html(r.success, r.code, r.status), f"{r.duration_ms:,.1f}",
                     str(r.attempts), _short(r.message, 120), _short(r.params, 80),
                     _short(r.call_id, 40)]
                    + ([_short(r.tool_call_id, 40)] if model_ids else []))
    head = ["time", "tool", "status", "ms", "attempts", "message", "params", "call id"]
    return _table(head + (["model call id"] if model_ids else []), rows, chosen)


def attempts_html(attempts: pd.DataFrame) -> str:
    """The attempts table of the calls shown."""
    if attempts.empty:
        return f'<div style="{MUTED}">no attempts</div>'
    rows = [[_short(r.call_id, 40), _short(r.tool_name, 40), str(r.attempt),
             f"{r.started_ms:,.1f}", f"{r.wait_ms:,.1f}", f"{r.duration_ms:,.1f}",
             status_html(r.code is None or r.code != r.code, r.code), _short(r.message, 120)]
            for r in tuples(attempts)]
    head = ["call id", "tool", "attempt", "started ms", "wait ms", "ms", "outcome", "message"]
    return _table(head, rows)


def chart_html(calls: pd.DataFrame, attempts: pd.DataFrame) -> str:
    """One row per call: its attempts on a time scale shared by every row."""
    calls = calls.head(CHART_ROWS)
    if calls.empty:
        return ""
    by_call: dict[str, list[dict[str, Any]]] = {}
    for a in tuples(attempts):
        code = a.code if isinstance(a.code, str) else None
        by_call.setdefault(a.call_id, []).append(
            {"attempt": a.attempt, "wait": a.wait_ms, "duration": a.duration_ms, "code": code})
    totals = [sum(x["wait"] + x["duration"] for x in by_call.get(cid, []))
              for cid in calls["call_id"]]
    scale = max(max(totals, default=0.0), 1e-9)
    lines = []
    for r, total in zip(tuples(calls), totals, strict=True):
        trail = by_call.get(r.call_id, [])
        label = f"{_name(r.tool_name)} · {total:,.1f} ms"
        bar = (trail_html(trail, scale_ms=scale) if trail
               else f'<span style="{MUTED}">no attempt ({_short(r.code or r.status, 30)})</span>')
        title = html.escape(trail_text(trail) or "no attempt")
        lines.append(
            f'<div title="{title}" style="display:flex;align-items:center;gap:8px">'
            f'<div style="width:16em;{MUTED};white-space:nowrap;overflow:hidden">'
            f"{html.escape(label)}</div><div style=\"flex:1\">{bar}</div></div>")
    legend = (f'<div style="{MUTED}">timing, newest first (scale {scale:,.1f} ms): '
              f'<span style="color:{GREY}">■</span> wait '
              f'<span style="color:{GREEN}">■</span> ok '
              f'<span style="color:{RED}">■</span> error '
              f'<span style="color:{CODE_COLOURS["TIMEOUT"]}">■</span> timeout</div>')
    return legend + "".join(lines)


def summary_html(recorded: int, failed: int, cancelled: int, shown: int, dropped: int) -> str:
    """The line above the tables: how many calls, failures and cancellations."""
    text = f"{recorded:,} calls recorded · {failed:,} failed"
    if cancelled:
        text += f" · {cancelled:,} cancelled"
    text += f" · showing {shown:,}"
    if dropped > 0:
        text += f" ({dropped:,} older calls dropped)"
    return f'<span style="{MUTED}">{html.escape(text)}</span>'


def call_label(row: Any) -> str:
    """A call as the picker lists it: time, tool, outcome, id."""
    status = "cancelled" if row.status == "cancelled" else "✓" if row.success else str(row.code)
    return f"{_time(row.timestamp)}  {_name(row.tool_name)}  {status}  ({row.call_id})"


def details_html(record: Any) -> str:
    """The picked call: outcome, params and options, and a warning for masked secrets."""
    params = json.dumps(record.params, ensure_ascii=False, default=str)
    options = json.dumps(record.options_dict(), ensure_ascii=False, default=str)
    warning = ""
    if has_masked_secret(record.params):
        warning = (f'<div class="tc-warn">⚠ these params hold a masked secret '
                   f"(<code>{MASK}</code>): the history never keeps secrets, so a re-run sends "
                   f"<code>{MASK}</code> in its place — call the tool from its form to send the "
                   "real value.</div>")
    message = f" — {html.escape(record.message)}" if record.message else ""
    name = html.escape(_name(record.tool_name))
    return (f"<div>{status_html(record.success, record.code, record.status)} <b>{name}</b>"
            f'{message}<br><span style="{MUTED}">params <code>{html.escape(params)}</code>'
            f" · options <code>{html.escape(options)}</code></span></div>{warning}")
