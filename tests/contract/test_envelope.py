"""The envelope's JSON, pinned: keys, types, timestamps, durations, codes, trail."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.helpers import (
    CAMEL,
    CODES,
    TIMESTAMP,
    FakeClock,
    JumpyWall,
    check_envelope,
    code_of,
    make_tool,
)
from toolcaller import Envelope, ToolCaller


def _dump(envelope: dict[str, Any]) -> dict[str, Any]:
    """Round-trip through strict JSON text, as a client would read it."""
    return json.loads(json.dumps(envelope, allow_nan=False))  # type: ignore[no-any-return]


class TestSuccessEnvelope:
    def test_top_level_keys_are_exactly_the_contract(self, demo: ToolCaller) -> None:
        """A success envelope has exactly success, result and metadata: no error key."""
        data = _dump(demo.handle({"toolName": "math.add", "params": {"a": 1, "b": 2}}))
        assert set(data) == {"success", "result", "metadata"}
        assert data["success"] is True
        assert data["result"] == {"sum": 3}

    def test_metadata_has_the_seed_keys(self, demo: ToolCaller) -> None:
        """Success metadata carries duration, attempts, toolName and timestamp (camelCase)."""
        data = _dump(demo.handle({"toolName": "math.add", "params": {"a": 1, "b": 2}}))
        assert {"duration", "attempts", "toolName", "timestamp"} <= set(data["metadata"])
        assert data["metadata"]["toolName"] == "math.add"
        assert data["metadata"]["attempts"] == 1
        check_envelope(data)

    def test_error_is_absent_from_the_json_text(self, demo: ToolCaller) -> None:
        """The JSON text of a success has no `"error"` key at all (not even null)."""
        text = demo.call("math.add", {"a": 1, "b": 2}).to_json()
        assert '"error"' not in text
        assert json.loads(text)["success"] is True

    def test_model_dump_matches_handle(self, demo: ToolCaller) -> None:
        """`Envelope.to_dict()` from `call()` has the same shape as `handle()`'s dict."""
        envelope = demo.call("math.add", {"a": 2, "b": 3})
        assert isinstance(envelope, Envelope)
        assert envelope.code is None
        data = envelope.to_dict()
        handled = demo.handle({"toolName": "math.add", "params": {"a": 2, "b": 3}})
        assert set(data) == set(handled)
        assert set(data["metadata"]) == set(handled["metadata"])
        assert data["result"] == handled["result"] == {"sum": 5}


class TestFailureEnvelope:
    def test_top_level_keys_and_null_result(self, demo: ToolCaller) -> None:
        """A failure envelope has success false, result null, an error and metadata."""
        data = _dump(demo.handle({"toolName": "nope"}))
        assert set(data) == {"success", "result", "error", "metadata"}
        assert data["success"] is False
        assert data["result"] is None
        assert "result" in json.dumps(data)

    def test_error_has_code_message_details(self, demo: ToolCaller) -> None:
        """The error object has code, message and details (details may be null)."""
        data = _dump(demo.handle({"toolName": "demo.not_found"}))
        assert {"code", "message", "details"} <= set(data["error"])
        assert data["error"]["code"] == "EXECUTION_ERROR"
        assert data["error"]["message"]

    def test_failure_metadata_has_the_seed_keys(self, demo: ToolCaller) -> None:
        """Failure metadata carries duration, attempts, toolName and timestamp too."""
        data = _dump(demo.handle({"toolName": "math.add", "params": {}}))
        assert {"duration", "attempts", "toolName", "timestamp"} <= set(data["metadata"])
        assert data["metadata"]["toolName"] == "math.add"
        check_envelope(data)

    def test_request_without_tool_name_has_null_tool_name(self, demo: ToolCaller) -> None:
        """A request with no usable toolName still has the key, with null."""
        data = _dump(demo.handle({"params": {}}))
        assert "toolName" in data["metadata"]
        assert data["metadata"]["toolName"] is None


