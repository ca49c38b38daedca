"""HistoryView: calls and attempts tables, failures filter, timing chart, auto-refresh, re-run."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from toolcaller import History, ToolCaller
from toolcaller.widgets import HistoryView, ResultView
from toolcaller.widgets.history import has_masked_secret
from toolcaller.widgets.result import AMBER, GREEN, GREY, RED


@pytest.fixture
def caller() -> Iterator[ToolCaller]:
    with ToolCaller() as made:
        yield made


@pytest.fixture
def view(caller: ToolCaller) -> Iterator[HistoryView]:
    made = HistoryView(caller.history, caller=caller, refresh_interval=0)
    yield made
    made.close()


def _three_calls(caller: ToolCaller) -> None:
    """A success, a failure after a retry, and a timeout."""
    caller.call("math.add", {"a": 1, "b": 2})
    caller.call("demo.fail", {}, retries=1, retryDelay=10)
    caller.call("demo.slow", {"seconds": 5}, timeout=50, retries=0)


class TestCalls:
    def test_rows_answering_a_model_show_its_call_id(self, view: HistoryView,
                                                      caller: ToolCaller) -> None:
        """run_tool_calls' rows carry the model's call id; the column shows only then."""
        caller.call("math.add", {"a": 1, "b": 2})
        view.refresh()
        assert "model call id" not in view.calls_table.value
        caller.run_tool_calls({"choices": [{"message": {"role": "assistant", "tool_calls": [
            {"id": "call_7f3a", "type": "function",
             "function": {"name": "math_add", "arguments": '{"a": 3, "b": 4}'}}]}}]})
        view.refresh()
        assert "model call id" in view.calls_table.value
        assert "call_7f3a" in view.calls_table.value

    def test_tables_carry_a_css_class_and_their_line_height(self, view: HistoryView,
                                                            caller: ToolCaller) -> None:
        """The view is `.tc-history`; its rows are not double-spaced by the inherited 28 px."""
        caller.call("math.add", {"a": 1, "b": 2})
        view.refresh()
        assert "tc-history" in view._dom_classes
        assert "line-height:1.4" in view.calls_table.value
        assert "line-height:1.4" in view.attempts_table.value

    def test_an_empty_history_shows_no_rows(self, view: HistoryView) -> None:
        """Before any call the tables are empty and say so."""
        assert view.calls_frame is not None
        assert view.calls_frame.empty
        assert "no calls yet" in view.calls_table.value
        assert "0 calls recorded" in view.summary.value

    def test_calls_show_newest_first(self, view: HistoryView, caller: ToolCaller) -> None:
        """After three calls there are three rows, the newest first, with the frame's columns."""
        _three_calls(caller)
        frame = view.calls_frame
        assert frame is not None
        assert list(frame["tool_name"]) == ["demo.slow", "demo.fail", "math.add"]
        assert list(frame.columns) == list(caller.history.frame().columns)
        assert list(frame["code"].fillna("")) == ["TIMEOUT", "RETRY_EXHAUSTED", ""]
        assert "3 calls recorded · 2 failed · showing 3" in view.summary.value
        table = view.calls_table.value
        assert table.index("demo.slow") < table.index("demo.fail") < table.index("math.add")
        assert "✓ success" in table
        assert "RETRY_EXHAUSTED" in table

    def test_failures_only(self, view: HistoryView, caller: ToolCaller) -> None:
        """Ticking "failures only" hides the successes; unticking brings them back."""
        _three_calls(caller)
        view.failures_only.value = True
        assert view.calls_frame is not None
        assert list(view.calls_frame["tool_name"]) == ["demo.slow", "demo.fail"]
        assert "math.add" not in view.calls_table.value
        assert [value for _, value in view.calls.options] == list(view.calls_frame["call_id"])
        view.failures_only.value = False
        assert len(view.calls_frame) == 3

    def test_rows_are_capped(self, caller: ToolCaller) -> None:
        """At most `max_rows` calls are shown: the newest."""
        for i in range(5):
            caller.call("math.add", {"a": i, "b": 0})
        view = HistoryView(caller.history, max_rows=2)
        assert view.calls_frame is not None
        assert list(view.calls_frame["params"]) == [{"a": 4, "b": 0}, {"a": 3, "b": 0}]
        assert "5 calls recorded · 0 failed · showing 2" in view.summary.value
        view.close()

    def test_requests_without_a_tool_name_show(self, view: HistoryView,
                                               caller: ToolCaller) -> None:
        """A bad request recorded without a tool name shows as "?" and can be picked."""
        caller.handle([1, 2])
        assert view.calls.options[0][0].split()[1] == "?"
        view.calls.value = view.calls.options[0][1]
        assert "<b>?</b>" in view.call_details.value
        assert "nan" not in view.timing.value

    def test_tables_are_escaped(self, view: HistoryView, caller: ToolCaller) -> None:
        """Params and messages holding markup show as text in every table."""
        caller.call("text.echo", {"text": "<script>alert(1)</script>"})
        caller.call("demo.fail", {"message": "<b>bold</b>"}, retries=0)
        for html in (view.calls_table.value, view.attempts_table.value, view.timing.value):
            assert "<script>" not in html
            assert "<b>bold" not in html
        assert "&lt;script&gt;" in view.calls_table.value


