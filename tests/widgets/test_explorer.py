"""Explorer: pick a tool, fill its form, call it without blocking, see the result and history."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Iterator
from typing import Any

import pytest

from toolcaller import Envelope, Tool, ToolCaller
from toolcaller.widgets import Explorer, ParamForm


@pytest.fixture
def caller() -> Iterator[ToolCaller]:
    with ToolCaller() as made:
        yield made


@pytest.fixture
def explorer(caller: ToolCaller) -> Iterator[Explorer]:
    made = Explorer(caller, refresh_interval=0)
    yield made
    made.close()


def _form(explorer: Explorer) -> ParamForm:
    assert explorer.form is not None
    return explorer.form


def _fill(explorer: Explorer, tool: str, params: dict[str, Any], **options: Any) -> None:
    """Select a tool and set its form's widgets and the option widgets, as a user does."""
    explorer.select(tool)
    for key, value in params.items():
        widget = _form(explorer).widget_at(f"/{key}")
        assert widget is not None, key
        widget.value = value
    for key, value in options.items():
        explorer.option_controls[key].value = value


async def _click_and_wait(explorer: Explorer) -> Envelope:
    explorer.call_button.click()
    envelope = await explorer.wait()
    assert envelope is not None
    return envelope


def _field_error(form: ParamForm, pointer: str) -> str:
    """The text of the inline error label under the field a pointer names."""
    field = form.field_at(pointer)
    assert field is not None
    label = field._error
    return html.unescape(re.sub(r"<[^>]+>", "\n", label.value)).strip() if label else ""


def _history(caller: ToolCaller) -> list[tuple[str, Any]]:
    frame = caller.history.frame()
    return list(zip(frame["tool_name"], frame["code"].fillna("ok"), strict=True))


class TestSelection:
    def test_nothing_selected_means_no_form_and_no_call(self, explorer: Explorer) -> None:
        """Before a pick there is no form, Call is disabled and says to pick a tool first."""
        assert explorer.form is None
        assert explorer.call_button.disabled
        assert "pick a tool" in explorer.why.value
        assert explorer.options_panel.layout.display == "none"
        assert explorer.cancel_button.layout.display == "none"

    def test_selecting_a_tool_builds_its_form_with_its_description(
        self, explorer: Explorer
    ) -> None:
        """A click in the catalogue builds the tool's form under its name and description."""
        explorer.catalogue.list.value = "text.echo"
        form = _form(explorer)
        assert explorer.catalogue.selected == "text.echo"
        assert form.schema == explorer.caller.registry.get("text.echo").params_schema  # type: ignore[union-attr]
        assert form.value == {"text": ""}
        assert "text.echo" in explorer.tool_header.value
        assert "Echo text back" in explorer.tool_header.value
        assert explorer.catalogue.details.value == ""  # the name and description show once
        assert explorer.form_box.children == (form,)
        assert not explorer.call_button.disabled

    def test_css_classes_name_the_parts(self, explorer: Explorer) -> None:
        """The browser suite finds every part by a stable class, never by titles or text."""
        explorer.select("math.add")
        parts = [(explorer, "tc-explorer"), (explorer.catalogue, "tc-catalog"),
                 (explorer.form, "tc-form"), (explorer.result_view, "tc-result"),
                 (explorer.history_view, "tc-history"), (explorer.call_button, "tc-call"),
                 (explorer.cancel_button, "tc-cancel")]
        assert [name for part, name in parts if name not in part._dom_classes] == []

    def test_options_start_at_the_tools_defaults(self, explorer: Explorer) -> None:
        """The options controls show the selected tool's defaults over the contract's."""
        explorer.select("math.add")
        assert explorer.options == {"timeout": 5000, "retries": 3, "retryDelay": 1000,
                                    "deadline": 5000, "format": "json"}
        explorer.select("math.divide")
        assert explorer.options["retries"] == 0
        explorer.select("demo.fail")
        assert explorer.options["retryDelay"] == 50
        assert explorer.options_panel.selected_index is None  # collapsed

    def test_switching_tools_rebuilds_the_form(self, explorer: Explorer) -> None:
        """Another pick closes the old form and builds the new tool's."""
        _fill(explorer, "math.add", {"a": 1})
        first = _form(explorer)
        explorer.select("text.wordcount")
        second = _form(explorer)
        assert second is not first
        assert second.value == {"text": ""}
        assert first.comm is None  # closed
        explorer.select("")
        assert explorer.form is None
        assert explorer.form_box.children == ()
        assert explorer.call_button.disabled

    def test_explore_returns_an_explorer(self, caller: ToolCaller) -> None:
        """`ToolCaller.explore()` is the one-line way to the explorer."""
        made = caller.explore()
        assert isinstance(made, Explorer)
        made.close()


