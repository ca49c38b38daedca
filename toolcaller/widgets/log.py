"""LogView: every call made from the explorer — its exact request and envelope, side by side.

Each entry keeps the JSON request sent (`toolName`, `params`, `options`, what `toolcaller
handle` reads) and the envelope that came back. Copy either with its button, export them all
as JSON Lines, "edit and resend" a request (any JSON, even params the form would refuse), and
compare two envelopes: a re-run or a resend is compared with its original at once.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import ipywidgets as W

from toolcaller.widgets._diff import diff_html
from toolcaller.widgets._runner import Job
from toolcaller.widgets._style import style_widget

__all__ = ["CallLog", "LogEntry", "LogView", "copy_block"]

MAX_ENTRIES = 200
COPY_JS = (
    "(function(b){const t=b.parentElement.parentElement.querySelector('pre').innerText;"
    "const ok=()=>{b.textContent='copied';setTimeout(()=>{b.textContent='copy'},1500)};"
    "if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(t)"
    ".then(ok,()=>{b.textContent='copy failed'})}else{const a=document.createElement('textarea');"
    "a.value=t;document.body.appendChild(a);a.select();document.execCommand('copy');a.remove();"
    "ok()}})(this)")
"""What a copy button runs in the browser (ipywidgets has no clipboard of its own)."""


@dataclass
class LogEntry:
    """One call from the explorer: what was sent and what came back."""

    number: int
    request: dict[str, Any]
    envelope: dict[str, Any] | None
    """The envelope as JSON data; None for a call cancelled (or broken) before it answered."""
    status: str
    """"success", the error code, "cancelled" or "problem"."""
    origin: str
    call_id: str | None = None
    parent: str | None = None
    """The call id of the call this one repeats (a re-run's or a resend's original)."""
    elapsed_ms: float = 0.0

    @property
    def label(self) -> str:
        """The entry as the picker lists it."""
        mark = "✓" if self.status == "success" else self.status
        again = f" ({self.origin} of {self.parent})" if self.parent else ""
        return f"#{self.number} {self.request.get('toolName')} {mark}{again}"

    def to_dict(self) -> dict[str, Any]:
        """Return the entry as one JSON object: request, envelope, status, ids."""
        return {"request": self.request, "envelope": self.envelope, "status": self.status,
                "callId": self.call_id, "repeats": self.parent, "origin": self.origin}


class CallLog:
    """The entries of one explorer, oldest first (at most `MAX_ENTRIES`)."""

    def __init__(self) -> None:
        self.entries: list[LogEntry] = []
        self._count = 0

    def add(self, job: Job) -> LogEntry:
        """Record a job that ended."""
        self._count += 1
        envelope = job.envelope.to_dict() if job.envelope is not None else None
        status = ("cancelled" if job.cancelled else "problem" if envelope is None
                  else "success" if envelope.get("success") else
                  str((envelope.get("error") or {}).get("code", "FAILED")))
        call_id = (envelope.get("metadata") or {}).get("callId") if envelope else None
        entry = LogEntry(self._count, job.request, envelope, status, job.origin, call_id,
                         job.parent, job.elapsed_ms)
        self.entries = [*self.entries, entry][-MAX_ENTRIES:]
        return entry

    def find(self, call_id: str | None) -> LogEntry | None:
        """Return the entry of a call id (None if it is not in the log)."""
        return next((e for e in reversed(self.entries) if call_id and e.call_id == call_id), None)

    def jsonl(self) -> str:
        """Return every entry as JSON Lines (one object a line, oldest first)."""
        return "".join(json.dumps(e.to_dict(), ensure_ascii=False, default=str) + "\n"
                       for e in self.entries)

    def to_jsonl(self, target: str | Path | TextIO) -> int:
        """Write the entries as JSON Lines to a path or an open file; return how many."""
        text = self.jsonl()
        if isinstance(target, str | Path):
            Path(target).write_text(text, encoding="utf-8")
        else:
            target.write(text)
        return len(self.entries)


def copy_block(title: str, value: Any) -> str:
    """Return a titled `<pre>` of `value` as indented JSON, with a copy button."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    button = (f'<button class="jupyter-button tc-copy" title="copy the {html.escape(title)}" '
              f'onclick="{html.escape(COPY_JS)}">copy</button>')
    return (f'<div class="tc-block"><div style="display:flex;align-items:center;gap:8px">'
            f"<b>{html.escape(title)}</b>{button}</div>"
            f'<pre class="tc-pre" style="line-height:1.4">{html.escape(text)}</pre></div>')


