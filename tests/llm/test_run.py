"""Running a response's calls: one reply each, in parallel, on time, named, recorded."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

import pytest

from tests.helpers import LATE_MS
from tests.llm.conftest import SECRET, recorded
from toolcaller import ExecutionError, ToolCaller, UsageError, tool
from toolcaller.export import to_openai, tool_name_map


def chat(*calls: tuple[str, Any]) -> dict[str, Any]:
    """An OpenAI chat message calling `(name, arguments)` pairs, ids `c1`, `c2`, …"""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{i}", "type": "function",
         "function": {"name": name, "arguments": args if isinstance(args, str)
                      else json.dumps(args)}}
        for i, (name, args) in enumerate(calls, 1)]}


def timed_tools(log: list[tuple[str, float, float]], pause_s: float) -> list[Any]:
    async def step(label: str) -> str:
        """Sleep, noting when it ran."""
        started = time.monotonic()
        await asyncio.sleep(pause_s)
        log.append((label, started, time.monotonic()))
        return label

    async def exclusive(label: str) -> str:
        """Sleep alone, noting when it ran."""
        return await step(label)

    return [tool(step, name="work.step"),
            tool(exclusive, name="work.exclusive", metadata={"sequential": True})]


class TestParallel:
    async def test_calls_run_at_once_by_default(self) -> None:
        log: list[tuple[str, float, float]] = []
        caller = ToolCaller(timed_tools(log, 0.2))
        started = time.monotonic()
        replies = await caller.arun_tool_calls(chat(*[("work_step", {"label": str(i)})
                                                      for i in range(8)]))
        elapsed_ms = (time.monotonic() - started) * 1000
        assert replies.ok
        assert elapsed_ms < 200 + LATE_MS
        assert [json.loads(e.to_json())["result"] for e in replies.envelopes] == [
            str(i) for i in range(8)]

    async def test_concurrency_one_runs_them_in_order(self) -> None:
        log: list[tuple[str, float, float]] = []
        caller = ToolCaller(timed_tools(log, 0.02))
        replies = await caller.arun_tool_calls(
            chat(*[("work_step", {"label": str(i)}) for i in range(5)]), concurrency=1)
        assert replies.ok
        assert [label for label, _, _ in log] == ["0", "1", "2", "3", "4"]
        assert all(a[2] <= b[1] for a, b in itertools.pairwise(log))

    async def test_a_sequential_tool_runs_alone(self) -> None:
        """The calls before it end before it starts; the calls after it start after it ends."""
        log: list[tuple[str, float, float]] = []
        caller = ToolCaller(timed_tools(log, 0.05))
        replies = await caller.arun_tool_calls(chat(
            ("work_step", {"label": "a"}), ("work_step", {"label": "b"}),
            ("work_exclusive", {"label": "S"}),
            ("work_step", {"label": "c"}), ("work_step", {"label": "d"})))
        assert replies.ok
        spans = {label: (start, end) for label, start, end in log}
        alone = spans["S"]
        assert max(spans["a"][1], spans["b"][1]) <= alone[0]
        assert alone[1] <= min(spans["c"][0], spans["d"][0])
        assert spans["a"][0] < spans["b"][1]
        assert spans["c"][0] < spans["d"][1]

    async def test_the_sync_form_works_inside_a_running_loop(self) -> None:
        """`run_tool_calls` blocks on the caller's own loop, so a notebook cell can use it."""
        with ToolCaller(timed_tools([], 0.01)) as caller:
            replies = caller.run_tool_calls(chat(("work_step", {"label": "x"})))
        assert replies.ok


