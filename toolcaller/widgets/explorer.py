"""Explorer: a caller's catalogue, form, options, Call/Cancel, result, history and log in one view.

Three panes — catalogue | form | result, history and log — side by side where the width allows,
two columns below 1100 px, stacked below 700 px; the Call bar sticks to the bottom of the view.
Call is enabled only for a form the engine would accept, and says why it is not. A call never
blocks the kernel (see `_runner.CallRunner`): Call, Re-run and "edit and resend" share one
runner, whose Cancel stops them; a cancelled call is a `cancelled` row of the history.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from toolcaller.core.history import CallRecord
from toolcaller.core.tool import Tool
from toolcaller.envelope import Envelope, Options
from toolcaller.errors import ErrorCode
from toolcaller.widgets._badges import tool_card_html
from toolcaller.widgets._runner import CallRunner, Job
from toolcaller.widgets._snapshot import SnapshotMixin
from toolcaller.widgets._style import style_widget
from toolcaller.widgets.catalogue import CatalogTable, required_params
from toolcaller.widgets.form import ParamForm
from toolcaller.widgets.history import HistoryView
from toolcaller.widgets.log import CallLog, LogEntry, LogView
from toolcaller.widgets.result import ResultView

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["Explorer"]

OPTION_POINTER = "/options/"  # violations of the call's options, not of its params
PICK_A_TOOL = '<div class="tc-muted">pick a tool in the catalogue to fill in its params</div>'
SHOWN_REASONS = 3  # problems the disabled Call names (the form shows each beside its field)


class Explorer(SnapshotMixin, W.VBox):  # type: ignore[misc]  # ipywidgets is untyped
    """Browse a caller's tools, fill a tool's form, call it, and look at the result and history.

    Picking a tool in `catalogue` builds `form` (a `ParamForm` of its params) and fills the
    options with the tool's defaults. Call (or Enter in a text field) runs the call without
    blocking; meanwhile Call is disabled and Cancel shows, and the result view follows the
    call (elapsed time, attempt n of m, the wait before a retry, progress messages). The log
    (`call_log`, shown by `log_view`) keeps each call's exact request and envelope. `wait()`
    awaits the call under way; `call_now()` calls synchronously where no event loop runs.
    Callbacks never raise:
    whatever goes wrong is shown in `result_view`. CSS classes for pages and tests:
    `tc-explorer` on the view, `tc-call`, `tc-cancel` and `tc-why` in its Call bar (and the
    parts' own: `tc-catalog`, `tc-form`, `tc-result`, `tc-history`, `tc-log`).

    Args:
        caller: The `ToolCaller` whose tools are listed and called.
        refresh_interval: Minimum seconds between two automatic refreshes of the history view.
    """

    def __init__(self, caller: ToolCaller, *, refresh_interval: float = 0.25,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_class("tc-explorer")
        self.caller = caller
        self.form: ParamForm | None = None
        """The form of the selected tool's params, or None when no tool is selected."""
        self.last_envelope: Envelope | None = None
        """The envelope of the last call; None while it runs, or if it was cancelled or broke."""
        self.cancelled = False
        """Whether the last call was cancelled by the user."""
        self.runner = CallRunner(caller)
        self.call_log = CallLog()
        """Every call made from this view: request and envelope (`call_log.to_jsonl(path)`)."""
        self._edited_from: str | None = None  # the history call loaded into the form
        self._call_form: ParamForm | None = None
        self.catalogue = CatalogTable(caller, rows=12, show_details=False)
        self.tool_header = W.HTML()
        self.form_box = W.VBox()
        self.option_controls = _option_controls()
        """The options' widgets by option name: timeout, retries, retryDelay, deadline, format."""
        self.options_errors = W.HTML()
        self.options_panel = W.Accordion(
            children=(W.VBox(children=(*self.option_controls.values(), self.options_errors)),),
            selected_index=None)
        self.options_panel.set_title(0, "options")
        self.options_panel.layout.display = "none"  # until a tool is picked
        self.call_button = W.Button(description="Call", icon="play", button_style="primary",
                                    disabled=True, tooltip="pick a tool first",
                                    layout=W.Layout(width="auto", min_width="6em"))
        self.cancel_button = W.Button(description="Cancel", icon="stop", button_style="danger",
                                      disabled=True, layout=W.Layout(width="auto",
                                                                     display="none"))
        self.why = W.HTML(PICK_A_TOOL)
        """Why Call is disabled (or what is going on), beside the button."""
        self.call_button.add_class("tc-call")
        self.cancel_button.add_class("tc-cancel")
        self.why.add_class("tc-why")
        self.result_view = ResultView()
        self.history_view = HistoryView(caller.history, caller=caller,
                                        result_view=self.result_view, runner=self.runner,
                                        refresh_interval=refresh_interval,
                                        on_edit=self.edit_call)
        self.log_view = LogView(self.call_log, on_resend=self.resend)
        self.children = (style_widget(), self._panes())
        self.catalogue.observe(self._on_select, names="selected")
        self.call_button.on_click(lambda _: self._guarded(self._start))
        self.cancel_button.on_click(lambda _: self._guarded(self.cancel))
        self.runner.listen(self._on_job)
        if self.catalogue.selected:
            self._guarded(self._show_tool, self.catalogue.tool())

    def _panes(self) -> W.Box:
        actions = W.HBox(children=(self.call_button, self.cancel_button, self.why))
        actions.add_class("tc-actions")
        scroll = W.VBox(children=(self.form_box, self.options_panel))
        scroll.add_class("tc-form-scroll")
        outputs = W.Tab(children=(self.history_view, self.log_view))
        outputs.set_title(0, "history")
        outputs.set_title(1, "log")
        self.outputs = outputs
        panes = [
            ("catalogue", (self.catalogue,)),
            ("form", (self.tool_header, scroll, actions)),
            ("output", (self.result_view, outputs)),
        ]
        boxes = []
        for name, children in panes:
            box = W.VBox(children=children)
            box.add_class("tc-pane")
            box.add_class(f"tc-pane-{name}")
            boxes.append(box)
        grid = W.Box(children=boxes)
        grid.add_class("tc-panes")
        return grid

    # -- public -----------------------------------------------------------------------------

    @property
    def options(self) -> dict[str, Any]:
        """The options the next call sends, from the options controls (request's keys)."""
        return {name: control.value for name, control in self.option_controls.items()}

    @property
    def running(self) -> bool:
        """Whether a call started from this view is under way."""
        return self.runner.running

    def snapshot_html(self) -> str:
        """Return the explorer as static HTML: the tool, the last result, the history."""
        count = html.escape(f"{self.catalogue.matches:,} of {len(self.catalogue._rows):,}")
        return (f"<div><b>toolcaller explorer</b> — {count} tools listed</div>"
                f"{self.tool_header.value}{self.result_view.snapshot_html()}"
                f"{self.history_view.snapshot_html()}")

    def snapshot_text(self) -> str:
        """Return the explorer in one line: tools, the tool picked, the last outcome."""
        picked = self.catalogue.selected or "no tool picked"
        outcome = self.result_view.status_text or "no call yet"
        return f"Explorer({len(self.catalogue._rows)} tools; {picked}; {outcome})"

    def select(self, name: str) -> None:
        """Select a tool by name, as a click in the catalogue does ("" clears)."""
        self.catalogue.select(name)

    def start_call(self) -> None:
        """Start calling the selected tool with the form's params, as the Call button does."""
        self._guarded(self._start)

    def cancel(self) -> bool:
        """Cancel the call under way; return whether there was one to cancel."""
        return self.runner.cancel()

    async def wait(self) -> Envelope | None:
        """Await the call under way (if any) and return `last_envelope` once it is shown.

        Bound the wait with `asyncio.timeout(...)` if need be: the call itself goes on.
        """
        await self.runner.wait()
        return self.last_envelope

    def call_now(self) -> Envelope | None:
        """Call the selected tool synchronously (`caller.call`) and show the envelope."""
        if self.running:
            self.result_view.show_problem("a call is already running: wait for it or cancel it")
            return None
        try:
            self.runner.run_now(self._job())
        except Exception as exc:  # noqa: BLE001 - shown in the result view, never raised
            self.result_view.show_problem(f"the call could not run: {type(exc).__name__}: {exc}")
        return self.last_envelope

    def edit_call(self, record: CallRecord) -> None:
        """Load a past call into the form (its tool, params and options), to change and call."""
        self.select(record.tool_name or "")
        if self.form is None:
            return
        self.form.value = record.params
        options = record.options_dict()
        for name, control in self.option_controls.items():
            if name in options:
                control.value = options[name]
        self._edited_from = record.call_id
        self.why.value = (f'<span class="tc-muted">params of call {html.escape(record.call_id)} '
                          "loaded: change them and Call</span>")

    def resend(self, request: Mapping[str, Any], entry: LogEntry | None = None) -> bool:
        """Send a request as it stands (`toolName`, `params`, `options`): "edit and resend"."""
        options = request.get("options")
        job = Job(str(request.get("toolName")), request.get("params"),
                  dict(options) if isinstance(options, Mapping) else {}, origin="resend",
                  parent=entry.call_id if entry is not None else None)
        started = self.runner.start(job)
        if not started:
            self.result_view.show_problem("a call is already running: wait for it or cancel it")
        return started

    def close(self) -> None:
        """Cancel a running call, stop following the history and close every widget."""
        if hasattr(self, "runner"):  # absent when __init__ failed half way
            self.cancel()
        for name in ("form", "history_view", "catalogue", "result_view", "log_view"):
            part = getattr(self, name, None)
            if part is not None:
                part.close()
        _close_tree(self)

    # -- selecting a tool -------------------------------------------------------------------

    def _on_select(self, change: Any) -> None:
        self._guarded(self._show_tool, self.catalogue.tool())

    def _show_tool(self, tool: Tool | None) -> None:
        old, self.form = self.form, None
        if old is not None:
            old.close()
        self.options_errors.value = ""
        self._edited_from = None
        if not self.running:
            self.result_view.clear()  # the last tool's result is not this one's
        self.options_panel.layout.display = "none" if tool is None else None
        if tool is None:
            self.tool_header.value = ""
            self.form_box.children = ()
        else:
            self.tool_header.value = tool_card_html(tool, required_params(tool))
            self.form = ParamForm(tool.params_schema)
            self.form.observe(lambda _: self._update_call(), names=["params", "valid"])
            self.form.on_submit(self._on_submit)
            self.form_box.children = (self.form,)
            self._fill_options(tool)
        self._update_call()

    def _fill_options(self, tool: Tool) -> None:
        try:
            defaults = Options.model_validate(tool.options).model_dump(by_alias=True)
        except ValueError:  # a tool's bad defaults: the engine will say so when called
            defaults = Options.model_validate({}).model_dump(by_alias=True)
        for name, control in self.option_controls.items():
            control.value = defaults[name]

    # -- calling ----------------------------------------------------------------------------

    def _on_submit(self) -> None:
        form = self.form
        if form is not None and not form.is_valid:
            form.show_all_errors()  # Enter on a form with errors: show them all, call nothing
            self._update_call()
            return
        self._guarded(self._start)

    def _job(self) -> Job:
        tool = self.catalogue.tool()
        if tool is None or self.form is None:
            raise ValueError("no tool is selected: pick one in the catalogue")
        if not self.form.is_valid:  # never send stale or invalid params
            self.form.show_all_errors()
            pointer, message = self.form.blocking_errors[0]
            raise ValueError(f"the form is not valid: {pointer or 'params'}: {message}")
        origin = "re-run" if self._edited_from else "call"
        self._call_form = self.form
        return Job(tool.name, self.form.value, self.options, origin=origin,
                   parent=self._edited_from)

    def _start(self) -> None:
        if self.running:
            return
        if not self.runner.start(self._job()):
            self.result_view.show_problem("a call is already running: wait for it or cancel it")

    def _on_job(self, what: str, job: Job) -> None:
        if what == "start":
            self.last_envelope, self.cancelled = None, False
            self.options_errors.value = ""
            if self.form is not None:
                self.form.show_errors([])  # forget the last call's violations
            self.result_view.show_running(job)
            self._update_call()
        elif what == "tick":
            self.result_view.show_running(job)
        else:
            self._guarded(self._finish, job)

    def _finish(self, job: Job) -> None:
        self.log_view.refresh(pick=self.call_log.add(job))
        if job.cancelled:
            self.last_envelope, self.cancelled = None, True
            self.result_view.show_cancelled(job.name, job.elapsed_ms)
        elif job.envelope is not None:
            self.last_envelope = job.envelope
            self.result_view.show(job.envelope)
            if job.envelope.code is ErrorCode.INVALID_PARAMS and job.origin != "resend":
                self._show_violations(_violations(job.envelope))
        else:
            self.result_view.show_problem(job.problem)
        self._edited_from = None if job.origin == "re-run" else self._edited_from
        self.history_view.refresh()
        self._update_call()

    def _show_violations(self, violations: list[dict[str, str]]) -> None:
        options = [v for v in violations if v["pointer"].startswith(OPTION_POINTER)]
        self.options_errors.value = "".join(
            f'<div class="tc-error">{html.escape(v["pointer"][len(OPTION_POINTER):])}: '
            f'{html.escape(v["message"])}</div>' for v in options)
        if options:
            self.options_panel.selected_index = 0
        form = self.form
        if form is None or form is not self._call_form:
            return  # the user picked another tool meanwhile: these were the old form's
        form.show_errors([v for v in violations if v not in options])

    def _update_call(self) -> None:
        """Enable Call for a valid form only, and say why it is not enabled."""
        running, form = self.running, self.form
        problems = form.blocking_errors if form is not None and not running else []
        self.call_button.disabled = running or form is None or bool(problems)
        self.cancel_button.disabled = not running
        self.cancel_button.layout.display = None if running else "none"
        if running:
            reason = "a call is running: Cancel stops it"
        elif form is None:
            reason = "pick a tool in the catalogue first"
        elif problems:
            reason = _reasons(problems)
        else:
            reason = "call the tool with these params (Enter in a text field calls too)"
        self.call_button.tooltip = reason
        kind = "tc-error" if problems else "tc-muted"
        self.why.value = f'<span class="{kind}">{html.escape(reason)}</span>'

    def _guarded(self, action: Any, *args: Any) -> None:
        try:
            action(*args)
        except Exception as exc:  # noqa: BLE001 - a callback never raises into the UI
            self._update_call()
            self.result_view.show_problem(f"{type(exc).__name__}: {exc}")


def _reasons(problems: list[tuple[str, str]]) -> str:
    shown = [f"{pointer.lstrip('/') or 'params'}: {message}"
             for pointer, message in problems[:SHOWN_REASONS]]
    more = len(problems) - len(shown)
    noun = "problem" if len(problems) == 1 else "problems"
    tail = f"; and {more} more" if more > 0 else ""
    return f"Call is disabled — {len(problems)} {noun}: {'; '.join(shown)}{tail}"


def _option_controls() -> dict[str, W.Widget]:
    # Plain (unbounded) number fields: a bad option reaches the engine, which says what is wrong.
    style = {"description_width": "110px"}
    layout = W.Layout(width="260px")
    return {
        "timeout": W.FloatText(description="timeout (ms)", style=style, layout=layout),
        "retries": W.IntText(description="retries", style=style, layout=layout),
        "retryDelay": W.FloatText(description="retryDelay (ms)", style=style, layout=layout),
        "deadline": W.FloatText(description="deadline (ms)", style=style, layout=layout),
        "format": W.Dropdown(description="format", options=["json", "raw"], style=style,
                             layout=layout),
    }


def _violations(envelope: Envelope) -> list[dict[str, str]]:
    details = envelope.error.details if envelope.error is not None else None
    found = details.get("violations") if isinstance(details, Mapping) else None
    items: Iterable[Any] = found if isinstance(found, list) else ()
    return [{"pointer": str(v.get("pointer", "")), "message": str(v.get("message", ""))}
            for v in items if isinstance(v, Mapping)]


def _close_tree(widget: W.Widget) -> None:
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    W.Widget.close(widget)