class TestAttempts:
    def test_attempts_of_the_shown_calls(self, view: HistoryView, caller: ToolCaller) -> None:
        """Each attempt is a row, grouped by call (newest call first), attempts in order."""
        _three_calls(caller)
        attempts = view.attempts_frame
        assert attempts is not None
        assert list(zip(attempts["tool_name"], attempts["attempt"], strict=True)) == [
            ("demo.slow", 1), ("demo.fail", 1), ("demo.fail", 2), ("math.add", 1)]
        assert list(attempts["wait_ms"]) == [0.0, 0.0, 10.0, 0.0]
        assert list(attempts.columns) == list(caller.history.attempts_frame().columns)
        assert "no result within 50 ms" in view.attempts_table.value

    def test_attempts_follow_the_failures_filter(self, view: HistoryView,
                                                 caller: ToolCaller) -> None:
        """With "failures only", the attempts are those of the failed calls."""
        _three_calls(caller)
        view.failures_only.value = True
        assert view.attempts_frame is not None
        assert "math.add" not in set(view.attempts_frame["tool_name"])

    def test_the_timing_chart_draws_waits_and_outcomes(self, view: HistoryView,
                                                       caller: ToolCaller) -> None:
        """The chart has a bar per call: grey waits, and attempts coloured by outcome."""
        _three_calls(caller)
        chart = view.timing.value
        assert chart.count('title="attempt ') == 4
        assert "attempt 2: EXECUTION_ERROR" in chart
        assert 'title="wait 10.0 ms"' in chart
        assert GREY in chart
        assert GREEN in chart
        assert RED in chart
        assert AMBER in chart  # the timeout
        assert chart.index("demo.slow") < chart.index("math.add")

    def test_a_call_without_attempts_says_so(self, view: HistoryView,
                                             caller: ToolCaller) -> None:
        """A call that never started an attempt (unknown tool) says "no attempt" in the chart."""
        caller.call("no.such.tool", {})
        assert "no attempt (TOOL_NOT_FOUND)" in view.timing.value