class TestDeadline:
    async def test_the_whole_response_answers_within_its_deadline(self) -> None:
        caller = ToolCaller(timed_tools([], 2.0))
        started = time.monotonic()
        replies = await caller.arun_tool_calls(
            chat(*[("work_step", {"label": str(i)}) for i in range(4)]), deadline=300)
        assert (time.monotonic() - started) * 1000 < 300 + LATE_MS
        assert [e.code for e in replies.envelopes] == ["TIMEOUT"] * 4
        assert len(replies.messages) == 4

    async def test_a_call_that_cannot_start_in_time_is_a_timeout(self) -> None:
        """Queued calls get the time left; one with none left is answered without running."""
        caller = ToolCaller(timed_tools([], 0.2))
        started = time.monotonic()
        replies = await caller.arun_tool_calls(
            chat(*[("work_step", {"label": str(i)}) for i in range(4)]),
            deadline=500, concurrency=1)
        assert (time.monotonic() - started) * 1000 < 500 + LATE_MS
        first, last = replies.envelopes[0], replies.envelopes[-1]
        assert first.success
        assert last.code == "TIMEOUT"
        assert last.metadata.attempts == 0
        assert "deadline (500 ms) passed before this call could start" in last.error.message
        assert "TIMEOUT" in [e.code for e in replies.envelopes[1:3]]

    async def test_a_tool_keeps_a_shorter_deadline_of_its_own(self) -> None:
        caller = ToolCaller(timed_tools([], 2.0))
        replies = await caller.arun_tool_calls(
            chat(("work_step", {"label": "x"})), deadline=60_000,
            tool_options={"work_step": {"deadline": 100}})
        assert replies.envelopes[0].code == "TIMEOUT"
        assert caller.history.last().options.deadline == 100


    def test_a_blocked_loop_still_answers_by_the_deadline(self) -> None:
        """An async tool that blocks the loop: the sync form answers TIMEOUT for each call."""
        async def hog() -> None:
            time.sleep(1.0)  # noqa: ASYNC251 - the bug on purpose: the loop stops turning

        with ToolCaller([tool(hog, name="hog")]) as caller:
            started = time.monotonic()
            replies = caller.run_tool_calls(chat(("hog", {}), ("hog", {})), deadline=200)
            elapsed_ms = (time.monotonic() - started) * 1000
        assert elapsed_ms < 200 + LATE_MS
        assert [e.code for e in replies.envelopes] == ["TIMEOUT", "TIMEOUT"]
        assert "blocking the caller's event loop" in replies.messages[0]["content"]
        assert [m["tool_call_id"] for m in replies.messages] == ["c1", "c2"]


class TestOptionsAndHistory:
    async def test_options_apply_to_every_call_and_tool_options_per_tool(self) -> None:
        caller = ToolCaller([tool(lambda x: x, name="echo.one"), tool(lambda x: x, name="two")])
        await caller.arun_tool_calls(chat(("echo_one", {"x": 1}), ("two", {"x": 2})),
                                     options={"retries": 0},
                                     tool_options={"echo.one": {"timeout": 1234}})
        options = {r.tool_name: r.options_dict() for r in caller.history.records()}
        assert options == {"echo.one": {"retries": 0, "timeout": 1234.0},
                           "two": {"retries": 0}}

    async def test_history_rows_carry_the_models_call_id(self) -> None:
        caller = ToolCaller(timed_tools([], 0.0))
        replies = await caller.arun_tool_calls(recorded("openai-chat"), deadline=1000)
        frame = caller.history.frame()
        assert sorted(frame["tool_call_id"]) == sorted(m["tool_call_id"] for m in replies.messages)
        assert set(frame["call_id"]) == {e.metadata.call_id for e in replies.envelopes}
        assert all(r.to_dict()["toolCallId"] for r in caller.history.records())

    async def test_unreadable_arguments_are_kept_for_debugging_secrets_masked(self) -> None:
        caller = ToolCaller([tool(lambda api_key: None, name="vault.open")])
        raw = '{"api_key": "' + SECRET + '", "note": "cut'
        replies = await caller.arun_tool_calls(chat(("vault_open", raw)))
        record = caller.history.last()
        assert record.code == "INVALID_PARAMS"
        assert record.params == '{"api_key": "***", "note": "cut'
        assert SECRET not in json.dumps(replies.envelopes[0].to_dict())

    async def test_events_reach_the_listener(self) -> None:
        events: list[Any] = []
        caller = ToolCaller(timed_tools([], 0.0))
        await caller.arun_tool_calls(chat(("work_step", {"label": "x"})), on_event=events.append)
        assert {e.kind for e in events} >= {"attempt", "attempt_end"}
        assert {e.tool_name for e in events} == {"work.step"}


class TestNames:
    async def test_names_map_back_through_the_export_mapping(self) -> None:
        """`math.add` and `math_add` both exist: each exported name reaches its own tool."""
        tools = [tool(lambda: "dotted", name="math.add"), tool(lambda: "plain", name="math_add")]
        caller = ToolCaller(tools)
        exported = [t["function"]["name"] for t in to_openai(tools)]
        assert exported[1] == "math_add"
        assert exported[0] != "math_add"
        replies = await caller.arun_tool_calls(chat(*[(name, {}) for name in exported]))
        assert [e.result for e in replies.envelopes] == ["dotted", "plain"]
        assert tool_name_map(tools).original(exported[0]) == "math.add"

    async def test_an_invented_name_is_tool_not_found_with_suggestions_in_model_names(self,
                                                                                      ) -> None:
        caller = ToolCaller([tool(lambda: 1, name="math.add"), tool(lambda: 1, name="text.echo")])
        replies = await caller.arun_tool_calls(chat(("math_ad", {}), ("echo", "{broken")))
        assert [e.code for e in replies.envelopes] == ["TOOL_NOT_FOUND", "TOOL_NOT_FOUND"]
        assert replies.envelopes[0].error.details == {"suggestions": ["math.add"]}
        text = replies.messages[0]["content"]
        assert "did you mean 'math_add'?" in text
        assert "math.add" not in text

    async def test_tools_given_define_the_names(self) -> None:
        """`tools=` (the tools offered) defines the mapping, as `to_openai(tools)` did."""
        offered = [tool(lambda: "ok", name="a.b")]
        caller = ToolCaller([*offered, tool(lambda: "other", name="a_b")])
        replies = await caller.arun_tool_calls(chat(("a_b", {})), tools=offered)
        assert replies.envelopes[0].result == "ok"


