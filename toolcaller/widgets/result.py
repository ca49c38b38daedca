"""ResultView: one envelope at a glance — status, message, details, result and timing."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import traitlets

from toolcaller.envelope import Envelope
from toolcaller.widgets._content import content_html, is_bytes, is_content_blocks
from toolcaller.widgets._snapshot import SnapshotMixin
from toolcaller.widgets._style import COLOURS, style_widget

if TYPE_CHECKING:
    from toolcaller.widgets._runner import Job

__all__ = ["ResultView", "is_records", "notes_html", "running_html", "trail_html", "trail_text"]

MAX_TABLE_ROWS = 500
MAX_JSON_CHARS = 200_000  # a bigger result is cut: the browser would choke on it
# Badges are white text on these, in both themes: the theme's own status colours, and one grey.
GREEN, RED, AMBER, GREY = COLOURS["success"], COLOURS["error"], COLOURS["warn"], "#6e7781"
CODE_COLOURS = {"TIMEOUT": AMBER}  # every other code is red
# Widget HTML inherits a 28 px line height (one control's height): blocks of lines set their own.
LINE_HEIGHT = "line-height:1.4"
MUTED = f"color:{COLOURS['muted']};font-size:0.9em"
SHOWN_NOTES = 5  # progress and log lines shown while a call runs


class ResultView(SnapshotMixin, W.VBox):  # type: ignore[misc]  # ipywidgets is untyped: VBox is Any
    """Shows one envelope: a status badge, the message, details, the result and the metadata.

    `show(envelope)` takes an `Envelope` or its dict; `show_running(job)` says a call is under
    way (elapsed time, attempt n of m, the wait before the next retry, the tool's progress
    messages: call it again as the call goes on), `show_cancelled(name, elapsed_ms)` that the
    user cancelled it; `clear()` empties the view. Nothing here raises into the UI: what cannot
    be shown is shown as a problem instead. Every text is HTML-escaped; colours are the
    JupyterLab theme's. CSS classes for pages and tests: `tc-result` on the view,
    `tc-result-status` on its status line, `tc-result-message` on its message.
    """

    envelope = traitlets.Any(None, allow_none=True,
                             help="The last envelope shown, as a dict (None when empty).")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.status_text = ""
        """"success", the error code, "running", "cancelled", "problem" or "" (empty)."""
        self.message_text = ""
        """The error message (or the problem), "" on success."""
        self.result_kind = "none"
        """How the result is shown: "json", "table", "content" (MCP blocks, bytes) or "none"."""
        self.add_class("tc-result")
        self.status = W.HTML()
        self.status.add_class("tc-result-status")
        self.message = W.HTML()
        self.message.add_class("tc-result-message")
        self.details_body = W.HTML()
        self.details = W.Accordion(children=(self.details_body,), selected_index=None)
        self.details.set_title(0, "details")
        self.result = W.HTML()
        self.metadata = W.HTML()
        self.children = (self.status, self.message, self.details, self.result, self.metadata,
                         style_widget())
        self.clear()

    def snapshot_html(self) -> str:
        """Return what the view shows, as static HTML (for renderers without widgets)."""
        return "".join(part.value for part in (self.status, self.message, self.result,
                                               self.metadata))

    def snapshot_text(self) -> str:
        """Return the view in one line: its status and message."""
        message = f": {self.message_text[:80]}" if self.message_text else ""
        return f"ResultView({self.status_text or 'empty'}{message})"

    def clear(self) -> None:
        """Show nothing."""
        self._set(status="", message="", kind="none", envelope=None)
        self.status.value = ""
        self.message.value = ""
        self.result.value = ""
        self.metadata.value = ""
        self._set_details(None)

    def show_running(self, job: Job | str | None) -> None:
        """Say that a call is running: a `Job` (live: call again on each tick) or a tool name."""
        if self.status_text != "running":
            self.clear()
            self.status_text = "running"
        name = job if isinstance(job, str) or job is None else job.name
        self.status.value = (f'{_badge("… running", GREY)} <b>{html.escape(str(name or ""))}</b>'
                             + (running_html(job) if not isinstance(job, str | None) else ""))

    def show(self, envelope: Envelope | Mapping[str, Any]) -> None:
        """Show an envelope (an `Envelope` or its dict); anything else is shown as a problem."""
        try:
            data = envelope.to_dict() if isinstance(envelope, Envelope) else envelope
            if not isinstance(data, Mapping) or "success" not in data:
                raise TypeError(f"expected an envelope, got {type(envelope).__name__}")
            self._show(dict(data))
        except Exception as exc:  # noqa: BLE001 - a view never raises into the UI
            self.show_problem(f"cannot show this envelope: {type(exc).__name__}: {exc}")

    def show_cancelled(self, tool_name: str | None, elapsed_ms: float) -> None:
        """Say that the user cancelled the call of `tool_name` after `elapsed_ms`: no envelope."""
        self.clear()
        message = (f"call of {str(tool_name or '')!r} cancelled by the user after "
                   f"{elapsed_ms:,.0f} ms: no envelope (the history records it as cancelled)")
        self._set(status="cancelled", message=message, kind="none", envelope=None)
        self.status.value = (f'{_badge("cancelled", GREY)} '
                             f'<b>{html.escape(str(tool_name or ""))}</b>')
        self.message.value = f"<div>{html.escape(message)}</div>"

    def show_problem(self, message: str) -> None:
        """Show a failure of the notebook side (not an envelope), e.g. a callback that broke."""
        self.clear()
        self._set(status="problem", message=message, kind="none", envelope=None)
        self.status.value = _badge("⚠ problem", RED)
        self.message.value = f"<div>{html.escape(message)}</div>"

    # -- rendering --------------------------------------------------------------------------

    def _show(self, data: dict[str, Any]) -> None:
        error = _mapping(data.get("error"))
        metadata = _mapping(data.get("metadata")) or {}
        success = bool(data.get("success"))
        code = "success" if success else str((error or {}).get("code") or "FAILED")
        message = "" if error is None else str(error.get("message", ""))
        kind, result_html = _result_html(data.get("result"))
        self._set(status=code, message=message, kind=kind, envelope=data)
        self.status.value = _status_html(success, code, metadata)
        self.message.value = f"<div>{html.escape(message)}</div>" if message else ""
        self._set_details(None if error is None else error.get("details"))
        self.result.value = result_html
        self.metadata.value = _metadata_html(metadata)

    def _set(self, *, status: str, message: str, kind: str, envelope: Any) -> None:
        self.status_text, self.message_text, self.result_kind = status, message, kind
        self.envelope = envelope

    def _set_details(self, details: Any) -> None:
        if details is None:
            self.details.layout.display = "none"
            self.details_body.value = ""
            return
        self.details.layout.display = None
        self.details.selected_index = None
        self.details_body.value = _pre(_dump(details))


def _mapping(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _badge(text: str, colour: str) -> str:
    return f'<span class="tc-badge" style="background:{colour}">{html.escape(text)}</span>'


def running_html(job: Job) -> str:
    """Say how a running call goes: elapsed time, attempt n of m, a retry's wait, progress."""
    parts = [f"{job.elapsed_ms / 1000:,.1f} s"]
    if job.max_attempts:
        parts.append(f"attempt {max(job.attempt, 1)} of {job.max_attempts}")
    left = job.wait_left_ms
    if left is not None:
        after = f" after {job.last_code}" if job.last_code else ""
        parts.append(f"waiting {left / 1000:,.1f} s before attempt {job.attempt + 1}{after}")
    bar = ""
    if job.progress is not None:
        done, total = job.progress
        parts.append(f"progress {done:g}" + (f" of {total:g}" if total else ""))
        if total:
            width = max(min(100.0 * done / total, 100.0), 0.0)
            bar = (f'<div style="height:6px;background:{COLOURS["panel"]};border-radius:3px;'
                   f'margin-top:3px"><div style="height:6px;width:{width:.1f}%;border-radius:3px;'
                   f'background:{COLOURS["info"]}"></div></div>')
    notes = "".join(f'<div class="tc-muted">{html.escape(n)}</div>'
                    for n in job.notes[-SHOWN_NOTES:])
    line = html.escape(" · ".join(parts))
    return f' <span class="tc-muted tc-running">{line}</span>{bar}{notes}'