class TestAutoRefresh:
    def test_a_new_call_refreshes_the_view(self, view: HistoryView, caller: ToolCaller) -> None:
        """A call recorded after the view was built shows without calling `refresh()`."""
        caller.call("math.add", {"a": 1, "b": 2})
        assert view.calls_frame is not None
        assert len(view.calls_frame) == 1
        caller.call("demo.fail", {}, retries=0)
        assert len(view.calls_frame) == 2

    def test_a_call_in_a_worker_thread_refreshes_the_view(self, view: HistoryView,
                                                          caller: ToolCaller) -> None:
        """Calls finishing in other threads refresh the view too."""
        workers = [threading.Thread(target=caller.call, args=("math.add", {"a": i, "b": 1}))
                   for i in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert view.calls_frame is not None
        assert len(view.calls_frame) == 4

    def test_bursts_are_coalesced(self, caller: ToolCaller) -> None:
        """Within `refresh_interval` of a refresh, new calls wait for one scheduled refresh."""
        view = HistoryView(caller.history, refresh_interval=60)
        caller.call("math.add", {"a": 1, "b": 2})  # the first call refreshes at once
        assert view.calls_frame is not None
        assert len(view.calls_frame) == 1
        caller.call("math.add", {"a": 2, "b": 2})
        caller.call("math.add", {"a": 3, "b": 2})
        assert view.refresh_pending
        assert len(view.calls_frame) == 1
        view.refresh()
        assert not view.refresh_pending
        assert len(view.calls_frame) == 3
        view.close()

    def test_a_scheduled_refresh_happens(self, caller: ToolCaller) -> None:
        """The refresh a burst scheduled runs when the interval is over."""
        view = HistoryView(caller.history, refresh_interval=0.02)
        caller.call("math.add", {"a": 1, "b": 2})
        caller.call("math.add", {"a": 2, "b": 2})
        timer = view._timer
        if timer is not None:  # a slow machine may have let the interval pass already
            timer.join(1)
        assert view.calls_frame is not None
        assert len(view.calls_frame) == 2
        view.close()

    def test_a_failing_refresh_is_shown_not_raised(self, view: HistoryView,
                                                   caller: ToolCaller,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
        """If reading the history breaks, the view says so and the call still succeeds."""

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("frame <exploded>")

        monkeypatch.setattr(caller.history, "newest", broken)
        envelope = caller.call("math.add", {"a": 1, "b": 2})
        assert envelope.success
        assert "could not refresh" in view.summary.value
        assert "frame &lt;exploded&gt;" in view.summary.value

    def test_close_stops_following(self, caller: ToolCaller) -> None:
        """After `close()` new calls no longer reach the view."""
        view = HistoryView(caller.history, refresh_interval=0)
        view.close()
        caller.call("math.add", {"a": 1, "b": 2})
        assert view.calls_frame is not None
        assert view.calls_frame.empty

    def test_a_history_without_caller_can_be_shown(self) -> None:
        """A bare `History` is enough to show calls; re-run is then disabled."""
        view = HistoryView(History(10))
        assert view.rerun_button.disabled
        assert "caller" in view.rerun_button.tooltip
        view.close()


class TestSelection:
    def test_picking_a_call_shows_its_params_and_options(self, view: HistoryView,
                                                         caller: ToolCaller) -> None:
        """Choosing a call in the list sets `selected_call` and shows its params and options."""
        _three_calls(caller)
        fail_id = view.calls_frame["call_id"][1]  # type: ignore[index]
        view.calls.value = fail_id
        assert view.selected_call == fail_id
        assert "RETRY_EXHAUSTED" in view.call_details.value
        assert "&quot;retryDelay&quot;: 10" in view.call_details.value
        assert not view.rerun_button.disabled
        assert '<tr class="tc-picked">' in view.calls_table.value

    def test_setting_selected_call_moves_the_list(self, view: HistoryView,
                                                  caller: ToolCaller) -> None:
        """Setting `selected_call` from code selects that call in the list."""
        _three_calls(caller)
        first = caller.history.records()[0].call_id
        view.selected_call = first
        assert view.calls.value == first

    def test_new_calls_keep_the_selection(self, view: HistoryView, caller: ToolCaller) -> None:
        """A refresh after a new call keeps the picked call picked (no jump to the newest)."""
        caller.call("math.add", {"a": 1, "b": 2})
        picked = view.calls_frame["call_id"][0]  # type: ignore[index]
        view.calls.value = picked
        caller.call("demo.fail", {}, retries=0)
        assert view.selected_call == picked
        assert view.calls.value == picked

    def test_selected_call_can_be_given_when_building(self, caller: ToolCaller) -> None:
        """`HistoryView(history, selected_call=id)` starts with that call picked."""
        caller.call("math.add", {"a": 1, "b": 2})
        call_id = caller.history.records()[0].call_id
        view = HistoryView(caller.history, caller=caller, selected_call=call_id)
        assert view.calls.value == call_id
        assert not view.rerun_button.disabled
        view.close()

    def test_nothing_is_picked_at_first(self, view: HistoryView, caller: ToolCaller) -> None:
        """Without a pick the list shows no call and re-run is disabled."""
        caller.call("math.add", {"a": 1, "b": 2})
        assert view.selected_call == ""
        assert view.calls.value is None
        assert view.rerun_button.disabled


class TestRerun:
    async def test_rerun_click_makes_a_new_call_and_shows_it(self, view: HistoryView,
                                                             caller: ToolCaller) -> None:
        """Clicking "Re-run" calls the tool again with the recorded params and options."""
        caller.call("demo.fail", {"message": "again"}, retries=1, retryDelay=10)
        old = caller.history.last()
        assert old is not None
        view.selected_call = old.call_id
        view.rerun_button.click()
        envelope = await view.wait()
        assert envelope is not None
        new = caller.history.last()
        assert new is not None
        assert new.call_id != old.call_id
        assert (new.tool_name, new.params) == ("demo.fail", {"message": "again"})
        assert len(new.attempts) == 2
        assert new.options_dict() == old.options_dict()
        assert view.result_view.status_text == "RETRY_EXHAUSTED"
        assert view.result_view.envelope is not None
        assert view.result_view.envelope["metadata"]["callId"] == new.call_id
        assert view.selected_call == new.call_id
        assert view.calls_frame is not None
        assert len(view.calls_frame) == 2

    async def test_a_rerun_does_not_block_and_can_be_cancelled(self, view: HistoryView,
                                                               caller: ToolCaller) -> None:
        """Re-run runs as a task: the click returns at once, Cancel shows and stops it."""
        caller.call("demo.slow", {"seconds": 0.01})
        view.selected_call = caller.history.records()[0].call_id
        record = caller.history.last()
        assert record is not None
        record.params = {"seconds": 30}  # the re-run would take 30 s
        started = time.monotonic()
        view.rerun_button.click()
        assert time.monotonic() - started < 1.0
        assert view.rerun_button.disabled
        assert view.cancel_button.layout.display is None
        await asyncio.sleep(0.05)
        assert view.result_view.status_text == "running"
        view.cancel_button.click()
        assert await view.wait() is None
        assert view.result_view.status_text == "cancelled"
        assert caller.history.last().status == "cancelled"  # type: ignore[union-attr]
        assert "cancelled" in view.calls_table.value
        assert "1 cancelled" in view.summary.value
        assert view.cancel_button.layout.display == "none"

    def test_rerun_can_show_in_a_shared_result_view(self, caller: ToolCaller) -> None:
        """Given a `result_view`, re-runs show there and the view does not embed it."""
        shared = ResultView()
        view = HistoryView(caller.history, caller=caller, refresh_interval=0,
                           result_view=shared)
        assert shared not in view.children
        caller.call("math.add", {"a": 1, "b": 1})
        view.rerun(caller.history.records()[0].call_id)
        assert shared.status_text == "success"
        view.close()
        shared.close()

    def test_rerun_returns_the_envelope(self, view: HistoryView, caller: ToolCaller) -> None:
        """`rerun(call_id)` re-runs any recorded call and returns its envelope."""
        caller.call("math.add", {"a": 2, "b": 3})
        envelope = view.rerun(caller.history.records()[0].call_id)
        assert envelope.success
        assert envelope.result == {"sum": 5}
        assert view.result_view.status_text == "success"

    async def test_masked_secrets_warn_but_rerun(self, view: HistoryView,
                                                 caller: ToolCaller) -> None:
        """A call whose params hold a masked secret warns that `***` is sent, and still runs."""
        caller.call("demo.login", {"username": "ann", "password": "open sesame"})
        record = caller.history.last()
        assert record is not None
        assert record.params["password"] == "***"
        view.selected_call = record.call_id
        assert "masked secret" in view.call_details.value
        assert not view.rerun_button.disabled
        view.rerun_button.click()
        await view.wait()
        assert view.result_view.status_text == "EXECUTION_ERROR"  # "***" is the wrong password
        assert "open sesame" not in str(caller.history.last())

    def test_no_warning_without_secrets(self, view: HistoryView, caller: ToolCaller) -> None:
        """Params without a mask show no warning."""
        caller.call("math.add", {"a": 1, "b": 2})
        view.selected_call = caller.history.records()[0].call_id
        assert "masked secret" not in view.call_details.value

    def test_rerun_of_a_failed_lookup_fails_the_same_way(self, view: HistoryView,
                                                         caller: ToolCaller) -> None:
        """A call of an unknown tool re-runs to the same TOOL_NOT_FOUND."""
        caller.call("math.addd", {"a": 1})
        envelope = view.rerun(caller.history.records()[0].call_id)
        assert envelope.code == "TOOL_NOT_FOUND"

    def test_rerun_without_caller_raises_and_the_click_shows_it(self) -> None:
        """Without a caller `rerun` raises; a click shows the problem instead of raising."""
        with ToolCaller() as other:
            other.call("math.add", {"a": 1, "b": 2})
            view = HistoryView(other.history)
            view.selected_call = other.history.records()[0].call_id
            assert view.rerun_button.disabled
            with pytest.raises(ValueError, match="no caller"):
                view.rerun()
            view.rerun_button.click()
            assert view.result_view.status_text == "problem"
            assert "no caller" in view.result_view.message_text
            view.close()

    def test_rerun_of_an_unknown_call_is_shown(self, view: HistoryView) -> None:
        """Re-running with nothing picked shows a problem in the result view."""
        view.rerun_button.click()
        assert view.result_view.status_text == "problem"
        assert "no call" in view.result_view.message_text


class TestHelpers:
    @pytest.mark.parametrize(("params", "masked"), [
        ({"password": "***"}, True), ({"nested": [{"token": "***"}]}, True),
        ({"header": "Bearer ***"}, True), ({"a": 1, "b": "x"}, False), (None, False),
    ], ids=["flat", "nested", "inside-text", "none", "null"])
    def test_has_masked_secret(self, params: Any, masked: bool) -> None:
        """A mask anywhere in the params, even inside a string, counts."""
        assert has_masked_secret(params) is masked