class TestReplies:
    async def test_a_null_for_an_optional_param_means_absent(self) -> None:
        """What a strict-mode model sends for a param it leaves out: the default applies."""
        def weather(city: str, unit: str = "c", note: str | None = "keep") -> list[Any]:
            return [city, unit, note]

        caller = ToolCaller([tool(weather, name="weather")])
        replies = await caller.arun_tool_calls(
            chat(("weather", {"city": "Oslo", "unit": None, "note": None})))
        assert replies.envelopes[0].result == ["Oslo", "c", None]  # note takes null: kept

    async def test_invalid_params_reply_says_what_to_fix(self) -> None:
        def weather(city: str, days: int = 1) -> str:
            return city

        caller = ToolCaller([tool(weather, name="weather.get")])
        replies = await caller.arun_tool_calls(chat(("weather_get", {"days": "two"})))
        text = replies.messages[0]["content"]
        assert text.startswith("Error: INVALID_PARAMS: params of 'weather_get' are invalid")
        assert text.endswith("; fix the arguments and call again")
        violations = replies.envelopes[0].error.details["violations"]
        assert {v["pointer"] for v in violations} == {"/city", "/days"}  # missing; wrong type

    async def test_on_error_raise_raises_once_every_call_is_answered(self) -> None:
        caller = ToolCaller([tool(lambda: 1, name="ok")])
        with pytest.raises(Exception) as raised:
            await caller.arun_tool_calls(chat(("ok", {}), ("nope", {})), on_error="raise")
        error = raised.value
        assert type(error).__name__ == "ToolNotFoundError"
        assert "'c2'" in str(error)
        assert len(error.replies.messages) == 2  # type: ignore[attr-defined]
        assert error.envelope.code == "TOOL_NOT_FOUND"  # type: ignore[attr-defined]
        assert len(caller.history) == 2

    async def test_even_an_engine_failure_gets_its_reply(self, monkeypatch: Any) -> None:
        caller = ToolCaller([tool(lambda: 1, name="ok")])

        async def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("engine bug")

        monkeypatch.setattr(caller, "acall", broken)
        replies = await caller.arun_tool_calls(chat(("ok", {})))
        assert replies.envelopes[0].code == "EXECUTION_ERROR"
        assert "engine bug" in replies.messages[0]["content"]

    async def test_no_calls_no_replies(self) -> None:
        caller = ToolCaller([])
        for response in ({"role": "assistant", "content": "hi"},
                         {"type": "message", "role": "assistant", "content": []},
                         {"candidates": [{"content": {"role": "model", "parts": []}}]}):
            replies = await caller.arun_tool_calls(response)
            assert (replies.messages, replies.envelopes, replies.ok) == ([], [], True)

    async def test_custom_tool_calls_get_custom_outputs(self) -> None:
        caller = ToolCaller([tool(lambda input: input.upper(), name="shout")])
        response = {"output": [{"type": "custom_tool_call", "call_id": "c", "name": "shout",
                                "input": "hi"}]}
        replies = await caller.arun_tool_calls(response)
        assert replies.messages == [{"type": "custom_tool_call_output", "call_id": "c",
                                     "output": "HI"}]

    async def test_a_gemini_call_without_id_is_answered_by_name(self) -> None:
        caller = ToolCaller([tool(lambda: {"n": 1}, name="count")])
        replies = await caller.arun_tool_calls(
            {"role": "model", "parts": [{"functionCall": {"name": "count"}}]})
        assert replies.messages == [{"role": "user", "parts": [
            {"functionResponse": {"name": "count", "response": {"output": {"n": 1}}}}]}]


@pytest.mark.parametrize(("settings", "message"), [
    ({"concurrency": 0}, "concurrency must be a positive integer"),
    ({"deadline": -1}, "deadline must be a positive number"),
    ({"on_error": "ignore"}, "on_error must be 'reply' or 'raise'"),
], ids=["concurrency", "deadline", "on_error"])
async def test_bad_settings_are_usage_errors(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        await ToolCaller([]).arun_tool_calls(chat(), **settings)


def test_exceptions_of_failed_calls_are_the_codes_own() -> None:
    with ToolCaller([tool(lambda: 1 / 0, name="div", options={"retries": 0})]) as caller:
        replies = caller.run_tool_calls(chat(("div", {})))
    with pytest.raises(ExecutionError, match="ZeroDivisionError"):
        replies.raise_for_error()
