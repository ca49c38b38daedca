"""HistoryView: past calls and their attempts as tables and a timing chart, with re-run."""

from __future__ import annotations

import copy
import html
import json
import threading
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import traitlets

from toolcaller.core.history import History
from toolcaller.envelope import Envelope
from toolcaller.widgets.result import (
    CODE_COLOURS,
    GREEN,
    GREY,
    LINE_HEIGHT,
    MUTED,
    RED,
    ResultView,
    trail_html,
    trail_text,
)

if TYPE_CHECKING:
    import pandas as pd

    from toolcaller.caller import ToolCaller

__all__ = ["HistoryView", "has_masked_secret"]

DEFAULT_MAX_ROWS = 200
CHART_ROWS = 30  # calls drawn in the timing chart
MASK = "***"  # what the history holds in place of a secret
TABLE_STYLE = f"border-collapse:collapse;font-size:12px;width:100%;{LINE_HEIGHT}"
CELL_STYLE = "padding:2px 6px;border-bottom:1px solid #eaeef2;text-align:left;vertical-align:top"
SCROLL_STYLE = "max-height:20em;overflow:auto"


class HistoryView(W.VBox):  # type: ignore[misc]  # ipywidgets is untyped: VBox is Any
    """The calls of a `History`, newest first, with their attempts, timings and a re-run button.

    The view follows the history by itself (`history.subscribe`), from any thread: a burst of
    calls refreshes it at most every `refresh_interval` seconds. Pick a call in `calls` (or set
    `selected_call`) to see its params and options; with a `caller`, "Re-run" calls it again
    and shows the new envelope in `result_view`. `close()` stops following the history. The
    view carries the CSS class `tc-history`.

    Args:
        history: The history to show (e.g. `caller.history`).
        caller: Needed to re-run calls; without one the button stays disabled.
        max_rows: At most this many calls (the newest) are shown.
        refresh_interval: Minimum seconds between two automatic refreshes (0: refresh on every
            call, in the thread that recorded it).
        result_view: Where re-runs show their envelope; by default a `ResultView` of its own
            at the bottom of this view (pass a shared one to place it elsewhere).
    """

    selected_call = traitlets.Unicode("", help="Id of the call picked for details and re-run.")

    def __init__(self, history: History, *, caller: ToolCaller | None = None,
                 max_rows: int = DEFAULT_MAX_ROWS, refresh_interval: float = 0.25,
                 result_view: ResultView | None = None, **kwargs: Any) -> None:
        picked = kwargs.pop("selected_call", "")  # applied once the widgets exist
        super().__init__(**kwargs)
        self.add_class("tc-history")
        self.history, self.caller = history, caller
        self.max_rows, self.refresh_interval = max_rows, refresh_interval
        self.calls_frame: pd.DataFrame | None = None
        """The calls shown (newest first, filtered, capped), with `History.frame()`'s columns."""
        self.attempts_frame: pd.DataFrame | None = None
        """The attempts of the calls shown (newest call first), as `History.attempts_frame()`."""
        self._lock = threading.RLock()
        self._timer: threading.Timer | None = None
        self._last_refresh = float("-inf")
        self._syncing = False
        self._closed = False
        self.result_view = result_view if result_view is not None else ResultView()
        self._build(embed_result=result_view is None)
        self.failures_only.observe(lambda _: self._safely(self.refresh), names="value")
        self.refresh_button.on_click(lambda _: self._safely(self.refresh))
        self.calls.observe(self._on_pick, names="value")
        self.rerun_button.on_click(self._on_rerun_click)
        self._unsubscribe = history.subscribe(self._on_record)
        self.refresh()
        self.selected_call = picked
        self._update_details()

    def _build(self, *, embed_result: bool) -> None:
        self.failures_only = W.Checkbox(description="failures only", indent=False)
        self.refresh_button = W.Button(description="refresh", icon="refresh",
                                       layout=W.Layout(width="auto"))
        self.summary = W.HTML()
        self.calls_table = W.HTML()
        self.timing = W.HTML()
        self.attempts_table = W.HTML()
        attempts = W.Accordion(children=(self.attempts_table,), selected_index=None)
        attempts.set_title(0, "attempts")
        self.calls = W.Dropdown(description="call", layout=W.Layout(width="60%"))
        self.rerun_button = W.Button(description="Re-run", icon="redo", disabled=True,
                                     button_style="warning")
        self.call_details = W.HTML()
        self.children = (
            W.HBox(children=(self.failures_only, self.refresh_button, self.summary)),
            self.calls_table, self.timing, attempts,
            W.HBox(children=(self.calls, self.rerun_button)), self.call_details,
            *((self.result_view,) if embed_result else ()),
        )

    # -- public -----------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the history again and redraw tables, chart and the list of calls."""
        with self._lock:
            self._cancel_timer()
            calls, attempts, recorded, failed = self._frames()
            self.calls_frame, self.attempts_frame = calls, attempts
            self.summary.value = _summary_html(recorded, failed, len(calls), self.history)
            self.calls_table.value = _calls_html(calls, self.selected_call)
            self.timing.value = _chart_html(calls.head(CHART_ROWS), attempts)
            self.attempts_table.value = _attempts_html(attempts)
            self._set_call_options(calls)

    def rerun(self, call_id: str | None = None) -> Envelope:
        """Call a past call's tool again with its recorded params and options; show the envelope.

        Params in the history are redacted: a secret recorded as `***` is sent as `***`.

        Raises:
            ValueError: There is no caller, or no call with this id (default: `selected_call`).
        """
        call_id = call_id or self.selected_call
        record = self.history.get(call_id) if call_id else None
        if self.caller is None:
            raise ValueError("HistoryView has no caller: build it with HistoryView(history, "
                             "caller=caller) to re-run calls")
        if record is None:
            raise ValueError(f"no call {call_id!r} in the history; pick one in the list")
        self.result_view.show_running(record.tool_name)
        envelope = self.caller.call(
            record.tool_name or "", copy.deepcopy(record.params),
            options=record.options_dict() or None)
        self.result_view.show(envelope)
        new_id = getattr(envelope.metadata, "call_id", None)
        if new_id and self.history.get(new_id) is not None:
            self.selected_call = new_id
        return envelope

    def close(self) -> None:
        """Stop following the history, then close the widget and its children."""
        unsubscribe = getattr(self, "_unsubscribe", None)  # absent if __init__ failed
        if unsubscribe is not None:
            unsubscribe()
            with self._lock:
                self._closed = True
                self._cancel_timer()
        _close_tree(self)

    # -- following the history --------------------------------------------------------------

    def _on_record(self, record: Any) -> None:
        """Refresh now, or once the interval since the last refresh is over (runs in any thread)."""
        with self._lock:
            if self._timer is not None:
                return
            wait = self._last_refresh + self.refresh_interval - time.monotonic()
            if wait <= 0:
                self._auto_refresh()
                return
            self._timer = threading.Timer(wait, self._auto_refresh)
            self._timer.daemon = True
            self._timer.start()

    def _auto_refresh(self) -> None:
        with self._lock:
            if self._closed:  # a timer that fired while the view was closing
                return
            self._last_refresh = time.monotonic()  # only automatic refreshes are rate-limited
            self._safely(self.refresh)

    @property
    def refresh_pending(self) -> bool:
        """Whether new calls wait for a scheduled refresh."""
        return self._timer is not None

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _safely(self, action: Any) -> None:
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - a callback never raises into the UI
            self.summary.value = (f'<span style="color:{RED}">⚠ the history view could not '
                                  f"refresh: {html.escape(f'{type(exc).__name__}: {exc}')}</span>")

    def _frames(self) -> tuple[pd.DataFrame, pd.DataFrame, int, int]:
        # Only the calls shown become DataFrames: a window `History` holding them gives the
        # columns of `History.frame()` at a cost that does not grow with the whole history.
        total, failed = len(self.history), self.history.failure_count()
        picked = self.history.newest(self.max_rows, failures_only=self.failures_only.value)
        window = History(max_calls=max(self.max_rows, 1))
        for record in picked:
            window.add(record)
        return window.frame(), window.attempts_frame(), total, failed

    # -- picking and re-running -------------------------------------------------------------

    def _set_call_options(self, calls: pd.DataFrame) -> None:
        options = [(_call_label(row), row.call_id) for row in _tuples(calls)]
        self._syncing = True
        try:
            with self.calls.hold_sync():
                self.calls.index = None  # else new options select their first entry
                self.calls.options = options
                if self.selected_call in set(calls["call_id"]):
                    self.calls.value = self.selected_call
        finally:
            self._syncing = False

    def _on_pick(self, change: Any) -> None:
        if not self._syncing and change["new"] is not None:
            self.selected_call = change["new"]

    @traitlets.observe("selected_call")
    def _on_selected(self, change: Any) -> None:
        self._safely(self._follow_selection)

    def _follow_selection(self) -> None:
        with self._lock:
            if self.calls_frame is not None:
                self.calls_table.value = _calls_html(self.calls_frame, self.selected_call)
            listed = {value for _, value in self.calls.options}
            self._syncing = True
            try:
                self.calls.value = self.selected_call if self.selected_call in listed else None
            finally:
                self._syncing = False
        self._update_details()

    def _update_details(self) -> None:
        record = self.history.get(self.selected_call) if self.selected_call else None
        self.rerun_button.disabled = self.caller is None or record is None
        self.rerun_button.tooltip = (
            "give HistoryView a caller to re-run calls" if self.caller is None
            else "pick a call first" if record is None
            else f"call {record.tool_name} again with these params")
        self.call_details.value = _details_html(record) if record is not None else ""

    def _on_rerun_click(self, button: Any) -> None:
        try:
            self.rerun()
        except Exception as exc:  # noqa: BLE001 - a callback never raises into the UI
            self.result_view.show_problem(f"re-run failed: {type(exc).__name__}: {exc}")