class TestDiscoveryEnvelope:
    def test_keys(self, demo: ToolCaller) -> None:
        """Discovery answers success, result.tools and metadata with duration and total."""
        data = _dump(demo.handle({"action": "discover"}))
        assert set(data) == {"success", "result", "metadata"}
        assert set(data["result"]) == {"tools"}
        assert {"duration", "total"} <= set(data["metadata"])
        assert data["metadata"]["total"] == len(data["result"]["tools"])

    def test_each_tool_has_exactly_the_four_keys(self, demo: ToolCaller) -> None:
        """Each listed tool has exactly name, description, paramsSchema and metadata."""
        data = _dump(demo.handle({"action": "discover"}))
        for item in data["result"]["tools"]:
            assert set(item) == {"name", "description", "paramsSchema", "metadata"}

    def test_duration_is_a_float(self, demo: ToolCaller) -> None:
        """The discovery duration is a number of milliseconds (a float)."""
        data = demo.handle({"action": "discover", "options": {"filter": "math"}})
        assert isinstance(data["metadata"]["duration"], float)
        check_envelope(data)


class TestTimestamps:
    @pytest.mark.parametrize(
        "request_", [
            {"toolName": "math.add", "params": {"a": 1, "b": 2}},
            {"toolName": "math.add", "params": {}},
            {"toolName": "nope"},
            None,
        ],
        ids=["success", "invalid", "not-found", "not-a-request"],
    )
    def test_format(self, demo: ToolCaller, request_: Any) -> None:
        """Timestamps are ISO 8601 UTC with milliseconds and Z."""
        stamp = demo.handle(request_)["metadata"]["timestamp"]
        assert TIMESTAMP.match(stamp), stamp

    def test_taken_when_the_request_arrives(self) -> None:
        """The timestamp is the wall time at arrival, not after the tool ran."""
        wall = [1_700_000_000.123]

        def slow_on_the_wall() -> int:
            wall[0] += 3600.0
            return 1

        caller = ToolCaller(tools=[make_tool(slow_on_the_wall, "t")], clock=JumpyWall(wall))
        data = caller.handle({"toolName": "t"})
        assert data["success"] is True
        expected = datetime.fromtimestamp(1_700_000_000.123, UTC)
        assert data["metadata"]["timestamp"] == expected.strftime("%Y-%m-%dT%H:%M:%S.123Z")

    def test_is_utc_now(self, demo: ToolCaller) -> None:
        """With the real clock the timestamp is within a few seconds of now, in UTC."""
        stamp = demo.handle({"toolName": "math.add", "params": {"a": 1, "b": 1}})[
            "metadata"]["timestamp"]
        moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        assert abs((datetime.now(UTC) - moment).total_seconds()) < 5


class TestDuration:
    def test_is_milliseconds_from_the_monotonic_clock(self) -> None:
        """A tool that takes 0.25 s on the monotonic clock gives duration 250.0 ms."""
        clock = FakeClock()

        def takes_time() -> int:
            clock.advance(0.25)
            return 1

        caller = ToolCaller(tools=[make_tool(takes_time, "t")], clock=clock)
        data = caller.handle({"toolName": "t"})
        assert isinstance(data["metadata"]["duration"], float)
        assert data["metadata"]["duration"] == pytest.approx(250.0, abs=0.01)

    def test_is_a_float_even_when_instant(self, demo: ToolCaller) -> None:
        """Duration is a JSON number with a fraction (a float), never an int or a string."""
        for request in ({"toolName": "nope"}, {"toolName": "math.add", "params": {"a": 1, "b": 2}}):
            duration = demo.handle(request)["metadata"]["duration"]
            assert type(duration) is float
            assert duration >= 0


class TestStrictJson:
    @pytest.mark.parametrize(
        "request_", [
            {"toolName": "math.add", "params": {"a": 1, "b": 2}},
            {"toolName": "demo.nan"},
            {"toolName": "demo.fail", "options": {"retries": 0}},
            {"action": "discover"},
            {"toolName": "math.add", "params": {"a": float("nan"), "b": 1}},
            float("nan"),
        ],
        ids=["success", "nan-tool", "failure", "discover", "nan-param", "nan-request"],
    )
    def test_dumps_without_nan(self, demo: ToolCaller, request_: Any) -> None:
        """Every envelope dumps as strict JSON (allow_nan=False never raises)."""
        json.dumps(demo.handle(request_), allow_nan=False)

    def test_nan_result_is_a_parse_error(self, demo: ToolCaller) -> None:
        """A tool returning NaN fails with PARSE_ERROR, pointing at the value."""
        data = demo.handle({"toolName": "demo.nan"})
        assert code_of(data) == "PARSE_ERROR"
        assert "/value" in json.dumps(data["error"])

    @pytest.mark.parametrize(
        "value", [float("inf"), float("-inf"), [1.0, float("nan")], {"a": {"b": float("inf")}}],
        ids=["inf", "-inf", "nan-in-list", "nested-inf"],
    )
    def test_non_finite_results_are_parse_errors(self, value: Any) -> None:
        """Infinity and NaN anywhere in a result give PARSE_ERROR, not invalid JSON."""
        caller = ToolCaller(tools=[make_tool(lambda: value, "t")])
        data = caller.handle({"toolName": "t"})
        assert code_of(data) == "PARSE_ERROR"
        json.dumps(data, allow_nan=False)


