"""SPEC §2 rules 6–11, one class per rule (rules 1–5: test_rules.py)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, ClassVar
from uuid import UUID

import pytest
from pydantic import BaseModel

from tests.helpers import (
    FakeClock,
    JumpyWall,
    all_strings,
    check_envelope,
    code_of,
    fake_caller,
    make_tool,
    sequence_tool,
)
from toolcaller import ToolCaller
from toolcaller.adapters.base import TextOutput


class TestRule6FinalCode:
    @pytest.mark.parametrize(
        ("steps", "retries", "code", "attempts"), [
            (("fail", "hang"), 1, "TIMEOUT", 2),
            (("hang", "fail"), 1, "RETRY_EXHAUSTED", 2),
            (("fail",), 2, "RETRY_EXHAUSTED", 3),
            (("fail",), 0, "EXECUTION_ERROR", 1),
            (("permanent",), 3, "EXECUTION_ERROR", 1),
            (("hang",), 0, "TIMEOUT", 1),
            (("fail", "permanent"), 3, "RETRY_EXHAUSTED", 2),
        ],
        ids=["last-timed-out", "last-failed", "all-failed", "one-attempt", "permanent",
             "one-timeout", "permanent-after-retry"],
    )
    def test_final_code(self, clock: FakeClock, steps: tuple[str, ...], retries: int,
                        code: str, attempts: int) -> None:
        """The final code follows the last attempt and the number of attempts (rule 6)."""
        fn, calls = sequence_tool(*steps, clock=clock)
        caller = fake_caller([make_tool(fn, "t")], clock)
        data = caller.handle({"toolName": "t", "options": {"retries": retries, "timeout": 30}})
        assert code_of(data) == code
        assert data["metadata"]["attempts"] == attempts == len(calls)

    def test_details_list_each_attempt(self, clock: FakeClock) -> None:
        """Details list each attempt's code, message and duration."""
        fn, _ = sequence_tool("fail", "hang", "fail", clock=clock)
        caller = fake_caller([make_tool(fn, "t")], clock)
        data = caller.handle({"toolName": "t", "options": {"retries": 2, "timeout": 30}})
        assert code_of(data) == "RETRY_EXHAUSTED"
        entries = data["error"]["details"]["attempts"]
        assert [e["code"] for e in entries] == ["EXECUTION_ERROR", "TIMEOUT", "EXECUTION_ERROR"]
        assert entries[0]["message"] == "fail 1"
        assert entries[2]["message"] == "fail 3"
        assert all(isinstance(e["duration"], float) for e in entries)


class _Model(BaseModel):
    x: int
    when: date


@dataclass
class _Point:
    x: int
    y: float


RESULTS = [
    ("pydantic", lambda: _Model(x=1, when=date(2024, 1, 2)), {"x": 1, "when": "2024-01-02"}),
    ("dataclass", lambda: _Point(1, 2.5), {"x": 1, "y": 2.5}),
    ("datetime", lambda: datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), "2024-01-02T03:04:05Z"),
    ("decimal", lambda: Decimal("1.25"), "1.25"),
    ("uuid", lambda: UUID(int=1), "00000000-0000-0000-0000-000000000001"),
    ("tuple", lambda: (1, "a", None), [1, "a", None]),
    ("set", lambda: {3, 1, 2}, [1, 2, 3]),
    ("bytes", lambda: b"\x00\xff", "AP8="),
    ("nested", lambda: {"p": [_Point(0, 0.0)], "s": {(1, 2)}}, {"p": [{"x": 0, "y": 0.0}],
                                                                "s": [[1, 2]]}),
]