def _status_html(success: bool, code: str, metadata: Mapping[str, Any]) -> str:
    badge = _badge("✓ success", GREEN) if success else _badge(
        code, CODE_COLOURS.get(code, RED))
    name = metadata.get("toolName")
    summary = []
    if isinstance(metadata.get("duration"), int | float):
        summary.append(f"{metadata['duration']:,.1f} ms")
    if "attempts" in metadata:
        count = metadata["attempts"]
        summary.append(f"{count} attempt" + ("" if count == 1 else "s"))
    if "total" in metadata:
        summary.append(f"{metadata['total']} tools")
    tool = f" <b>{html.escape(str(name))}</b>" if name else ""
    return f'{badge}{tool} <span style="{MUTED}">{html.escape(" · ".join(summary))}</span>'


def is_records(value: Any) -> bool:
    """Say whether a value is a list of records: a non-empty list of dicts with the same keys."""
    if not isinstance(value, list) or not value or not isinstance(value[0], dict):
        return False
    keys = value[0].keys()
    return all(isinstance(item, dict) and item.keys() == keys for item in value)


def _result_html(result: Any) -> tuple[str, str]:
    if result is None:
        return "none", ""
    if is_content_blocks(result) or is_bytes(result):  # before records: blocks are dicts too
        return "content", content_html(result, _pre)
    if is_records(result):
        return "table", _records_html(result)
    text = _cut(result) if isinstance(result, str) else _dump(result)
    return "json", f"<div><b>result</b></div>{_pre(text)}"