class LogView(W.VBox):  # type: ignore[misc]  # ipywidgets is untyped: VBox is Any
    """The request/response log of an explorer (see the module docstring).

    Args:
        log: The entries to show.
        on_resend: Called with an edited request (a dict) and the entry it came from, when
            the user sends it; the explorer runs it.
    """

    def __init__(self, log: CallLog,
                 on_resend: Callable[[dict[str, Any], LogEntry], object] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_class("tc-log")
        self.call_log = log
        self._on_resend = on_resend
        self._syncing = False
        self.picker = W.Dropdown(description="call", style={"description_width": "initial"},
                                 layout=W.Layout(width="auto", flex="1 1 14em"))
        self.export = W.HTML()
        self.blocks = W.HTML()
        self.edit_button = W.Button(description="edit and resend", icon="edit",
                                    layout=W.Layout(width="auto"), disabled=True)
        self.editor = W.Textarea(rows=12, layout=W.Layout(width="100%", display="none"))
        self.editor.add_class("tc-resend-editor")
        self.send_button = W.Button(description="Send", icon="paper-plane",
                                    button_style="primary", layout=W.Layout(width="auto"))
        self.send_button.add_class("tc-send")
        self.close_editor = W.Button(description="close", layout=W.Layout(width="auto"))
        self.editor_bar = W.HBox(children=(self.send_button, self.close_editor),
                                 layout=W.Layout(display="none"))
        self.editor_problem = W.HTML()
        self.compare = W.Dropdown(description="compare with",
                                  style={"description_width": "initial"},
                                  layout=W.Layout(width="auto", flex="1 1 14em"))
        self.timing = W.Checkbox(description="timing fields", indent=False,
                                 layout=W.Layout(width="auto"))
        self.diff = W.HTML()
        self.children = (
            W.HBox(children=(self.picker, self.edit_button, self.export),
                   layout=W.Layout(flex_flow="row wrap", align_items="center")),
            self.blocks, self.editor, self.editor_bar, self.editor_problem,
            W.HBox(children=(self.compare, self.timing),
                   layout=W.Layout(flex_flow="row wrap", align_items="center")),
            self.diff, style_widget())
        self.picker.observe(lambda _: self._show(), names="value")
        self.compare.observe(lambda _: self._show_diff(), names="value")
        self.timing.observe(lambda _: self._show_diff(), names="value")
        self.edit_button.on_click(lambda _: self.open_editor())
        self.send_button.on_click(lambda _: self.send())
        self.close_editor.on_click(lambda _: self._editing(False))
        self.refresh()

    @property
    def entry(self) -> LogEntry | None:
        """The entry picked."""
        return next((e for e in self.call_log.entries if e.number == self.picker.value), None)

    def refresh(self, pick: LogEntry | None = None) -> None:
        """List the entries again (newest first) and pick `pick` (default: the newest)."""
        entries = list(reversed(self.call_log.entries))
        chosen = pick or (entries[0] if entries else None)
        compare_to = self.call_log.find(chosen.parent) if chosen is not None else None
        if chosen is not None and compare_to is None:  # else: the call before, same tool
            compare_to = next((e for e in entries if e.number < chosen.number
                               and e.request.get("toolName") == chosen.request.get("toolName")),
                              None)
        self._syncing = True
        try:
            self.picker.options = [(e.label, e.number) for e in entries]
            self.picker.value = chosen.number if chosen is not None else None
            self.compare.options = [("—", None), *((e.label, e.number) for e in entries)]
            self.compare.value = compare_to.number if compare_to is not None else None
        finally:
            self._syncing = False
        self.export.value = _export_link(self.call_log)
        self._show()

    def open_editor(self) -> None:
        """Put the picked entry's request in the editor, to edit and send."""
        entry = self.entry
        if entry is None:
            return
        self.editor.value = json.dumps(entry.request, indent=2, ensure_ascii=False)
        self.editor_problem.value = ""
        self._editing(True)

    def send(self) -> None:
        """Send the editor's request (it must be a JSON object with a `toolName`)."""
        entry = self.entry
        try:
            request = json.loads(self.editor.value)
            if not isinstance(request, dict) or not isinstance(request.get("toolName"), str):
                raise ValueError('the request must be a JSON object with a "toolName"')
        except ValueError as exc:
            self.editor_problem.value = f'<div class="tc-error">{html.escape(str(exc))}</div>'
            return
        self.editor_problem.value = ""
        if self._on_resend is not None and entry is not None:
            self._on_resend(request, entry)

    def _editing(self, on: bool) -> None:
        self.editor.layout.display = None if on else "none"
        self.editor_bar.layout.display = None if on else "none"

    def _show(self) -> None:
        if self._syncing:
            return
        entry = self.entry
        self.edit_button.disabled = entry is None or self._on_resend is None
        if entry is None:
            self.blocks.value = '<div class="tc-muted">no calls from the explorer yet</div>'
            self.diff.value = ""
            return
        answer = (entry.envelope if entry.envelope is not None
                  else {"status": entry.status, "elapsedMs": round(entry.elapsed_ms, 1)})
        self.blocks.value = (copy_block("request", entry.request)
                             + copy_block("envelope" if entry.envelope else "outcome", answer))
        self._show_diff()

    def _show_diff(self) -> None:
        if self._syncing:
            return
        entry = self.entry
        other = next((e for e in self.call_log.entries if e.number == self.compare.value), None)
        if entry is None or other is None or entry is other:
            self.diff.value = ""
            return
        self.diff.value = diff_html(other.envelope, entry.envelope, timing=self.timing.value,
                                    old_name=f"#{other.number}", new_name=f"#{entry.number}")


def _export_link(log: CallLog) -> str:
    if not log.entries:
        return ""
    data = base64.b64encode(log.jsonl().encode("utf-8")).decode("ascii")
    return (f'<a class="tc-export" download="toolcaller-calls.jsonl" '
            f'href="data:application/x-ndjson;charset=utf-8;base64,{data}">'
            f"export {len(log.entries)} as JSON Lines</a>")
