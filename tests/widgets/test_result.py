"""ResultView: status at a glance, message, details, result as JSON or table, metadata."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from toolcaller import Envelope, ToolCaller
from toolcaller.widgets import ResultView
from toolcaller.widgets.result import (
    GREY,
    MAX_TABLE_ROWS,
    RED,
    is_records,
    trail_html,
    trail_text,
)


@pytest.fixture(scope="module")
def caller() -> Iterator[ToolCaller]:
    with ToolCaller() as made:
        yield made


@pytest.fixture
def view() -> Iterator[ResultView]:
    made = ResultView()
    yield made
    made.close()


def _html(view: ResultView) -> str:
    """Every HTML the view shows, details included."""
    return "".join(w.value for w in (view.status, view.message, view.details_body, view.result,
                                     view.metadata))


def _envelope(result: Any = None, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "success": True, "result": result,
        "metadata": {"duration": 1.5, "attempts": 1, "toolName": "fake.tool",
                     "timestamp": "2026-03-10T12:00:00.000Z", "callId": "abc-1", "trail": []},
    }
    data.update(changes)
    return data


# (id, tool, params, options, expected code)
FAILURES = [
    ("timeout", "demo.slow", {"seconds": 5}, {"timeout": 50, "retries": 0}, "TIMEOUT"),
    ("retry-exhausted", "demo.fail", {}, {"retries": 1, "retryDelay": 10}, "RETRY_EXHAUSTED"),
    ("not-found", "math.addd", {}, {}, "TOOL_NOT_FOUND"),
    ("invalid-params", "math.add", {"a": "x"}, {}, "INVALID_PARAMS"),
    ("execution-error", "demo.fail", {}, {"retries": 0}, "EXECUTION_ERROR"),
    ("parse-error", "demo.not_json", {}, {}, "PARSE_ERROR"),
]


class TestSuccess:
    def test_success_is_green_with_a_tick(self, view: ResultView, caller: ToolCaller) -> None:
        """A success shows a green "✓ success" badge, no message, and the result as JSON."""
        view.show(caller.call("math.add", {"a": 1, "b": 2}))
        assert view.status_text == "success"
        assert "✓ success" in view.status.value
        assert "#1a7f37" in view.status.value
        assert view.message_text == ""
        assert view.result_kind == "json"
        assert "&quot;sum&quot;: 3" in view.result.value
        assert view.details.layout.display == "none"

    def test_metadata_is_shown(self, view: ResultView, caller: ToolCaller) -> None:
        """Duration, attempts, timestamp, call id and the attempt trail are shown."""
        envelope = caller.call("math.add", {"a": 1, "b": 2})
        view.show(envelope)
        meta = envelope.to_dict()["metadata"]
        for key in ("duration", "attempts", "timestamp", "callId"):
            assert str(meta[key]) in view.metadata.value
        assert "trail: 1: ok" in view.metadata.value
        assert "math.add" in view.status.value

    def test_a_dict_shows_like_the_envelope(self, view: ResultView, caller: ToolCaller) -> None:
        """`show` accepts the envelope's dict as well as the `Envelope`."""
        envelope = caller.call("math.add", {"a": 1, "b": 2})
        view.show(envelope)
        first = _html(view)
        view.show(envelope.to_dict())
        assert _html(view) == first
        assert view.envelope == envelope.to_dict()

    def test_a_null_result_is_kind_none(self, view: ResultView) -> None:
        """A success without a result shows no result block."""
        view.show(_envelope(None))
        assert view.result_kind == "none"
        assert view.result.value == ""

    def test_a_text_result_is_shown_as_text(self, view: ResultView, caller: ToolCaller) -> None:
        """A raw text result is shown as is (escaped), not as a quoted JSON string."""
        view.show(caller.call("demo.not_json", {}, format="raw"))
        assert view.status_text == "success"
        assert "&lt;html&gt;&lt;body&gt;not JSON" in view.result.value
        assert "<html>" not in view.result.value

    def test_a_discovery_envelope_is_shown(self, view: ResultView, caller: ToolCaller) -> None:
        """A discovery envelope shows as a success listing how many tools it found."""
        view.show(caller.discover("math"))
        assert view.status_text == "success"
        assert "2 tools" in view.status.value
        assert "math.divide" in view.result.value