class TestRule7Results:
    @pytest.mark.parametrize(("make", "expected"), [r[1:] for r in RESULTS],
                             ids=[r[0] for r in RESULTS])
    def test_python_values_become_json(self, make: Callable[[], Any], expected: Any) -> None:
        """With format json, Python values become JSON-compatible data."""
        data = ToolCaller(tools=[make_tool(make, "t")]).handle({"toolName": "t"})
        assert data["success"] is True, data
        assert data["result"] == expected
        json.dumps(data, allow_nan=False)

    @pytest.mark.parametrize(
        ("output", "expected"), [
            (TextOutput('{"a": 1}'), '{"a": 1}'),
            (TextOutput("<html>"), "<html>"),
            (TextOutput(b"\x00\xff", "image/png"), {"mediaType": "image/png", "base64": "AP8="}),
            (TextOutput(b"\xfb\xff"), {"mediaType": "application/octet-stream",
                                         "base64": "+/8="}),
        ],
        ids=["json-text", "html", "bytes", "bytes-standard-base64"],
    )
    def test_raw_is_untouched(self, output: TextOutput, expected: Any) -> None:
        """With format raw text is untouched; bytes are standard base64 with their media type."""
        caller = ToolCaller(tools=[make_tool(lambda: output, "t")])
        data = caller.handle({"toolName": "t", "options": {"format": "raw"}})
        assert data["success"] is True
        assert json.loads(json.dumps(data))["result"] == expected

    def test_raw_unserializable_value_is_a_parse_error(self) -> None:
        """With format raw a value JSON cannot hold gives PARSE_ERROR after 1 attempt."""
        caller = ToolCaller(tools=[make_tool(lambda: object(), "t")])
        data = check_envelope(caller.handle({"toolName": "t", "options": {"format": "raw"}}))
        assert code_of(data) == "PARSE_ERROR"
        assert data["metadata"]["attempts"] == 1
        assert len(caller.history) == 1

    def test_text_json_is_parsed(self) -> None:
        """With format json, text output is parsed as JSON."""
        caller = ToolCaller(tools=[make_tool(lambda: TextOutput('{"a": [1, 2]}'), "t")])
        assert caller.handle({"toolName": "t"})["result"] == {"a": [1, 2]}

    @pytest.mark.parametrize("text", ["<p>" + "x" * 1000, "NaN", "{'a': 1}", b"\xff\xfe"],
                             ids=["long-html", "NaN", "python-repr", "not-utf8"])
    def test_text_not_json_is_a_parse_error(self, text: str | bytes) -> None:
        """Text that is not strict JSON gives PARSE_ERROR with the start of the text."""
        caller = ToolCaller(tools=[make_tool(lambda: TextOutput(text), "t")])
        data = caller.handle({"toolName": "t"})
        assert code_of(data) == "PARSE_ERROR"
        start = data["error"]["details"]["start"]
        assert 0 < len(start) <= 200
        if isinstance(text, str):
            assert text.startswith(start)


class TestRule8Secrets:
    JWT = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
           "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
    TOKENS: ClassVar[list[str]] = ["sk-" + "a1B2" * 8, "ghp_" + "x" * 36, JWT]

    @staticmethod
    def _everything(caller: ToolCaller, data: dict[str, Any]) -> str:
        buffer = io.StringIO()
        caller.history.to_jsonl(buffer)
        return "\n".join([
            json.dumps(data["error"]), buffer.getvalue(),
            caller.history.frame().to_json(date_format="iso"),
            caller.history.attempts_frame().to_json(date_format="iso"),
        ])

    def test_password_param_in_an_error(self, demo: ToolCaller) -> None:
        """A password echoed by a tool's error is masked in error and history."""
        data = demo.handle({"toolName": "demo.login",
                            "params": {"username": "bob", "password": "hunter2-secret"}})
        assert code_of(data) == "EXECUTION_ERROR"
        assert "***" in data["error"]["message"]
        assert "hunter2-secret" not in self._everything(demo, data)

    def test_write_only_field_in_a_tool_error(self, clock: FakeClock) -> None:
        """A writeOnly property's value is masked even under a harmless name."""
        schema = {"type": "object", "properties": {"pin": {"type": "string", "writeOnly": True}}}

        def check(pin: str) -> None:
            raise ValueError(f"pin {pin} rejected")

        caller = fake_caller([make_tool(check, "t", schema)], clock)
        data = caller.handle({"toolName": "t", "params": {"pin": "987654"},
                              "options": {"retries": 1}})
        assert "987654" not in self._everything(caller, data)

    def test_write_only_field_in_invalid_params(self) -> None:
        """A writeOnly value that fails validation is masked in the violations and history."""
        schema = {"type": "object", "properties": {
            "pin": {"type": "string", "writeOnly": True, "minLength": 10}}}
        caller = ToolCaller(tools=[make_tool(lambda pin: pin, "t", schema)])
        data = caller.handle({"toolName": "t", "params": {"pin": "9876543"}})
        assert code_of(data) == "INVALID_PARAMS"
        assert "9876543" not in self._everything(caller, data)

    @pytest.mark.parametrize("token", TOKENS, ids=["openai", "github", "jwt"])
    def test_token_shaped_strings(self, clock: FakeClock, token: str) -> None:
        """Strings shaped like well-known tokens are masked wherever they appear."""
        def leak(note: str) -> None:
            raise RuntimeError(f"upstream said: {note}")

        caller = fake_caller([make_tool(leak, "t")], clock)
        data = caller.handle({"toolName": "t", "params": {"note": token},
                              "options": {"retries": 1}})
        assert code_of(data) == "RETRY_EXHAUSTED"
        assert token not in self._everything(caller, data)
        assert "***" in data["error"]["message"]

    def test_secret_named_params_masked_in_history(self, demo: ToolCaller) -> None:
        """History params show *** for secret-named keys, nested ones included."""
        caller = ToolCaller(tools=[make_tool(lambda **kw: 1, "t")])
        caller.handle({"toolName": "t", "params": {
            "user": "bob", "auth": {"api_key": "k-123456"}, "Authorization": "Basic abcdef"}})
        params = caller.history.frame()["params"][0]
        assert params["user"] == "bob"
        assert "k-123456" not in all_strings(params)
        assert "abcdef" not in all_strings(params)


