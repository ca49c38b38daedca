"""How tools, envelopes and events map to MCP: listings, hints, results, progress (no process)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.helpers import make_tool
from toolcaller import Tool, ToolCaller
from toolcaller.core.events import CallEvent
from toolcaller.envelope import CallMetadata, Envelope, ErrorInfo, now_utc
from toolcaller.errors import ErrorCode
from toolcaller.serve import annotations_of, to_call_result, to_listing
from toolcaller.serve.progress import ProgressBridge, describe


def _http(method: str | None) -> Tool:
    target: dict[str, Any] = {"url": "http://127.0.0.1:9/x"}
    if method is not None:
        target["method"] = method
    return Tool(name="h", description="", params_schema={"type": "object"}, kind="http",
                target=target)


class TestAnnotations:
    @pytest.mark.parametrize(("method", "read_only", "idempotent", "destructive"), [
        (None, True, True, False), ("get", True, True, False), ("HEAD", True, True, False),
        ("PUT", False, True, True), ("DELETE", False, True, True), ("POST", False, False, None),
        ("PATCH", False, False, None),
    ], ids=["default", "get", "head", "put", "delete", "post", "patch"])
    def test_an_http_method_says_what_the_tool_does(self, method, read_only, idempotent,
                                                    destructive):
        """GET reads, PUT and DELETE may repeat and destroy, POST may do anything."""
        hints = annotations_of(_http(method))
        assert hints.get("readOnlyHint") is read_only
        assert hints.get("idempotentHint") is idempotent
        assert hints.get("destructiveHint") is destructive
        assert hints["openWorldHint"] is True

    def test_the_entrys_own_hints_win_and_junk_is_dropped(self):
        """metadata.annotations override derived hints; unknown keys and bad values are not sent."""
        tool = _http("POST")
        tool.metadata = {"annotations": {"idempotentHint": True, "openWorldHint": False,
                                         "title": "Create", "readOnlyHint": "yes", "x": 1}}
        assert annotations_of(tool) == {"readOnlyHint": False, "idempotentHint": True,
                                        "openWorldHint": False, "title": "Create"}

    def test_a_python_tool_has_hints_only_if_declared(self):
        """No guess for code: only `idempotent` and metadata.annotations count."""
        assert annotations_of(make_tool(lambda: 1, "p")) == {}
        assert annotations_of(make_tool(lambda: 1, "p", idempotent=True)) == {
            "idempotentHint": True}


class TestListing:
    def test_a_listing_keeps_names_schemas_title_and_output_schema(self):
        """Dotted names, the params schema as inputSchema, metadata's title and outputSchema."""
        schema = {"type": "object", "properties": {"a": {"type": "number"}}}
        output = {"type": "object", "properties": {"sum": {"type": "number"}}}
        tool = make_tool(lambda a: a, "math.same", schema=schema,
                         metadata={"title": "Same", "outputSchema": output})
        [entry] = to_listing([tool])
        assert entry == {"name": "math.same", "title": "Same", "description": "test tool math.same",
                         "inputSchema": schema, "outputSchema": output}
        assert entry["inputSchema"] is not schema  # a copy: the listing is the client's

    def test_the_demo_registry_lists_as_discovery_does(self):
        """Every demo tool is listed under its name with its discovery schema."""
        with ToolCaller() as caller:
            tools = caller.registry.static_tools()
            found = {t["name"]: t["paramsSchema"] for t in caller.discover().result["tools"]}
        listing = to_listing(tools)
        assert {e["name"]: e["inputSchema"] for e in listing} == found


def _envelope(result: Any = None, error: ErrorInfo | None = None) -> Envelope:
    return Envelope(success=error is None, result=result, error=error, metadata=CallMetadata(
        duration=1.5, attempts=2, tool_name="t", timestamp=now_utc(0), call_id="c-1"))


