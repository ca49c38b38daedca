"""The official `mcp` SDK client against `toolcaller serve`, over stdio and streamable HTTP.

Each test starts the served test registry (`fixtures/registry.json`) and stops it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.helpers import LATE_MS
from tests.serve.conftest import REGISTRY, connect, gone, wait_for_file
from toolcaller import ToolCaller

pytestmark = [pytest.mark.integration, pytest.mark.mcp]


def _meta(result: Any) -> dict[str, Any]:
    return dict(result.meta or {})


class TestListing:
    async def test_tools_are_discoverys_tools_with_their_schemas(self, transport, tmp_path):
        """tools/list names every tool of the registry, its paramsSchema as inputSchema."""
        with ToolCaller.from_file(REGISTRY) as caller:
            discovered = {t["name"]: t for t in caller.discover().result["tools"]}
        async with connect(transport, tmp_path) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
        assert list(listed) == list(discovered)
        for name, tool in listed.items():
            assert tool.input_schema == discovered[name]["paramsSchema"], name
            assert tool.description == discovered[name]["description"]

    async def test_annotations_come_from_entries_and_http_methods(self, transport, tmp_path):
        """Hints come from the entry's metadata, its idempotent flag and an HTTP method."""
        async with connect(transport, tmp_path) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
        add = listed["math.add"].annotations
        assert (add.title, add.read_only_hint, add.idempotent_hint) == ("Add", True, True)
        read, create = listed["http.read"].annotations, listed["http.create"].annotations
        assert (read.read_only_hint, read.idempotent_hint, read.open_world_hint) == (
            True, True, True)
        assert (create.read_only_hint, create.idempotent_hint) == (False, False)
        assert listed["http.remove"].annotations.destructive_hint is True
        assert listed["demo.fail"].annotations is None


class TestCalls:
    async def test_success_is_structured_content_and_the_same_json_as_text(
            self, transport, tmp_path):
        """An object result is structuredContent as is, and the same JSON in a text block."""
        async with connect(transport, tmp_path) as client:
            result = await client.call_tool("math.add", {"a": 1, "b": 2})
            wrapped = await client.call_tool("math.add_async", {"a": 1, "b": 2.5})
        assert result.is_error is False
        assert result.structured_content == {"sum": 3}
        assert json.loads(result.content[0].text) == {"sum": 3}
        call = _meta(result)["toolcaller/call"]
        assert call["attempts"] == 1
        assert call["callId"]
        assert call["duration"] >= 0
        assert "toolcaller/wrapped" not in _meta(result)
        assert wrapped.structured_content == {"result": 3.5}
        assert json.loads(wrapped.content[0].text) == {"result": 3.5}
        assert _meta(wrapped)["toolcaller/wrapped"] == "result"

    async def test_each_failure_is_an_error_result_with_its_code(self, transport, tmp_path):
        """A failed call is isError with `CODE: message`, and its code in _meta.

        The five codes go through one session (a served registry per case took 2.5 s each).
        """
        cases = [("math.add", {"a": "one", "b": 2}, "INVALID_PARAMS", 0),
                 ("demo.fail", {}, "EXECUTION_ERROR", 1),
                 ("demo.fail_retried", {}, "RETRY_EXHAUSTED", 3),
                 ("script.not_json", {}, "PARSE_ERROR", 1),
                 ("demo.nap", {"seconds": 5}, "TIMEOUT", 1)]
        async with connect(transport, tmp_path) as client:
            results = [await client.call_tool(tool, params) for tool, params, _, _ in cases]
        for (tool, _, code, attempts), result in zip(cases, results, strict=True):
            assert result.is_error is True, tool
            assert result.content[0].text.startswith(f"{code}: "), tool
            error = _meta(result)["toolcaller/error"]
            assert error["code"] == code, tool
            assert result.content[0].text == f"{code}: {error['message']}", tool
            assert _meta(result)["toolcaller/call"]["attempts"] == attempts, tool
            assert result.structured_content is None, tool

    async def test_an_unknown_tool_is_a_json_rpc_error_naming_close_names(
            self, transport, tmp_path):
        """TOOL_NOT_FOUND is a protocol error (-32602) that suggests the close names."""
        from mcp import MCPError

        async with connect(transport, tmp_path) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("math.ad", {"a": 1, "b": 2})
            assert (await client.call_tool("math.add", {"a": 1, "b": 1})).is_error is False
        assert caught.value.code == -32602
        assert "math.add" in caught.value.message

    async def test_secrets_are_masked_in_the_message(self, transport, tmp_path):
        """A writeOnly param's value never reaches the client in an error."""
        async with connect(transport, tmp_path) as client:
            result = await client.call_tool("demo.login", {"user": "ann", "password": "hunter22"})
        assert result.is_error is True
        assert "hunter22" not in result.model_dump_json()
        assert "***" in result.content[0].text