class TestRule9Discovery:
    def test_runs_no_tool(self) -> None:
        """Discovery, filtered or not, never runs a tool."""
        runs: list[int] = []
        caller = ToolCaller(tools=[make_tool(lambda: runs.append(1), "side.effect")])
        for request in ({"action": "discover"}, {"action": "discover",
                                                 "options": {"filter": "side"}}):
            assert caller.handle(request)["success"] is True
        caller.discover("effect")
        assert runs == []
        assert len(caller.history) == 0

    def test_imports_no_module(self) -> None:
        """A tool whose module does not exist is listed; nothing is imported at discovery."""
        from toolcaller import Tool
        broken = Tool(name="x.broken", description="d", params_schema={"type": "object"},
                      kind="python", target="no_such_module_anywhere:fn")
        data = ToolCaller(tools=[broken]).handle({"action": "discover"})
        assert [t["name"] for t in data["result"]["tools"]] == ["x.broken"]


class TestRule10SuccessRate:
    def test_working_tool_always_succeeds(self, demo: ToolCaller) -> None:
        """500 calls to a working tool with valid params all succeed."""
        results = [demo.handle({"toolName": "math.add", "params": {"a": i, "b": 1}})
                   for i in range(500)]
        assert all(r["success"] for r in results)
        assert [r["result"]["sum"] for r in results] == [i + 1 for i in range(500)]

    def test_ten_percent_transient_failures_mended(self, clock: FakeClock) -> None:
        """A tool failing 10% of the time, with retries 3, succeeds on every call."""
        count = [0]

        def sometimes() -> int:
            count[0] += 1
            if count[0] % 10 == 0:
                raise ConnectionError("transient")
            return count[0]

        caller = fake_caller([make_tool(sometimes, "t")], clock)
        results = [caller.handle({"toolName": "t", "options": {"retries": 3}})
                   for _ in range(1000)]
        assert all(r["success"] for r in results)


class TestRule11Timestamps:
    def test_duration_ignores_wall_clock_jumps(self) -> None:
        """Duration comes from the monotonic clock: a wall clock jump changes nothing."""
        wall = [2_000_000_000.0]
        clock = JumpyWall(wall)

        def jumpy() -> int:
            wall[0] -= 7200
            clock.advance(0.042)
            return 1

        caller = fake_caller([make_tool(jumpy, "t")], clock)
        data = caller.handle({"toolName": "t"})
        assert data["metadata"]["duration"] == pytest.approx(42.0, abs=0.01)
        assert data["metadata"]["timestamp"] == "2033-05-18T03:33:20.000Z"
