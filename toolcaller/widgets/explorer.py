"""Explorer: a caller's catalogue, form, options, Call/Cancel, result and history in one view.

A click on Call never blocks the kernel: on a running event loop (ipykernel runs one) the call
is a task on that loop, elsewhere it runs on the caller's private loop thread. Cancel cancels
that task; the engine then returns no envelope and records no history row, and the result view
says the call was cancelled by the user.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import html
import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from toolcaller.core.tool import Tool
from toolcaller.envelope import Envelope, Options
from toolcaller.errors import ErrorCode
from toolcaller.widgets.catalogue import CatalogTable
from toolcaller.widgets.form import ParamForm
from toolcaller.widgets.history import HistoryView
from toolcaller.widgets.result import MUTED, RED, ResultView

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["Explorer"]

CallFuture = asyncio.Future[Envelope] | concurrent.futures.Future[Envelope]
OPTION_POINTER = "/options/"  # violations of the call's options, not of its params
PICK_A_TOOL = f'<div style="{MUTED}">pick a tool in the catalogue to fill in its params</div>'


class Explorer(W.VBox):  # type: ignore[misc]  # ipywidgets is untyped: VBox is Any
    """Browse a caller's tools, fill a tool's form, call it, and look at the result and history.

    Picking a tool in `catalogue` builds `form` (a `ParamForm` of its params) and fills the
    options with the tool's defaults. Call runs the call without blocking (see the module
    docstring); meanwhile Call is disabled and Cancel shows. An `INVALID_PARAMS` envelope's
    violations appear beside the form fields (or options) they name. `wait()` awaits the call
    under way; `call_now()` calls synchronously where no event loop runs. Callbacks never raise:
    whatever goes wrong is shown in `result_view`. CSS classes for pages and tests:
    `tc-explorer` on the view, `tc-call` and `tc-cancel` on its buttons (and the parts' own:
    `tc-catalog`, `tc-form`, `tc-result`, `tc-history`).

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
        self._task: CallFuture | None = None
        self._call_name = ""
        self._call_form: ParamForm | None = None
        self._started = 0.0
        self._lock = threading.Lock()
        self.catalogue = CatalogTable(caller, rows=8, show_details=False)  # see tool_header
        self.tool_header = W.HTML(PICK_A_TOOL)
        self.form_box = W.VBox()
        self.option_controls = _option_controls()
        """The options' widgets by option name: timeout, retries, retryDelay, deadline, format."""
        self.options_errors = W.HTML()
        self.options_panel = W.Accordion(
            children=(W.VBox(children=(*self.option_controls.values(), self.options_errors)),),
            selected_index=None)
        self.options_panel.set_title(0, "options")
        self.call_button = W.Button(description="Call", icon="play", button_style="primary",
                                    disabled=True, tooltip="pick a tool first")
        self.cancel_button = W.Button(description="Cancel", icon="stop", button_style="danger",
                                      disabled=True, layout=W.Layout(display="none"))
        self.call_button.add_class("tc-call")
        self.cancel_button.add_class("tc-cancel")
        self.result_view = ResultView()
        self.history_view = HistoryView(caller.history, caller=caller,
                                        result_view=self.result_view,
                                        refresh_interval=refresh_interval)
        self.children = (
            self.catalogue, self.tool_header, self.form_box, self.options_panel,
            W.HBox(children=(self.call_button, self.cancel_button)), self.result_view,
            _titled("history", self.history_view),
        )
        self.catalogue.observe(self._on_select, names="selected")
        self.call_button.on_click(self._on_call_click)
        self.cancel_button.on_click(self._on_cancel_click)
        if self.catalogue.selected:
            self._guarded(self._show_tool, self.catalogue.tool())

    # -- public -----------------------------------------------------------------------------

    @property
    def options(self) -> dict[str, Any]:
        """The options the next call sends, from the options controls (request's keys)."""
        return {name: control.value for name, control in self.option_controls.items()}

    @property
    def running(self) -> bool:
        """Whether a call started from this view is under way."""
        return self._task is not None

    def select(self, name: str) -> None:
        """Select a tool by name, as a click in the catalogue does ("" clears)."""
        self.catalogue.select(name)

    def start_call(self) -> None:
        """Start calling the selected tool with the form's params, as the Call button does."""
        self._guarded(self._start)

    def cancel(self) -> bool:
        """Cancel the call under way; return whether there was one to cancel."""
        task = self._task
        return task is not None and task.cancel()

    async def wait(self) -> Envelope | None:
        """Await the call under way (if any) and return `last_envelope` once it is shown.

        Bound the wait with `asyncio.timeout(...)` if need be: the call itself goes on.
        """
        task = self._task
        if task is not None:
            waited = task if isinstance(task, asyncio.Future) else asyncio.wrap_future(task)
            await asyncio.wait([waited])
            self._finish(task)
        return self.last_envelope

    def call_now(self) -> Envelope | None:
        """Call the selected tool synchronously (`caller.call`) and show the envelope."""
        if self.running:
            self.result_view.show_problem("a call is already running: wait for it or cancel it")
            return None
        try:
            name, params, options = self._request()
            self._begin(name)
            self._show_envelope(self.caller.call(name, params, options))
        except Exception as exc:  # noqa: BLE001 - shown in the result view, never raised
            self.result_view.show_problem(f"the call could not run: {type(exc).__name__}: {exc}")
        finally:
            self._set_running(False)
        return self.last_envelope

    def close(self) -> None:
        """Cancel a running call, stop following the history and close every widget."""
        self.cancel()
        for part in (self.form, self.history_view, self.catalogue, self.result_view):
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
        if tool is None:
            self.tool_header.value = PICK_A_TOOL
            self.form_box.children = ()
        else:
            self.tool_header.value = _header_html(tool)
            self.form = ParamForm(tool.params_schema)
            self.form_box.children = (self.form,)
            self._fill_options(tool)
        self._set_running(self.running)

    def _fill_options(self, tool: Tool) -> None:
        try:
            defaults = Options.model_validate(tool.options).model_dump(by_alias=True)
        except ValueError:  # a tool's bad defaults: the engine will say so when called
            defaults = Options.model_validate({}).model_dump(by_alias=True)
        for name, control in self.option_controls.items():
            control.value = defaults[name]

    # -- calling ----------------------------------------------------------------------------

    def _on_call_click(self, button: Any) -> None:
        self._guarded(self._start)

    def _on_cancel_click(self, button: Any) -> None:
        self._guarded(self.cancel)

    def _request(self) -> tuple[str, Any, dict[str, Any]]:
        tool = self.catalogue.tool()
        if tool is None or self.form is None:
            raise ValueError("no tool is selected: pick one in the catalogue")
        return tool.name, self.form.value, self.options

    def _begin(self, name: str) -> None:
        self._call_name, self._call_form, self._started = name, self.form, time.monotonic()
        self.last_envelope, self.cancelled = None, False
        self.options_errors.value = ""
        if self.form is not None:
            self.form.show_errors([])  # forget the last call's violations
        self.result_view.show_running(name)
        self._set_running(True)

    def _start(self) -> None:
        if self.running:
            return
        name, params, options = self._request()
        self._begin(name)
        coro = self.caller.acall(name, params, options)
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        task: CallFuture
        if loop is not None and not self.caller.portal.in_loop_thread():
            task = asyncio.ensure_future(coro)  # async tools run on the kernel's loop
        else:
            task = self.caller.portal.submit(coro)
        with self._lock:
            self._task = task
        task.add_done_callback(self._finish)

    def _finish(self, task: CallFuture) -> None:
        """Show how a call ended (once, whoever gets here first: the callback or `wait`)."""
        with self._lock:
            if self._task is not task:
                return
            self._task = None
        try:
            if task.cancelled():
                self._show_cancelled()
            else:
                self._show_envelope(task.result())
        except Exception as exc:  # noqa: BLE001 - a callback never raises into the UI
            self.result_view.show_problem(f"the call failed: {type(exc).__name__}: {exc}")
        finally:
            self._set_running(False)

    def _show_cancelled(self) -> None:
        self.last_envelope, self.cancelled = None, True
        self.result_view.show_cancelled(self._call_name,
                                        (time.monotonic() - self._started) * 1000)

    def _show_envelope(self, envelope: Envelope) -> None:
        self.last_envelope = envelope
        self.result_view.show(envelope)
        if envelope.code is ErrorCode.INVALID_PARAMS:
            self._show_violations(_violations(envelope))
        try:
            self.history_view.refresh()
        except Exception as exc:  # noqa: BLE001 - a callback never raises into the UI
            self.history_view.summary.value = (
                f'<span style="color:{RED}">⚠ cannot refresh the history: '
                f"{html.escape(f'{type(exc).__name__}: {exc}')}</span>")

    def _show_violations(self, violations: list[dict[str, str]]) -> None:
        options = [v for v in violations if v["pointer"].startswith(OPTION_POINTER)]
        self.options_errors.value = "<br>".join(
            f'<span style="color:{RED}">{html.escape(v["pointer"][len(OPTION_POINTER):])}: '
            f'{html.escape(v["message"])}</span>' for v in options)
        if options:
            self.options_panel.selected_index = 0
        form = self.form
        if form is None or form is not self._call_form:
            return  # the user picked another tool meanwhile: these were the old form's
        form.show_errors([v for v in violations if v not in options])

    def _set_running(self, running: bool) -> None:
        self.call_button.disabled = running or self.form is None
        self.call_button.tooltip = ("a call is running" if running else "pick a tool first"
                                    if self.form is None else "call the tool with these params")
        self.cancel_button.disabled = not running
        self.cancel_button.layout.display = None if running else "none"

    def _guarded(self, action: Any, *args: Any) -> None:
        try:
            action(*args)
        except Exception as exc:  # noqa: BLE001 - a callback never raises into the UI
            self._set_running(self.running)
            self.result_view.show_problem(f"{type(exc).__name__}: {exc}")


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


def _header_html(tool: Tool) -> str:
    description = tool.description if isinstance(tool.description, str) else ""
    return (f"<div><b>{html.escape(tool.name)}</b> — {html.escape(description)}</div>")


def _titled(title: str, widget: W.Widget) -> W.Accordion:
    panel = W.Accordion(children=(widget,), selected_index=0)
    panel.set_title(0, title)
    return panel


def _close_tree(widget: W.Widget) -> None:
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    W.Widget.close(widget)