class TestTimeoutsAndCancellation:
    async def test_a_timeout_kills_the_script_process(self, transport, tmp_path):
        """A script that outlives its timeout is TIMEOUT, and its process is gone."""
        pid_file = tmp_path / "pid"
        async with connect(transport, tmp_path) as client:
            started = time.monotonic()
            result = await client.call_tool("script.timeout",
                                            {"seconds": 30, "pidFile": str(pid_file)})
            elapsed_ms = (time.monotonic() - started) * 1000
        assert _meta(result)["toolcaller/error"]["code"] == "TIMEOUT"
        assert elapsed_ms < 300 + 2000 + LATE_MS  # the timeout, plus the process's start
        assert await gone(int(pid_file.read_text()))

    @pytest.mark.parametrize("tool", ["script.sleep", "demo.hang"])
    async def test_cancelling_stops_the_tool_and_its_process(self, transport, tmp_path, tool):
        """notifications/cancelled kills the script (or isolated worker) the call started."""
        pid_file = tmp_path / "pid"
        params = ({"seconds": 30, "pidFile": str(pid_file)} if tool == "script.sleep"
                  else {"pid_file": str(pid_file)})
        async with connect(transport, tmp_path) as client:
            async with anyio.create_task_group() as group:
                scope = anyio.CancelScope()

                async def call() -> None:
                    with scope:
                        await client.call_tool(tool, params)

                group.start_soon(call)
                pid = int(await wait_for_file(pid_file))
                scope.cancel()
            assert await gone(pid), f"the tool's process {pid} outlived the cancellation"
            after = await client.call_tool("math.add", {"a": 2, "b": 2})
        assert after.structured_content == {"sum": 4}


class TestProgress:
    async def test_attempts_and_waits_are_progress_in_order(self, transport, tmp_path):
        """With a progressToken, attempts and retry waits arrive in order, increasing."""
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        async with connect(transport, tmp_path) as client:
            result = await client.call_tool("demo.fail_retried", {},
                                            progress_callback=on_progress)
        assert result.is_error is True
        assert [m for _, _, m in seen] == [
            "attempt 1 of 3", "waiting 20 ms before attempt 2 of 3", "attempt 2 of 3",
            "waiting 20 ms before attempt 3 of 3", "attempt 3 of 3"]
        values = [p for p, _, _ in seen]
        assert values == sorted(set(values))

    async def test_the_tools_own_progress_is_forwarded(self, transport, tmp_path):
        """A tool's report_progress becomes a notification, served from Python's serve()."""
        argv = [*_python_server(), *(["http"] if transport == "http" else [])]
        seen: list[str | None] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(message)

        async with connect(transport, tmp_path, argv=argv) as client:
            result = await client.call_tool("demo.steps", {"steps": 3},
                                            progress_callback=on_progress)
            quiet = await client.call_tool("demo.steps", {"steps": 2})
        assert result.structured_content == {"steps": 3}
        assert seen == ["attempt 1 of 2", "1/3: step 1", "2/3: step 2", "3/3: step 3"]
        assert quiet.structured_content == {"steps": 2}


def _python_server() -> list[str]:
    import sys

    return [sys.executable, str(Path(__file__).parent / "fixtures" / "progress_server.py")]