class TestCalls:
    async def test_a_successful_call(self, explorer: Explorer, caller: ToolCaller) -> None:
        """Call shows running, then the result; the history lists the call."""
        _fill(explorer, "math.add", {"a": 2, "b": 3})
        explorer.call_button.click()
        assert explorer.running
        assert explorer.call_button.disabled
        assert explorer.cancel_button.layout.display is None
        assert explorer.result_view.status_text == "running"
        envelope = await explorer.wait()
        assert envelope is not None
        assert envelope.success
        assert envelope.result == {"sum": 5}
        assert explorer.last_envelope is envelope
        assert explorer.result_view.status_text == "success"
        assert explorer.result_view.envelope["result"] == {"sum": 5}
        assert not explorer.running
        assert not explorer.call_button.disabled
        assert explorer.cancel_button.layout.display == "none"
        assert _history(caller) == [("math.add", "ok")]
        frame = explorer.history_view.calls_frame
        assert frame is not None
        assert list(frame["tool_name"]) == ["math.add"]

    async def test_timeout(self, explorer: Explorer, caller: ToolCaller) -> None:
        """demo.slow with timeout 50 and one retry: TIMEOUT after two attempts."""
        _fill(explorer, "demo.slow", {"seconds": 5}, timeout=50, retries=1, retryDelay=10)
        envelope = await _click_and_wait(explorer)
        assert envelope.code == "TIMEOUT"
        assert envelope.metadata.attempts == 2  # type: ignore[union-attr]
        assert explorer.result_view.status_text == "TIMEOUT"
        assert _history(caller) == [("demo.slow", "TIMEOUT")]
        assert len(caller.history.attempts_frame()) == 2

    async def test_retry_exhausted(self, explorer: Explorer, caller: ToolCaller) -> None:
        """demo.fail with one retry: RETRY_EXHAUSTED, details list both attempts."""
        _fill(explorer, "demo.fail", {}, retries=1, retryDelay=10)
        envelope = await _click_and_wait(explorer)
        assert envelope.code == "RETRY_EXHAUSTED"
        assert envelope.metadata.attempts == 2  # type: ignore[union-attr]
        assert explorer.result_view.status_text == "RETRY_EXHAUSTED"
        assert "this tool always fails" in explorer.result_view.details_body.value
        assert _history(caller) == [("demo.fail", "RETRY_EXHAUSTED")]

    async def test_tool_not_found(self, explorer: Explorer, caller: ToolCaller) -> None:
        """The catalogue lists only existing tools: a tool removed after its pick is not found."""
        _fill(explorer, "text.echo", {"text": "hi"})
        caller.registry.remove("text.echo")
        envelope = await _click_and_wait(explorer)
        assert envelope.code == "TOOL_NOT_FOUND"
        assert envelope.metadata.attempts == 0  # type: ignore[union-attr]
        assert explorer.result_view.status_text == "TOOL_NOT_FOUND"
        assert _history(caller) == [("text.echo", "TOOL_NOT_FOUND")]

    def test_an_invalid_form_disables_call_and_says_why(self, explorer: Explorer,
                                                         caller: ToolCaller) -> None:
        """The form runs the engine's validator: Call stays disabled, saying what to fix."""
        _fill(explorer, "demo.login", {"username": "a", "password": "x"})
        assert not explorer.call_button.disabled
        _form(explorer).widget_at("/username").value = ""  # type: ignore[union-attr]
        assert explorer.call_button.disabled
        assert "expected at least 1 character, got 0" in html.unescape(explorer.why.value)
        assert _field_error(_form(explorer), "/username") == (
            "expected at least 1 character, got 0")  # the user typed there: it shows
        assert _field_error(_form(explorer), "/password") == ""
        explorer.start_call()
        assert explorer.result_view.status_text == "problem"
        assert not explorer.running
        assert _history(caller) == []  # nothing was sent

    def test_the_form_says_what_the_engine_says(self, explorer: Explorer,
                                                caller: ToolCaller) -> None:
        """Word for word: the form's errors are the violations the engine answers."""
        _fill(explorer, "demo.showcase", {"title": "lower", "count": "500"})
        engine = caller.call("demo.showcase", _form(explorer).value)
        assert engine.code == "INVALID_PARAMS"
        said = [(v["pointer"], v["message"]) for v in engine.error.details["violations"]]
        assert _form(explorer).errors == said

    def test_enter_calls_and_an_invalid_enter_shows_every_error(
            self, explorer: Explorer, caller: ToolCaller) -> None:
        """Enter in a text field calls a valid form; on an invalid one it shows all errors."""
        _fill(explorer, "demo.showcase", {})
        form = _form(explorer)
        assert _field_error(form, "/title") == ""  # a blank form is not red
        form._state._on_text_message(form.widget_at("/title"), {"event": "submit"}, [])
        assert _field_error(form, "/title") == '"" does not match the required pattern'
        assert _field_error(form, "/color") == "'color' is required"
        assert not explorer.running
        form.widget_at("/title").value = "Hi"  # type: ignore[union-attr]
        form.widget_at("/color").value = 0  # type: ignore[union-attr]
        form._state._on_text_message(form.widget_at("/title"), {"event": "submit"}, [])
        assert explorer.running or explorer.last_envelope is not None
        explorer.cancel()

    async def test_violations_only_the_engine_finds_are_shown(
        self, explorer: Explorer, caller: ToolCaller
    ) -> None:
        """A violation the form did not see (its schema changed since) appears at its field."""
        _fill(explorer, "text.wordcount", {"text": "one two"})
        old = caller.registry.get("text.wordcount")
        assert old is not None
        stricter = {"type": "object", "required": ["text"],
                    "properties": {"text": {"type": "string", "maxLength": 3}}}
        caller.registry.add(Tool(name=old.name, description=old.description,
                                 params_schema=stricter, kind=old.kind, target=old.target),
                            replace=True)
        envelope = await _click_and_wait(explorer)
        assert envelope.code == "INVALID_PARAMS"
        assert _form(explorer).errors == []
        assert _field_error(_form(explorer), "/text") == "expected at most 3 characters, got 7"

    async def test_bad_options_show_beside_the_options(self, explorer: Explorer) -> None:
        """An option the engine refuses is shown in the options panel, which opens."""
        _fill(explorer, "math.add", {"a": 1, "b": 2}, timeout=0)
        envelope = await _click_and_wait(explorer)
        assert envelope.code == "INVALID_PARAMS"
        assert "timeout: Input should be greater than 0" in explorer.options_errors.value
        assert explorer.options_panel.selected_index == 0
        assert "options" not in _form(explorer).error_banner.value
        explorer.option_controls["timeout"].value = 1000
        assert (await _click_and_wait(explorer)).success
        assert explorer.options_errors.value == ""

    async def test_violations_go_at_the_next_call(self, explorer: Explorer,
                                                  caller: ToolCaller) -> None:
        """Violations the engine found are gone once the next call starts."""
        _fill(explorer, "text.wordcount", {"text": "one two"})
        _form(explorer).show_errors([("/text", "taken")])
        assert _field_error(_form(explorer), "/text") == "taken"
        envelope = await _click_and_wait(explorer)
        assert envelope.success
        assert _field_error(_form(explorer), "/text") == ""

    async def test_execution_error(self, explorer: Explorer, caller: ToolCaller) -> None:
        """math.divide by zero: EXECUTION_ERROR with a readable message."""
        _fill(explorer, "math.divide", {"a": 1, "b": 0})
        envelope = await _click_and_wait(explorer)
        assert envelope.code == "EXECUTION_ERROR"
        assert "division by zero" in explorer.result_view.message_text
        assert _history(caller) == [("math.divide", "EXECUTION_ERROR")]

    async def test_parse_error(self, explorer: Explorer, caller: ToolCaller) -> None:
        """demo.not_json with format json: PARSE_ERROR."""
        _fill(explorer, "demo.not_json", {})
        envelope = await _click_and_wait(explorer)
        assert envelope.code == "PARSE_ERROR"
        assert explorer.result_view.status_text == "PARSE_ERROR"
        assert _history(caller) == [("demo.not_json", "PARSE_ERROR")]
        explorer.option_controls["format"].value = "raw"
        assert (await _click_and_wait(explorer)).success

    async def test_a_second_click_while_running_is_ignored(self, explorer: Explorer,
                                                           caller: ToolCaller) -> None:
        """Only one call runs at a time from the view."""
        _fill(explorer, "demo.slow", {"seconds": 0.02})
        explorer.call_button.click()
        explorer.start_call()
        await explorer.wait()
        assert _history(caller) == [("demo.slow", "ok")]


    async def test_switching_tools_while_a_call_runs(self, explorer: Explorer) -> None:
        """Another pick during a call keeps Call disabled; the old call's violations stay away."""
        _fill(explorer, "text.wordcount", {"text": "one two"})
        tool = explorer.caller.registry.get("text.wordcount")
        assert tool is not None
        stricter = {"type": "object", "required": ["text"],
                    "properties": {"text": {"type": "string", "maxLength": 3}}}
        explorer.caller.registry.add(Tool(name=tool.name, description=tool.description,
                                          params_schema=stricter, kind=tool.kind,
                                          target=tool.target), replace=True)
        explorer.call_button.click()
        explorer.select("math.add")
        assert explorer.call_button.disabled
        envelope = await explorer.wait()
        assert envelope is not None
        assert envelope.code == "INVALID_PARAMS"
        assert explorer.result_view.status_text == "INVALID_PARAMS"
        assert _form(explorer).error_banner.value == ""
        assert explorer.call_button.disabled  # math.add's form is still blank
        assert "'a' is required" in html.unescape(explorer.why.value)

    async def test_picking_another_tool_clears_the_last_result(self, explorer: Explorer) -> None:
        """The last tool's result does not stay beside the next tool's form."""
        _fill(explorer, "math.add", {"a": 1, "b": 2})
        await _click_and_wait(explorer)
        assert explorer.result_view.status_text == "success"
        explorer.select("text.echo")
        assert explorer.result_view.status_text == ""

    async def test_a_typed_whole_number_is_sent_as_an_int(self, explorer: Explorer,
                                                          caller: ToolCaller) -> None:
        """A number box holding a typed `2` sends `{"a": 2}`, which the history shows."""
        _fill(explorer, "math.add", {"a": "2", "b": "0.5"})
        await _click_and_wait(explorer)
        params = caller.history.records()[-1].params
        assert params == {"a": 2, "b": 0.5}
        assert type(params["a"]) is int


