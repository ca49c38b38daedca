"""The MCP adapter's mapping, against a stand-in hub: results by what they promise, errors by
code, progress and log notes, and a cold start answered by the deadline."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from tests.helpers import LATE_MS
from toolcaller import ToolCaller, testing
from toolcaller.adapters.base import TextOutput
from toolcaller.adapters.mcp import McpAdapter, McpTarget
from toolcaller.core.tool import Tool
from toolcaller.errors import ExecutionError, InvalidParamsError, ToolTimeoutError


def block(text: str) -> SimpleNamespace:
    return SimpleNamespace(model_dump=lambda **_: {"type": "text", "text": text})


def result(*texts: str, structured: Any = None, is_error: bool = False) -> SimpleNamespace:
    return SimpleNamespace(content=[block(t) for t in texts], structured_content=structured,
                           is_error=is_error, meta=None)


class FakeHub:
    """What the adapter needs of a hub: a start that takes `start_s`, then canned answers."""

    def __init__(self, answer: Any = None, *, start_s: float = 0.0,
                 notify: bool = False) -> None:
        self.answer, self.start_s, self.notify = answer, start_s, notify
        self.started = start_s == 0
        self.began: float | None = None
        self.starting: asyncio.Task[None] | None = None

    def secrets(self, server: str) -> set[str]:
        return set()

    def is_started(self, server: str) -> bool:
        return self.started

    def starting_for_s(self, server: str) -> float | None:
        return None if self.began is None else asyncio.get_running_loop().time() - self.began

    async def astart(self, server: str) -> None:
        """Start once; shielded, as the real hub's start: a caller giving up leaves it going."""
        if self.starting is None:
            self.began = asyncio.get_running_loop().time()
            self.starting = asyncio.create_task(self._start())
        await asyncio.shield(self.starting)

    async def _start(self) -> None:
        await asyncio.sleep(self.start_s)
        self.started = True

    async def acall(self, server: str, tool: str, arguments: Any, *, timeout_s: Any = None,
                    on_progress: Any = None, on_log: Any = None) -> Any:
        if self.notify:
            on_progress(1.0, 2.0, "half")
            on_log("info", "working")
            on_progress(2.0, 2.0, None)
        return self.answer


def mcp_tool(hub: FakeHub, *, output_schema: bool = False, name: str = "srv.t") -> Tool:
    metadata: dict[str, Any] = {"outputSchema": {"type": "object"}} if output_schema else {}
    return Tool(name=name, description="", params_schema={"type": "object"}, kind="mcp",
                target=McpTarget("srv", "t", hub), metadata=metadata)


async def run(hub: FakeHub, tool: Tool | None = None, **options: Any) -> Any:
    return await testing.invoke(McpAdapter(), tool or mcp_tool(hub), {}, **options)


class TestResults:
    async def test_text_without_an_output_schema_is_text_by_nature(self) -> None:
        """One text block of a tool without outputSchema promises no JSON."""
        out = await run(FakeHub(result("Repository status: clean")))
        assert isinstance(out, TextOutput)
        assert out.promises_json is False

    async def test_text_of_a_tool_with_an_output_schema_promises_json(self) -> None:
        """A tool that declares an outputSchema and answers text promises JSON."""
        hub = FakeHub(result('{"a": 1}'))
        out = await run(hub, mcp_tool(hub, output_schema=True))
        assert out.promises_json is True

    async def test_structured_content_wins(self) -> None:
        """structuredContent is the output, whatever the text says."""
        out = await run(FakeHub(result("[FILE] x.txt", structured={"content": "[FILE] x.txt"})))
        assert out == {"content": "[FILE] x.txt"}

    async def test_raw_is_the_content_blocks(self) -> None:
        """With format raw the output is the list of content blocks."""
        out = await run(FakeHub(result("one", "two")), format="raw")
        assert out == [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]

    def test_through_the_engine_prose_is_a_success(self) -> None:
        """A prose answer under the default format json is a string and a success."""
        hub = FakeHub(result("The sum of 1 and 2 is 3."))
        with ToolCaller(tools=[mcp_tool(hub)]) as caller:
            envelope = caller.handle({"toolName": "srv.t"})
        assert envelope["result"] == "The sum of 1 and 2 is 3."


class TestErrors:
    @pytest.mark.parametrize(("text", "error", "retryable"), [
        ("MCP error -32602: Input validation error: expected number", InvalidParamsError,
         False),
        ("MCP error -32602: Tool no-such-tool not found", ExecutionError, False),
        ("MCP error -32601: Tool q requires task augmentation (taskSupport: 'required')",
         ExecutionError, False),
        ("Error executing tool t: boom", ExecutionError, False),
    ], ids=["invalid-params", "unknown-tool", "task-only", "tool-error"])
    async def test_is_error_results_by_their_code(self, text: str, error: type,
                                                  retryable: bool) -> None:
        """An isError text wrapping -32602 is INVALID_PARAMS; other wrapped codes permanent."""
        with pytest.raises(error) as caught:
            await run(FakeHub(result(text, is_error=True)))
        assert caught.value.retryable is retryable
        assert text in caught.value.message


class TestNotes:
    def test_progress_and_log_are_kept_with_the_attempt(self) -> None:
        """The server's progress and log messages land in the attempt's notes, in order."""
        hub = FakeHub(result("done"), notify=True)
        events: list[str] = []
        with ToolCaller(tools=[mcp_tool(hub)]) as caller:
            envelope = caller.call("srv.t", on_event=lambda e: events.append(e.kind))
        notes = envelope.metadata.trail[0].notes
        assert [n["kind"] for n in notes] == ["progress", "log", "progress"]
        assert notes[0]["message"] == "half"
        assert notes[1] == {**notes[1], "level": "info", "message": "working"}
        assert events.count("progress") == 2
        assert "log" in events


class TestColdStart:
    async def test_a_start_past_the_deadline_answers_by_it(self) -> None:
        """A server still starting at the deadline: TIMEOUT on time, saying how long so far."""
        hub = FakeHub(result("late"), start_s=1.0)
        loop = asyncio.get_running_loop()
        began = loop.time()
        with pytest.raises(ToolTimeoutError) as caught:
            await run(hub, deadline=300)
        assert (loop.time() - began) * 1000 < 300 + LATE_MS
        assert "still starting" in caught.value.message
        assert "so far" in caught.value.message
        await asyncio.sleep(1.0)  # the start went on in the background
        assert hub.started
        assert await run(hub) is not None