# -- rendering -----------------------------------------------------------------------------------


def has_masked_secret(value: Any) -> bool:
    """Say whether params recorded in the history hold a masked secret (`***`) anywhere."""
    if isinstance(value, str):
        return MASK in value
    if isinstance(value, Mapping):
        return any(has_masked_secret(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(has_masked_secret(v) for v in value)
    return False


def _tuples(frame: pd.DataFrame) -> Iterator[Any]:
    """The frame's rows as named tuples (typed `Any`: the stubs type each cell as a union)."""
    return iter(frame.itertuples(index=False))


def _name(value: Any) -> str:
    """A tool name for display: "?" when the request had none (None, NaN or "")."""
    return value if isinstance(value, str) and value else "?"


def _status(success: Any, code: Any) -> str:
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
    th = "".join(f'<th style="{CELL_STYLE}">{html.escape(h)}</th>' for h in head)
    body = []
    for i, cells in enumerate(rows):
        shade = ' style="background:#ddf4ff"' if i == selected else ""
        body.append(f"<tr{shade}>" + "".join(f'<td style="{CELL_STYLE}">{c}</td>' for c in cells)
                    + "</tr>")
    return (f'<div style="{SCROLL_STYLE}"><table style="{TABLE_STYLE}"><thead><tr>{th}</tr>'
            f"</thead><tbody>{''.join(body)}</tbody></table></div>")


def _calls_html(calls: pd.DataFrame, selected: str) -> str:
    if calls.empty:
        return f'<div style="{MUTED}">no calls yet</div>'
    rows, chosen = [], None
    for i, r in enumerate(_tuples(calls)):
        chosen = i if r.call_id == selected else chosen
        rows.append([_time(r.timestamp), _short(_name(r.tool_name), 40), _status(r.success, r.code),
                     f"{r.duration_ms:,.1f}", str(r.attempts), _short(r.message, 120),
                     _short(r.params, 80), _short(r.call_id, 40)])
    head = ["time", "tool", "status", "ms", "attempts", "message", "params", "call id"]
    return _table(head, rows, chosen)


def _attempts_html(attempts: pd.DataFrame) -> str:
    if attempts.empty:
        return f'<div style="{MUTED}">no attempts</div>'
    rows = [[_short(r.call_id, 40), _short(r.tool_name, 40), str(r.attempt),
             f"{r.started_ms:,.1f}", f"{r.wait_ms:,.1f}", f"{r.duration_ms:,.1f}",
             _status(r.code is None or r.code != r.code, r.code), _short(r.message, 120)]
            for r in _tuples(attempts)]
    head = ["call id", "tool", "attempt", "started ms", "wait ms", "ms", "outcome", "message"]
    return _table(head, rows)


def _chart_html(calls: pd.DataFrame, attempts: pd.DataFrame) -> str:
    """One row per call: its attempts on a time scale shared by every row."""
    if calls.empty:
        return ""
    by_call: dict[str, list[dict[str, Any]]] = {}
    for a in _tuples(attempts):
        code = a.code if isinstance(a.code, str) else None
        by_call.setdefault(a.call_id, []).append(
            {"attempt": a.attempt, "wait": a.wait_ms, "duration": a.duration_ms, "code": code})
    totals = [sum(x["wait"] + x["duration"] for x in by_call.get(cid, []))
              for cid in calls["call_id"]]
    scale = max(max(totals, default=0.0), 1e-9)
    lines = []
    for r, total in zip(_tuples(calls), totals, strict=True):
        trail = by_call.get(r.call_id, [])
        label = f"{_name(r.tool_name)} · {total:,.1f} ms"
        bar = (trail_html(trail, scale_ms=scale) if trail
               else f'<span style="{MUTED}">no attempt ({_short(r.code, 30)})</span>')
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


def _summary_html(recorded: int, failed: int, shown: int, history: History) -> str:
    text = f"{recorded:,} calls recorded · {failed:,} failed · showing {shown:,}"
    if history.total > recorded:
        text += f" ({history.total - recorded:,} older calls dropped)"
    return f'<span style="{MUTED}">{html.escape(text)}</span>'


def _call_label(row: Any) -> str:
    status = "✓" if row.success else str(row.code)
    return f"{_time(row.timestamp)}  {_name(row.tool_name)}  {status}  ({row.call_id})"


def _details_html(record: Any) -> str:
    params = json.dumps(record.params, ensure_ascii=False, default=str)
    options = json.dumps(record.options_dict(), ensure_ascii=False, default=str)
    warning = ""
    if has_masked_secret(record.params):
        warning = (f'<div style="color:#9a6700">⚠ these params hold a masked secret '
                   f"(<code>{MASK}</code>): the history never keeps secrets, so a re-run sends "
                   f"<code>{MASK}</code> in its place — call the tool from its form to send the "
                   "real value.</div>")
    message = f" — {html.escape(record.message)}" if record.message else ""
    name = html.escape(_name(record.tool_name))
    return (f"<div>{_status(record.success, record.code)} <b>{name}</b>{message}<br>"
            f'<span style="{MUTED}">params <code>{html.escape(params)}</code>'
            f" · options <code>{html.escape(options)}</code></span></div>{warning}")


def _close_tree(widget: W.Widget) -> None:
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    W.Widget.close(widget)