class TestLogAndRepeats:
    async def test_each_call_is_logged_with_its_request_and_envelope(
            self, explorer: Explorer) -> None:
        """The log holds the exact request (toolName, params, options) and the envelope."""
        _fill(explorer, "math.add", {"a": 1, "b": 2}, retries=0)
        envelope = await _click_and_wait(explorer)
        [entry] = explorer.call_log.entries
        assert entry.request["toolName"] == "math.add"
        assert entry.request["params"] == {"a": 1, "b": 2}
        assert entry.request["options"]["retries"] == 0
        assert entry.envelope == envelope.to_dict()
        assert explorer.log_view.picker.value == entry.number

    async def test_resend_sends_the_request_as_written(self, explorer: Explorer) -> None:
        """"edit and resend" may send what the form would refuse: the engine answers."""
        _fill(explorer, "math.add", {"a": 1, "b": 2})
        await _click_and_wait(explorer)
        first = explorer.call_log.entries[-1]
        assert explorer.resend({"toolName": "math.add", "params": {"a": "one"}}, first)
        envelope = await explorer.wait()
        assert envelope is not None
        assert envelope.code == "INVALID_PARAMS"
        last = explorer.call_log.entries[-1]
        assert (last.origin, last.parent) == ("resend", first.call_id)
        assert _form(explorer).errors == []  # the form's own params were not touched

    async def test_edit_in_form_loads_a_past_call_and_the_next_call_repeats_it(
            self, explorer: Explorer, caller: ToolCaller) -> None:
        """History → "edit in form": the tool, params and options come back; the next call is a
        re-run of that call, compared with it in the log."""
        _fill(explorer, "text.echo", {"text": "hello"}, retries=1)
        await _click_and_wait(explorer)
        record = caller.history.last()
        assert record is not None
        explorer.select("math.add")
        explorer.history_view.selected_call = record.call_id
        explorer.history_view.edit_button.click()
        assert explorer.catalogue.selected == "text.echo"
        assert _form(explorer).value == {"text": "hello"}
        assert explorer.option_controls["retries"].value == 1
        _form(explorer).widget_at("/text").value = "hello again"  # type: ignore[union-attr]
        await _click_and_wait(explorer)
        last = explorer.call_log.entries[-1]
        assert (last.origin, last.parent) == ("re-run", record.call_id)
        assert "hello again" in explorer.log_view.diff.value

    async def test_a_history_rerun_shares_the_explorers_cancel(self, explorer: Explorer,
                                                               caller: ToolCaller) -> None:
        """Re-run from the history runs through the explorer: its Cancel shows, Call waits."""
        caller.call("demo.slow", {"seconds": 0.01})
        record = caller.history.last()
        assert record is not None
        record.params = {"seconds": 30}
        explorer.history_view.selected_call = record.call_id
        explorer.history_view.rerun_button.click()
        assert explorer.running
        assert explorer.cancel_button.layout.display is None
        assert explorer.history_view.cancel_button.layout.display == "none"
        explorer.cancel()
        await explorer.wait()
        assert explorer.result_view.status_text == "cancelled"