def _records_html(records: list[dict[str, Any]]) -> str:
    import pandas as pd

    shown = records[:MAX_TABLE_ROWS]
    frame = pd.DataFrame.from_records(
        [{k: _cell(v) for k, v in row.items()} for row in shown], columns=list(shown[0]))
    table = frame.to_html(escape=True, index=False, border=0)
    note = (f"showing {len(shown):,} of {len(records):,} rows" if len(records) > len(shown)
            else f"{len(records):,} row" + ("" if len(records) == 1 else "s"))
    table = table.replace('class="dataframe"', 'class="dataframe tc-table"', 1)
    return (f'<div><b>result</b> <span style="{MUTED}">{note}</span></div>'
            f'<div style="max-height:24em;overflow:auto;font-size:12px;{LINE_HEIGHT}">'
            f"{table}</div>")


def _cell(value: Any) -> Any:
    """Nested values become compact JSON so that a cell never shows a Python repr."""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    return "null" if value is None else value


def _metadata_html(metadata: Mapping[str, Any]) -> str:
    keys = [("duration", "duration (ms)"), ("attempts", "attempts"), ("timestamp", "timestamp"),
            ("callId", "call id"), ("toolName", "tool"), ("total", "tools listed")]
    cells = " · ".join(
        f"{label}: <code>{html.escape(str(metadata[key]))}</code>"
        for key, label in keys if key in metadata and metadata[key] is not None)
    trail = metadata.get("trail")
    chart = ""
    if isinstance(trail, list) and trail and all(isinstance(a, Mapping) for a in trail):
        chart = (f'<div style="{MUTED}">trail: {html.escape(trail_text(trail))}</div>'
                 + trail_html(trail) + notes_html(trail))
    return f'<div style="{MUTED}">{cells}</div>{chart}' if cells or chart else ""


