"""HistoryView: past calls and their attempts as tables and a timing chart, with re-run.

Re-run never blocks the kernel: it goes through a `CallRunner` (the explorer's, when the view
is part of one), shows its progress live in the result view, and can be cancelled. Cancelled
calls are rows too, with the status `cancelled`.
"""

from __future__ import annotations

import copy
import html
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import traitlets

from toolcaller.core.history import CallRecord, History
from toolcaller.envelope import Envelope
from toolcaller.widgets._history_html import (
    attempts_html,
    call_label,
    calls_html,
    chart_html,
    details_html,
    has_masked_secret,
    summary_html,
    tuples,
)
from toolcaller.widgets._runner import CallRunner, Job
from toolcaller.widgets._snapshot import SnapshotMixin
from toolcaller.widgets.result import RED, ResultView

if TYPE_CHECKING:
    import pandas as pd

    from toolcaller.caller import ToolCaller

__all__ = ["HistoryView", "has_masked_secret"]

DEFAULT_MAX_ROWS = 200


class HistoryView(SnapshotMixin, W.VBox):  # type: ignore[misc]  # ipywidgets is untyped
    """The calls of a `History`, newest first, with their attempts, timings and a re-run button.

    The view follows the history by itself (`history.subscribe`), from any thread: a burst of
    calls refreshes it at most every `refresh_interval` seconds. Pick a call in `calls` (or set
    `selected_call`) to see its params and options; with a `caller`, "Re-run" calls it again
    without blocking the kernel (Cancel stops it) and shows the new envelope in `result_view`;
    `await view.wait()` waits for it, `rerun(call_id)` re-runs synchronously from code.
    `close()` stops following the history. The view carries the CSS class `tc-history`.

    Args:
        history: The history to show (e.g. `caller.history`).
        caller: Needed to re-run calls; without one the button stays disabled.
        max_rows: At most this many calls (the newest) are shown.
        refresh_interval: Minimum seconds between two automatic refreshes (0: refresh on every
            call, in the thread that recorded it).
        result_view: Where re-runs show their envelope; by default a `ResultView` of its own
            at the bottom of this view (pass a shared one to place it elsewhere).
        runner: The `CallRunner` re-runs go through (the explorer shares its own, whose Cancel
            button then serves); by default one of the view's own, with a Cancel button.
        on_edit: Given, an "edit in form" button hands the picked call's record to it.
    """

    selected_call = traitlets.Unicode("", help="Id of the call picked for details and re-run.")

    def __init__(self, history: History, *, caller: ToolCaller | None = None,
                 max_rows: int = DEFAULT_MAX_ROWS, refresh_interval: float = 0.25,
                 result_view: ResultView | None = None, runner: CallRunner | None = None,
                 on_edit: Callable[[CallRecord], None] | None = None, **kwargs: Any) -> None:
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
        self._on_edit = on_edit
        self.runner = runner if runner is not None else (
            CallRunner(caller) if caller is not None else None)
        self._own_runner = runner is None
        self.result_view = result_view if result_view is not None else ResultView()
        self._build(embed_result=result_view is None)
        self.failures_only.observe(lambda _: self._safely(self.refresh), names="value")
        self.refresh_button.on_click(lambda _: self._safely(self.refresh))
        self.calls.observe(self._on_pick, names="value")
        self.rerun_button.on_click(self._on_rerun_click)
        self.cancel_button.on_click(lambda _: self.runner.cancel() if self.runner else None)
        self.edit_button.on_click(self._on_edit_click)
        if self.runner is not None:
            self.runner.listen(self._on_job)
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
        self.calls = W.Dropdown(description="call", layout=W.Layout(width="auto", flex="1 1 16em"),
                                style={"description_width": "initial"})
        self.rerun_button = W.Button(description="Re-run", icon="redo", disabled=True,
                                     button_style="warning", layout=W.Layout(width="auto"))
        self.rerun_button.add_class("tc-rerun")
        self.edit_button = W.Button(description="edit in form", icon="edit", disabled=True,
                                    layout=W.Layout(width="auto", display=None if self._on_edit
                                                    else "none"))
        self.cancel_button = W.Button(description="Cancel", icon="stop", button_style="danger",
                                      layout=W.Layout(width="auto", display="none"))
        self.call_details = W.HTML()
        picker = W.HBox(children=(self.calls, self.rerun_button, self.edit_button,
                                  self.cancel_button),
                        layout=W.Layout(flex_flow="row wrap", align_items="center"))
        self.children = (
            W.HBox(children=(self.failures_only, self.refresh_button, self.summary),
                   layout=W.Layout(flex_flow="row wrap", align_items="center")),
            self.calls_table, self.timing, attempts, picker, self.call_details,
            *((self.result_view,) if embed_result else ()),
        )

    # -- public -----------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the history again and redraw tables, chart and the list of calls."""
        with self._lock:
            self._cancel_timer()
            calls, attempts, summary = self._frames()
            self.calls_frame, self.attempts_frame = calls, attempts
            self.summary.value = summary
            self.calls_table.value = calls_html(calls, self.selected_call)
            self.timing.value = chart_html(calls, attempts)
            self.attempts_table.value = attempts_html(attempts)
            self._set_call_options(calls)

    def snapshot_html(self) -> str:
        """Return the summary, the calls table and the timing chart as static HTML."""
        return "".join(str(part.value) for part in (self.summary, self.calls_table, self.timing))

    def snapshot_text(self) -> str:
        """Return the view in one line: how many calls it lists."""
        return f"HistoryView({len(self.history)} calls recorded)"

    def rerun(self, call_id: str | None = None) -> Envelope:
        """Call a past call's tool again with its recorded params and options, synchronously.

        Params in the history are redacted: a secret recorded as `***` is sent as `***`. The
        button does the same without blocking (`start_rerun`).

        Raises:
            ValueError: There is no caller, or no call with this id (default: `selected_call`).
        """
        job = self.runner_for(call_id)[0].run_now(self._job(call_id))
        if job.envelope is None:
            raise RuntimeError(job.problem or "the re-run gave no envelope")
        return job.envelope

    def start_rerun(self, call_id: str | None = None) -> None:
        """Start re-running a past call without blocking (what "Re-run" does); see `wait()`.

        Raises:
            ValueError: There is no caller, or no call with this id (default: `selected_call`).
        """
        runner, _ = self.runner_for(call_id)
        if not runner.start(self._job(call_id)):
            raise ValueError("a call is already running: wait for it or cancel it")

    async def wait(self) -> Envelope | None:
        """Await the re-run under way (if any); return the envelope of the last call that ended."""
        if self.runner is None:
            return None
        job = await self.runner.wait()
        return job.envelope if job is not None else None

    def runner_for(self, call_id: str | None) -> tuple[CallRunner, CallRecord]:
        """Return the runner and the record a re-run of `call_id` needs (see `rerun`)."""
        call_id = call_id or self.selected_call
        record = self.history.get(call_id) if call_id else None
        if self.caller is None or self.runner is None:
            raise ValueError("HistoryView has no caller: build it with HistoryView(history, "
                             "caller=caller) to re-run calls")
        if record is None:
            raise ValueError(f"no call {call_id!r} in the history; pick one in the list")
        return self.runner, record

    def _job(self, call_id: str | None) -> Job:
        _, record = self.runner_for(call_id)
        return Job(record.tool_name or "", copy.deepcopy(record.params),
                   record.options_dict(), origin="re-run", parent=record.call_id)

    def _on_job(self, what: str, job: Job) -> None:
        """Follow the runner: show a re-run's progress and outcome; Cancel while it runs."""
        if what == "done":
            self.cancel_button.layout.display = "none"
            self._update_details()
        if job.origin != "re-run" or not self._own_runner:
            return  # a shared runner's owner (the explorer) shows its calls itself
        if what == "start":
            self.rerun_button.disabled = True
            self.cancel_button.layout.display = None if self._own_runner else "none"
            self.result_view.show_running(job)
        elif what == "tick":
            self.result_view.show_running(job)
        else:
            self._show_outcome(job)

    def _show_outcome(self, job: Job) -> None:
        if job.cancelled:
            self.result_view.show_cancelled(job.name, job.elapsed_ms)
        elif job.envelope is not None:
            self.result_view.show(job.envelope)
            new_id = getattr(job.envelope.metadata, "call_id", None)
            if new_id and self.history.get(new_id) is not None:
                self.selected_call = new_id
        else:
            self.result_view.show_problem(f"re-run failed: {job.problem}")
        self._safely(self.refresh)

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

    def _frames(self) -> tuple[pd.DataFrame, pd.DataFrame, str]:
        # Only the calls shown become DataFrames: a window `History` holding them gives the
        # columns of `History.frame()` at a cost that does not grow with the whole history.
        records = self.history.records()
        failed = sum(1 for r in records if not r.success and not r.cancelled)
        cancelled = sum(1 for r in records if r.cancelled)
        picked = self.history.newest(self.max_rows, failures_only=self.failures_only.value)
        window = History(max_calls=max(self.max_rows, 1))
        for record in picked:
            window.add(record)
        dropped = self.history.total - len(records)
        summary = summary_html(len(records), failed, cancelled, len(picked), dropped)
        return window.frame(), window.attempts_frame(), summary

    # -- picking and re-running -------------------------------------------------------------

    def _set_call_options(self, calls: pd.DataFrame) -> None:
        options = [(call_label(row), row.call_id) for row in tuples(calls)]
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
                self.calls_table.value = calls_html(self.calls_frame, self.selected_call)
            listed = {value for _, value in self.calls.options}
            self._syncing = True
            try:
                self.calls.value = self.selected_call if self.selected_call in listed else None
            finally:
                self._syncing = False
        self._update_details()

    def _update_details(self) -> None:
        record = self.history.get(self.selected_call) if self.selected_call else None
        busy = self.runner is not None and self.runner.running
        self.rerun_button.disabled = self.caller is None or record is None or busy
        self.rerun_button.tooltip = (
            "give HistoryView a caller to re-run calls" if self.caller is None
            else "pick a call first" if record is None
            else "a call is running" if busy
            else f"call {record.tool_name} again with these params")
        self.edit_button.disabled = record is None
        self.call_details.value = details_html(record) if record is not None else ""

    def _on_rerun_click(self, button: Any) -> None:
        try:
            self.start_rerun()
        except Exception as exc:  # noqa: BLE001 - a callback never raises into the UI
            self.result_view.show_problem(f"re-run failed: {type(exc).__name__}: {exc}")

    def _on_edit_click(self, button: Any) -> None:
        record = self.history.get(self.selected_call) if self.selected_call else None
        if record is not None and self._on_edit is not None:
            try:
                self._on_edit(record)
            except Exception as exc:  # noqa: BLE001 - a callback never raises into the UI
                self.result_view.show_problem(f"cannot edit this call: {exc}")


def _close_tree(widget: W.Widget) -> None:
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    W.Widget.close(widget)