def _flaky_key() -> str:
    return f"env-{uuid.uuid4().hex}"


CODE_TABLE = [
    ("TIMEOUT", {"toolName": "demo.slow", "params": {"seconds": 5},
                 "options": {"timeout": 30, "retries": 0}}),
    ("RETRY_EXHAUSTED", {"toolName": "demo.fail", "options": {"retries": 1, "retryDelay": 0}}),
    ("TOOL_NOT_FOUND", {"toolName": "math.ad", "params": {"a": 1, "b": 2}}),
    ("INVALID_PARAMS", {"toolName": "math.add", "params": {"a": 1}}),
    ("EXECUTION_ERROR", {"toolName": "demo.fail", "options": {"retries": 0}}),
    ("PARSE_ERROR", {"toolName": "demo.not_json"}),
]


class TestEveryCode:
    @pytest.mark.parametrize(("code", "request_"), CODE_TABLE, ids=[c for c, _ in CODE_TABLE])
    def test_demo_request_produces_the_code(self, demo: ToolCaller, code: str,
                                            request_: dict[str, Any]) -> None:
        """Each of the six codes is produced by some request to the demo registry."""
        data = check_envelope(demo.handle(request_))
        assert code_of(data) == code

    def test_the_table_covers_all_six(self) -> None:
        """The table above names every contract code exactly once."""
        assert sorted(c for c, _ in CODE_TABLE) == sorted(CODES)

    @pytest.mark.parametrize(
        ("request_", "retryable"), [
            (CODE_TABLE[0][1], True),
            ({"toolName": "demo.not_found"}, False),
            ({"toolName": "nope"}, False),
            ({"toolName": "math.add", "params": {}}, False),
            ({"toolName": "demo.nan"}, False),
            ({"toolName": "math.divide", "params": {"a": 1, "b": 0}}, True),
        ],
        ids=["timeout", "permanent", "not-found", "invalid", "parse", "transient"],
    )
    def test_retryable_flag(self, demo: ToolCaller, request_: dict[str, Any],
                            retryable: bool) -> None:
        """error.retryable says whether trying the same call again could help."""
        assert demo.handle(request_)["error"]["retryable"] is retryable


class TestTrail:
    def test_one_entry_per_attempt(self, demo: ToolCaller) -> None:
        """metadata.trail lists every attempt: number, code (null on success), duration, wait."""
        data = demo.handle({"toolName": "demo.flaky",
                            "params": {"failures": 2, "key": _flaky_key()},
                            "options": {"retries": 3, "retryDelay": 5}})
        assert data["success"] is True
        trail = data["metadata"]["trail"]
        assert [t["attempt"] for t in trail] == [1, 2, 3]
        assert [t["code"] for t in trail] == ["EXECUTION_ERROR", "EXECUTION_ERROR", None]
        assert data["metadata"]["attempts"] == len(trail)
        assert trail[0]["wait"] == 0
        assert all(t["wait"] >= 5 for t in trail[1:])
        assert all(isinstance(t["duration"], float) for t in trail)

    def test_empty_when_no_attempt_started(self, demo: ToolCaller) -> None:
        """A call that never started an attempt has an empty trail and attempts 0."""
        data = demo.handle({"toolName": "math.add", "params": {"a": "x", "b": 1}})
        assert data["metadata"]["attempts"] == 0
        assert data["metadata"].get("trail", []) == []

    def test_trail_keys_are_camel_case(self, demo: ToolCaller) -> None:
        """Trail entries use camelCase keys like the rest of the envelope, the same as details'."""
        data = demo.handle({"toolName": "demo.fail", "options": {"retries": 1, "retryDelay": 0}})
        for entry in data["metadata"]["trail"]:
            assert {"attempt", "code", "duration", "wait"} <= set(entry)
            assert all(CAMEL.match(key) for key in entry), entry
        assert data["error"]["details"]["attempts"] == data["metadata"]["trail"]