class TestResults:
    def test_an_object_is_structured_content_as_is(self):
        """An object needs no wrapping; the text block is its JSON."""
        result = to_call_result(_envelope({"sum": 3, "note": "é"}))
        assert result["structuredContent"] == {"sum": 3, "note": "é"}
        assert json.loads(result["content"][0]["text"]) == {"sum": 3, "note": "é"}
        assert result["isError"] is False
        assert result["_meta"] == {"toolcaller/call": {
            "callId": "c-1", "attempts": 2, "duration": 1.5,
            "timestamp": "1970-01-01T00:00:00.000Z"}}

    @pytest.mark.parametrize("value", [3, "text", [1, 2], None, True],
                             ids=["number", "string", "list", "null", "bool"])
    def test_any_other_value_is_wrapped_and_meta_says_so(self, value):
        """A value that is not an object sits under `result`, and `_meta` names the wrapper."""
        result = to_call_result(_envelope(value))
        assert result["structuredContent"] == {"result": value}
        assert json.loads(result["content"][0]["text"]) == {"result": value}
        assert result["_meta"]["toolcaller/wrapped"] == "result"

    def test_a_failure_is_an_error_result_with_its_code(self):
        """isError, `CODE: message` for the model, the whole error in `_meta`."""
        error = ErrorInfo(code=ErrorCode.TIMEOUT, message="no result within 5 ms",
                          details={"attempts": []}, retryable=True)
        result = to_call_result(_envelope(error=error))
        assert result["isError"] is True
        assert result["content"] == [{"type": "text", "text": "TIMEOUT: no result within 5 ms"}]
        assert result["_meta"]["toolcaller/error"] == {
            "code": "TIMEOUT", "message": "no result within 5 ms", "retryable": True,
            "details": {"attempts": []}}
        assert "structuredContent" not in result


def _event(kind: str, attempt: int = 1, **values: Any) -> CallEvent:
    return CallEvent(kind, "c", "t", attempt, 3, 0.0, **values)  # type: ignore[arg-type]


class TestProgress:
    @pytest.mark.parametrize(("event", "text"), [
        (_event("attempt", 2), "attempt 2 of 3"),
        (_event("wait", 2, wait_ms=1000.0), "waiting 1000 ms before attempt 2 of 3"),
        (_event("progress", progress=3.0, total=10.0, message="rows"), "3/10: rows"),
        (_event("progress", progress=0.5), "0.5"),
        (_event("progress", message="warming up"), "warming up"),
        (_event("attempt_end", code="TIMEOUT"), None),
        (_event("log", message="a log line"), None),
    ], ids=["attempt", "wait", "progress", "bare", "message-only", "attempt-end", "log"])
    def test_events_say_what_happened(self, event, text):
        """Each notified event is described for a person; ends and logs are not notified."""
        assert describe(event) == text

    async def test_notifications_go_out_in_order_with_increasing_values(self):
        """A slow sender keeps the order; flush waits for the last one."""
        sent: list[tuple[float, float | None, str | None]] = []

        async def send(progress: float, total: float | None, message: str | None) -> None:
            await asyncio.sleep(0.001 * (5 - len(sent)))  # earlier ones take longer
            sent.append((progress, total, message))

        bridge = ProgressBridge(send)
        for number in (1, 2, 3):
            bridge.on_event(_event("attempt", number))
            bridge.on_event(_event("attempt_end", number))
        await bridge.flush()
        assert sent == [(1.0, None, "attempt 1 of 3"), (2.0, None, "attempt 2 of 3"),
                        (3.0, None, "attempt 3 of 3")]

    async def test_a_failing_sender_does_not_fail_the_call(self):
        """A notification that cannot be sent is dropped; the others still go."""
        sent: list[str | None] = []

        async def send(progress: float, total: float | None, message: str | None) -> None:
            if progress == 1.0:
                raise ConnectionError("gone")
            sent.append(message)

        bridge = ProgressBridge(send)
        bridge.on_event(_event("attempt", 1))
        bridge.on_event(_event("attempt", 2))
        await bridge.flush()
        assert sent == ["attempt 2 of 3"]