class TestFailures:
    @pytest.mark.parametrize(("tool", "params", "options", "code"),
                             [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
    def test_each_error_code_shows_as_a_red_badge(
            self, view: ResultView, caller: ToolCaller, tool: str, params: dict[str, Any],
            options: dict[str, Any], code: str) -> None:
        """A failure shows its code on a coloured badge, its message, and no result."""
        envelope = caller.call(tool, params, **options)
        assert envelope.code == code
        view.show(envelope)
        assert view.status_text == code
        assert code in view.status.value
        assert "✓" not in view.status.value
        assert view.message_text == envelope.error.message  # type: ignore[union-attr]
        assert view.result_kind == "none"
        colour = "#9a6700" if code == "TIMEOUT" else "#cf222e"
        assert colour in view.status.value

    def test_details_are_collapsible_pretty_json(self, view: ResultView,
                                                 caller: ToolCaller) -> None:
        """Error details sit in a collapsed accordion as indented JSON."""
        view.show(caller.call("math.add", {"a": "x"}))
        assert view.details.layout.display is None
        assert view.details.selected_index is None
        assert view.details.get_title(0) == "details"
        assert "&quot;violations&quot;: [" in view.details_body.value
        assert "\n    {" in view.details_body.value

    def test_retries_show_in_the_trail(self, view: ResultView, caller: ToolCaller) -> None:
        """Each attempt and each wait between attempts shows in the trail, in order."""
        view.show(caller.call("demo.fail", {}, retries=1, retryDelay=10))
        assert "1: EXECUTION_ERROR" in view.metadata.value
        assert "wait 10.0 ms → 2: EXECUTION_ERROR" in view.metadata.value
        assert view.metadata.value.count("title=\"attempt") == 2
        assert GREY in view.metadata.value  # the grey wait

    def test_a_new_envelope_replaces_the_old_one(self, view: ResultView,
                                                 caller: ToolCaller) -> None:
        """Showing a success after a failure leaves nothing of the failure."""
        view.show(caller.call("demo.fail", {}, retries=0))
        view.show(caller.call("math.add", {"a": 1, "b": 2}))
        assert view.status_text == "success"
        assert view.message.value == ""
        assert view.details_body.value == ""


class TestTables:
    def test_records_show_as_a_table(self, view: ResultView, caller: ToolCaller) -> None:
        """A list of dicts with the same keys shows as a DataFrame HTML table."""
        view.show(caller.call("data.table", {"rows": 3}))
        assert view.result_kind == "table"
        assert "<table" in view.result.value
        assert "<th>square</th>" in view.result.value
        assert view.result.value.count("<tr>") == 3
        assert "3 rows" in view.result.value

    def test_tables_are_capped(self, view: ResultView, caller: ToolCaller) -> None:
        """More than `MAX_TABLE_ROWS` records show the first ones and say how many in all."""
        view.show(caller.call("data.table", {"rows": 600}))
        assert view.result_kind == "table"
        assert f"showing {MAX_TABLE_ROWS} of 600 rows" in view.result.value
        assert view.result.value.count("<tr>") == MAX_TABLE_ROWS

    def test_nested_cells_show_as_json(self, view: ResultView) -> None:
        """A nested value in a record shows as compact JSON, never as a Python repr."""
        view.show(_envelope([{"a": {"b": [1, None]}, "c": None}]))
        assert '<td>{"b": [1, null]}</td>' in view.result.value
        assert "<td>null</td>" in view.result.value
        assert "None" not in view.result.value

    @pytest.mark.parametrize("value", [
        [], [1, 2], [{"a": 1}, {"b": 2}], [{"a": 1}, 3], {"a": 1}, "text",
    ], ids=["empty", "scalars", "different-keys", "mixed", "object", "string"])
    def test_other_values_are_json(self, view: ResultView, value: Any) -> None:
        """Only a non-empty list of dicts with the same keys is a table; the rest is JSON."""
        assert not is_records(value)
        view.show(_envelope(value))
        assert view.result_kind == "json"


class TestEscaping:
    def test_tool_output_is_escaped(self, view: ResultView, caller: ToolCaller) -> None:
        """A `<script>` in a result is shown as text."""
        view.show(caller.call("text.echo", {"text": "<script>alert(1)</script>"}))
        assert "<script>" not in _html(view)
        assert "&lt;script&gt;" in view.result.value

    def test_every_part_is_escaped(self, view: ResultView) -> None:
        """Message, details, table keys and cells, tool name and call id are all escaped."""
        evil = "<img src=x onerror=alert(1)>"
        view.show({
            "success": False, "result": None,
            "error": {"code": "EXECUTION_ERROR", "message": evil, "details": {evil: evil}},
            "metadata": {"duration": 1, "attempts": 1, "toolName": evil, "callId": evil,
                         "timestamp": evil,
                         "trail": [{"attempt": 1, "code": evil, "duration": 1, "wait": 0}]},
        })
        assert "<img" not in _html(view)
        view.show(_envelope([{evil: evil}]))
        assert view.result_kind == "table"
        assert "<img" not in view.result.value
        assert "&lt;img" in view.result.value


class TestStates:
    def test_running_then_done(self, view: ResultView, caller: ToolCaller) -> None:
        """`show_running` says which tool runs; the envelope replaces it when it arrives."""
        view.show_running("demo.slow")
        assert view.status_text == "running"
        assert "… running" in view.status.value  # no emoji: "⏳" is a box without an emoji font
        assert "demo.slow" in view.status.value
        assert view.envelope is None
        view.show(caller.call("math.add", {"a": 1, "b": 2}))
        assert view.status_text == "success"
        assert "running" not in view.status.value

    def test_clear_empties_the_view(self, view: ResultView, caller: ToolCaller) -> None:
        """`clear()` removes everything and forgets the envelope."""
        view.show(caller.call("demo.fail", {}, retries=0))
        view.clear()
        assert (view.status_text, view.message_text, view.result_kind) == ("", "", "none")
        assert view.envelope is None
        assert _html(view) == ""

    @pytest.mark.parametrize("value", [None, 42, "text", {"no": "envelope"}, ["x"]],
                             ids=["none", "int", "str", "dict", "list"])
    def test_what_is_not_an_envelope_is_shown_as_a_problem(self, view: ResultView,
                                                           value: Any) -> None:
        """Showing something that is not an envelope never raises: it is shown as a problem."""
        view.show(value)
        assert view.status_text == "problem"
        assert "expected an envelope" in view.message_text

    def test_a_malformed_envelope_is_shown_as_well_as_possible(self, view: ResultView) -> None:
        """An envelope with odd parts (no metadata, error not an object) still shows."""
        view.show({"success": False, "error": "boom", "metadata": None})
        assert view.status_text == "FAILED"
        assert view.metadata.value == ""

    def test_the_envelope_trait_can_be_observed(self, view: ResultView,
                                                caller: ToolCaller) -> None:
        """Observers of `envelope` hear each envelope shown, as a dict."""
        heard: list[Any] = []
        view.observe(lambda change: heard.append(change["new"]), "envelope")
        envelope = caller.call("math.add", {"a": 1, "b": 2})
        view.show(envelope)
        assert heard == [envelope.to_dict()]

    def test_show_cancelled(self, view: ResultView) -> None:
        """`show_cancelled` is a grey "cancelled" badge, not a problem: the user asked for it."""
        view.show_cancelled("demo.<slow>", 1234.4)
        assert view.status_text == "cancelled"
        assert "cancelled" in view.status.value
        assert GREY in view.status.value
        assert RED not in view.status.value
        assert "demo.&lt;slow&gt;" in view.status.value
        assert view.message_text == ("call of 'demo.<slow>' cancelled by the user after 1,234 ms: "
                                     "no envelope (the history records it as cancelled)")
        assert (view.envelope, view.result_kind) == (None, "none")

    def test_show_problem(self, view: ResultView) -> None:
        """`show_problem` shows a notebook-side failure, escaped, as a red badge."""
        view.show_problem("callback <broke>")
        assert view.status_text == "problem"
        assert "callback &lt;broke&gt;" in view.message.value


class TestPageStyle:
    def test_css_classes_name_the_view_and_its_lines(self, view: ResultView) -> None:
        """Pages and browser tests find the view, its status and message by stable classes."""
        assert "tc-result" in view._dom_classes
        assert "tc-result-status" in view.status._dom_classes
        assert "tc-result-message" in view.message._dom_classes

    @pytest.mark.parametrize("result", [{"a": [1, 2]}, [{"x": 1}, {"x": 2}]], ids=["json", "table"])
    def test_blocks_of_lines_set_their_line_height(self, view: ResultView, result: Any) -> None:
        """JSON and tables are not double-spaced by the 28 px line height widgets inherit."""
        view.show(_envelope(result, success=False, error={"code": "X", "message": "m",
                                                           "details": {"k": 1}}))
        assert "line-height:1.4" in view.result.value
        assert "line-height:1.4" in view.details_body.value


class TestTrail:
    def test_bars_share_a_scale(self) -> None:
        """With a common scale, a bar's widths are fractions of that scale."""
        bar = trail_html([{"attempt": 1, "duration": 25.0, "wait": 0, "code": None}],
                         scale_ms=100)
        assert "width:25.00%" in bar

    def test_trail_text_lists_waits_and_attempts(self) -> None:
        """The trail in words names each attempt's outcome and each wait."""
        text = trail_text([{"attempt": 1, "duration": 50, "code": "TIMEOUT"},
                           {"attempt": 2, "duration": 1.25, "wait": 10, "code": None}])
        assert text == "1: TIMEOUT 50.0 ms → wait 10.0 ms → 2: ok 1.2 ms"

    def test_an_envelope_model_is_accepted(self, view: ResultView) -> None:
        """An `Envelope` built by hand (not by a call) shows too."""
        envelope = Envelope.model_validate(_envelope({"x": 1}))
        view.show(envelope)
        assert view.status_text == "success"