class TestWithoutWidgets:
    def test_a_renderer_without_widgets_gets_a_snapshot(self, explorer: Explorer) -> None:
        """Beside the live widget, the bundle holds static HTML and a one-line text (GitHub
        shows these where it cannot run widgets, instead of `Explorer(children=(…`)."""
        _fill(explorer, "math.add", {"a": 1, "b": 2})
        explorer.call_now()
        bundle = explorer._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in bundle
        assert bundle["text/plain"] == "Explorer(24 tools; math.add; success)"
        assert "<b>math.add</b>" in bundle["text/html"]
        assert "1 calls recorded" in bundle["text/html"]
        assert "children=" not in repr(explorer.history_view)


class TestCancel:
    async def test_cancelling_a_running_call(self, explorer: Explorer, caller: ToolCaller) -> None:
        """Cancel stops demo.slow: no envelope, a grey "cancelled" badge (not a problem), no row."""
        _fill(explorer, "demo.slow", {"seconds": 5})
        explorer.call_button.click()
        await asyncio.sleep(0.02)
        assert explorer.running
        explorer.cancel_button.click()
        assert await explorer.wait() is None
        assert explorer.cancelled
        assert not explorer.running
        assert explorer.result_view.status_text == "cancelled"
        assert "cancelled by the user" in explorer.result_view.message_text
        assert "problem" not in explorer.result_view.status.value
        assert [r.status for r in caller.history] == ["cancelled"]  # recorded, as cancelled
        assert not explorer.call_button.disabled
        assert explorer.cancel_button.layout.display == "none"

    async def test_cancel_with_nothing_running_does_nothing(self, explorer: Explorer) -> None:
        """Cancel without a call under way is harmless."""
        assert explorer.cancel() is False
        assert await explorer.wait() is None