def trail_html(attempts: Sequence[Mapping[str, Any]], *, scale_ms: float | None = None) -> str:
    """Draw attempts as one bar: each wait in grey, each attempt coloured by its outcome.

    Each attempt is a mapping with `duration`, `wait` and `code` (as in the envelope's
    `metadata.trail`, or `AttemptRecord`s as dicts); `scale_ms` is the full width's milliseconds
    (default: this bar's own total), so that several bars can share one scale.
    """
    spans = []
    total = sum(_ms(a.get("wait")) + _ms(a.get("duration")) for a in attempts)
    scale = scale_ms if scale_ms and scale_ms > 0 else max(total, 1e-9)
    for item in attempts:
        wait, duration, code = _ms(item.get("wait")), _ms(item.get("duration")), item.get("code")
        if wait > 0:
            spans.append(_segment(wait, scale, GREY, f"wait {wait:,.1f} ms"))
        colour = GREEN if code is None else CODE_COLOURS.get(str(code), RED)
        label = f"attempt {item.get('attempt', '?')}: {code or 'ok'}, {duration:,.1f} ms"
        spans.append(_segment(duration, scale, colour, label))
    return (f'<div style="display:flex;height:12px;width:100%;background:{COLOURS["panel"]};'
            f'border-radius:2px;overflow:hidden">{"".join(spans)}</div>')


def notes_html(attempts: Sequence[Mapping[str, Any]]) -> str:
    """List what the tool reported during its attempts: progress and log messages, in order."""
    lines = []
    for item in attempts:
        for note in item.get("notes") or ():
            if isinstance(note, Mapping):
                lines.append(f"attempt {item.get('attempt', '?')} · {_ms(note.get('at')):,.0f} ms"
                             f" · {note_text(note)}")
    if not lines:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return (f'<div style="{MUTED}">reported by the tool</div>'
            f'<ul style="{MUTED};margin:0;{LINE_HEIGHT}">{items}</ul>')


def note_text(note: Mapping[str, Any]) -> str:
    """Say one note in words: `progress 2/5: copying` or `log (warning): disk almost full`."""
    message = note.get("message")
    if note.get("kind") == "progress":
        total = note.get("total")
        done = f"{note.get('progress')}" + (f"/{total}" if total is not None else "")
        return f"progress {done}" + (f": {message}" if message else "")
    return f"{note.get('kind', 'note')} ({note.get('level', 'info')}): {message or ''}"


def trail_text(attempts: Sequence[Mapping[str, Any]]) -> str:
    """Say the attempts in words: `1: TIMEOUT 50.2 ms → wait 10.0 ms → 2: ok 1.3 ms`."""
    steps = []
    for item in attempts:
        wait = _ms(item.get("wait"))
        if wait > 0:
            steps.append(f"wait {wait:,.1f} ms")
        code = item.get("code") or "ok"
        steps.append(f"{item.get('attempt', '?')}: {code} {_ms(item.get('duration')):,.1f} ms")
    return " → ".join(steps)


def _segment(ms: float, scale: float, colour: str, title: str) -> str:
    width = max(100.0 * ms / scale, 0.5)  # a 0 ms attempt still shows as a sliver
    return (f'<div title="{html.escape(title)}" style="width:{width:.2f}%;background:{colour};'
            f'border-right:1px solid {COLOURS["page"]}"></div>')


def _ms(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and value > 0 else 0.0


def _dump(value: Any) -> str:
    return _cut(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _cut(text: str) -> str:
    if len(text) > MAX_JSON_CHARS:
        return text[:MAX_JSON_CHARS] + f"\n… (cut: {len(text):,} characters in all)"
    return text


def _pre(text: str) -> str:
    # The colours come from the `tc-pre` class (the theme's); the line height is set here too,
    # so that a page without the style is not double-spaced either.
    return f'<pre class="tc-pre" style="{LINE_HEIGHT}">{html.escape(text)}</pre>'