class TestWithoutALoop:
    def test_a_click_without_a_loop_runs_on_the_callers_thread(
        self, explorer: Explorer, caller: ToolCaller
    ) -> None:
        """Where no event loop runs, the call runs on the caller's private loop thread."""
        _fill(explorer, "text.echo", {"text": "hi"})
        explorer.call_button.click()
        envelope = asyncio.run(explorer.wait())
        assert envelope is not None
        assert envelope.result == {"text": "hi", "length": 2}
        assert explorer.result_view.status_text == "success"

    def test_cancel_without_a_loop(self, explorer: Explorer, caller: ToolCaller) -> None:
        """A call on the private loop thread can be cancelled too."""
        _fill(explorer, "demo.slow", {"seconds": 5})
        explorer.call_button.click()
        explorer.cancel_button.click()
        assert asyncio.run(explorer.wait()) is None
        assert explorer.result_view.status_text == "cancelled"
        assert "cancelled by the user" in explorer.result_view.message_text
        assert not explorer.running

    def test_call_now_calls_synchronously(self, explorer: Explorer, caller: ToolCaller) -> None:
        """`call_now()` returns the envelope and shows it, with no loop at all."""
        _fill(explorer, "math.add", {"a": 1, "b": 2})
        envelope = explorer.call_now()
        assert envelope is not None
        assert envelope.result == {"sum": 3}
        assert explorer.result_view.status_text == "success"
        assert not explorer.running


class TestCallbacksNeverRaise:
    def test_call_without_a_tool_shows_a_problem(self, explorer: Explorer) -> None:
        """Calling with nothing selected says so in the result view."""
        explorer.start_call()
        assert explorer.result_view.status_text == "problem"
        assert "no tool is selected" in explorer.result_view.message_text
        assert explorer.call_now() is None
        assert not explorer.running

    def test_an_engine_that_breaks_is_shown(
        self, explorer: Explorer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Even a failure outside the envelope boundary ends as a problem, not a traceback."""
        def broken(*args: Any, **kwargs: Any) -> Envelope:
            raise RuntimeError("engine on fire")

        monkeypatch.setattr(explorer.caller, "call", broken)
        _fill(explorer, "math.add", {"a": 1, "b": 2})
        assert explorer.call_now() is None
        assert "engine on fire" in explorer.result_view.message_text
        assert not explorer.call_button.disabled
