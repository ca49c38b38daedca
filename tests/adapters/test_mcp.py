"""MCP servers for real: `mcp-server-time` (stdio), our slow server (stdio and HTTP)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pydantic
import pytest

pytest.importorskip("mcp")
pytest.importorskip("mcp_server_time")

from mcp.shared.exceptions import MCPError

from toolcaller import testing
from toolcaller.adapters.base import AttemptContext, TextOutput
from toolcaller.adapters.mcp import McpAdapter, McpTarget, _error_map, _translate_errors
from toolcaller.core.portal import Portal
from toolcaller.core.registry import Registry
from toolcaller.core.tool import Tool
from toolcaller.errors import (
    ErrorCode,
    ExecutionError,
    ToolCallError,
)
from toolcaller.sources.mcp import McpEntrySource, McpHub

pytestmark = [pytest.mark.integration, pytest.mark.mcp]

SLOW_SERVER = Path(__file__).with_name("mcp_slow_server.py")
SERVERS = {
    "time": {"command": "mcp-server-time"},
    "slow": {
        "command": sys.executable,
        "args": [str(SLOW_SERVER)],
        "env": {"SLOW_TOKEN": "${TC_TEST_TOKEN}", "PLAIN": "${TC_UNSET_VAR:-fallback}"},
    },
}
TOKEN = "tok-5e3c7a-not-a-real-secret"


# --- helpers -----------------------------------------------------------------------------


def live_children() -> set[int]:
    """Pids of this process's children that are still running (not zombies)."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == os.getpid() and state != "Z":
            found.add(int(entry))
    return found


def wait_until(predicate, timeout_s: float = 8.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def ctx(timeout_s: float = 10.0, fmt: str = "json") -> AttemptContext:
    return testing.attempt_context(timeout=timeout_s * 1000, format=fmt)


async def run(adapter: McpAdapter, tool: Tool, params: dict, context: AttemptContext) -> object:
    """One attempt through the adapter, timed as the engine does."""
    return await testing.invoke(adapter, tool, params, ctx=context)


def make_hub(loop: Portal, servers=SERVERS, **kwargs) -> McpHub:
    environ = {**os.environ, "TC_TEST_TOKEN": TOKEN}
    return McpHub(servers, loop=loop, environ=environ, **kwargs)


@pytest.fixture(scope="module")
def loop() -> Iterator[Portal]:
    thread = Portal("test-mcp-loop")
    yield thread
    thread.close()


@pytest.fixture(scope="module")
def hub(loop: Portal) -> Iterator[McpHub]:
    """One hub for the module: sessions are shared across tests, as across calls."""
    shared = make_hub(loop)
    yield shared
    shared.close()


@pytest.fixture(scope="module")
def tools(hub: McpHub) -> dict[str, Tool]:
    return {t.name: t for source in hub.sources() for t in source.list_tools()}


@pytest.fixture
def adapter(hub: McpHub) -> McpAdapter:
    return McpAdapter()


# --- discovery ---------------------------------------------------------------------------


class TestDiscovery:
    def test_time_server_tools_are_listed_with_their_schemas(self, tools: dict[str, Tool]):
        """Every tool of mcp-server-time becomes `time.<tool>` with the server's input schema."""
        tool = tools["time.get_current_time"]
        assert "time.convert_time" in tools
        assert tool.kind == "mcp"
        assert (tool.target.server, tool.target.tool) == ("time", "get_current_time")
        assert tool.params_schema["required"] == ["timezone"]
        assert tool.params_schema["properties"]["timezone"]["type"] == "string"
        assert tool.description

    def test_metadata_carries_tags_annotations_and_idempotency(self, tools: dict[str, Tool]):
        """Tags are `mcp` and the server; annotations and titles pass through; idempotentHint."""
        tool = tools["time.get_current_time"]
        assert tool.tags == ["mcp", "time"]
        assert tool.metadata["annotations"]["readOnlyHint"] is True
        assert tool.idempotent is True
        sleep = tools["slow.sleep"]
        assert sleep.metadata["title"] == "Sleep"
        assert tools["slow.echo"].idempotent is False
        assert "outputSchema" in tool.metadata

    def test_discovery_info_is_the_contract_shape(self, tools: dict[str, Tool]):
        info = tools["time.get_current_time"].info()
        assert set(info) == {"name", "description", "paramsSchema", "metadata"}

    def test_a_missing_command_is_a_source_problem_not_a_crash(self, loop: Portal):
        """Discovery reports the broken server and still lists the others."""
        hub = make_hub(loop, {"ghost": {"command": "no-such-mcp-server-xyz"}, **SERVERS})
        try:
            registry = Registry(sources=hub.sources())
            found, problems = registry.all_tools()
            assert [p.source for p in problems] == ["mcp:ghost"]
            assert "no-such-mcp-server-xyz" in problems[0].message
            assert "not found" in problems[0].message
            assert problems[0].prefix == "ghost."
            assert any(t.name == "time.get_current_time" for t in found)
        finally:
            hub.close()

    def test_a_failed_start_is_remembered_then_tried_again(self, loop: Portal, tmp_path):
        """A server that dies at start is not restarted on every lookup, only after a pause."""
        script = tmp_path / "dies.sh"
        script.write_text("#!/bin/sh\necho started >> starts.log\necho 'boom: no config' >&2\n")
        script.chmod(0o755)
        hub = McpHub(
            {"dies": {"command": str(script)}}, loop=loop, base_dir=tmp_path,
            retry_start_after_s=0.5,
        )
        source = hub.sources()[0]
        try:
            with pytest.raises(ExecutionError, match="could not start") as first:
                source.list_tools()
            assert "boom: no config" in str(first.value)  # the end of its stderr
            with pytest.raises(ExecutionError, match="could not start"):
                source.list_tools()
            assert (tmp_path / "starts.log").read_text().count("started") == 1
            time.sleep(0.6)
            with pytest.raises(ExecutionError):
                source.list_tools()
            assert (tmp_path / "starts.log").read_text().count("started") == 2
        finally:
            hub.close()

    def test_env_placeholders_are_read_from_the_environment_and_kept_secret(
        self, hub: McpHub, tools: dict[str, Tool]
    ):
        """`${VAR}` in env is resolved at start; its value is reported as a secret."""
        assert TOKEN in hub.secrets("slow")
        result = asyncio.run(hub.acall("slow", "getenv", {"name": "SLOW_TOKEN"}))
        assert result.structured_content == {"result": TOKEN}
        result = asyncio.run(hub.acall("slow", "getenv", {"name": "PLAIN"}))
        assert result.structured_content == {"result": "fallback"}

    def test_an_unset_variable_names_the_variable(self, loop: Portal):
        hub = McpHub({"x": {"command": "mcp-server-time", "env": {"K": "${TC_NOPE_NOT_SET}"}}},
                     loop=loop, environ={})
        try:
            with pytest.raises(ExecutionError, match=r"'TC_NOPE_NOT_SET'.*not set"):
                hub.sources()[0].list_tools()
        finally:
            hub.close()

    def test_tools_filter_and_disabled_servers(self, loop: Portal):
        """`tools` limits what a server exposes; a disabled server has no source."""
        hub = make_hub(loop, {
            "time": {"command": "mcp-server-time", "tools": ["convert_time"]},
            "off": {"command": "no-such-mcp-server-xyz", "disabled": True},
        })
        try:
            sources = hub.sources()
            assert [s.name for s in sources] == ["mcp:time"]
            assert [t.name for t in sources[0].list_tools()] == ["time.convert_time"]
        finally:
            hub.close()


class TestEntrySource:
    def test_an_entry_without_schema_takes_the_servers(self, hub: McpHub):
        """`{"name": "clock", "mcp": {...}}` picks one tool; its schema comes from the server."""
        source = hub.entry_source({"name": "clock", "description": "",
                                   "mcp": {"server": "time", "tool": "get_current_time"},
                                   "metadata": {"tags": ["time"]}})
        (tool,) = source.list_tools()
        assert tool.name == "clock"
        assert source.prefix == "clock"
        assert tool.params_schema["required"] == ["timezone"]
        assert tool.tags == ["time"]
        assert tool.description.startswith("Get current time")
        assert (tool.target.server, tool.target.tool) == ("time", "get_current_time")

    def test_an_entry_with_schema_does_not_start_the_server(self, loop: Portal):
        hub = make_hub(loop, {"ghost": {"command": "no-such-mcp-server-xyz"}})
        entry = {"name": "g", "description": "d", "paramsSchema": {"type": "object"},
                 "mcp": {"server": "ghost", "tool": "t"}}
        (tool,) = McpEntrySource(hub, entry).list_tools()
        assert tool.params_schema == {"type": "object"}
        assert tool.tags == ["mcp", "ghost"]

    def test_an_entry_naming_a_missing_tool_says_what_exists(self, hub: McpHub):
        source = hub.entry_source({"name": "x", "mcp": {"server": "time", "tool": "nope"}})
        with pytest.raises(ExecutionError, match=r"no tool 'nope'.*'get_current_time'"):
            source.list_tools()


# --- calls -------------------------------------------------------------------------------


class TestCalls:
    async def test_get_current_time_in_utc(self, adapter: McpAdapter, tools: dict[str, Tool]):
        """With format json the structured content is the result."""
        result = await run(adapter, tools["time.get_current_time"], {"timezone": "UTC"}, ctx())
        assert result["timezone"] == "UTC"
        assert result["datetime"].endswith("+00:00")

    async def test_raw_format_returns_the_content_list(self, adapter, tools):
        result = await run(adapter, tools["time.get_current_time"], {"timezone": "UTC"},
                           ctx(fmt="raw"))
        assert isinstance(result, list)
        assert result[0]["type"] == "text"
        assert '"timezone": "UTC"' in result[0]["text"]

    async def test_bad_timezone_is_an_execution_error_that_is_not_retried(self, adapter, tools):
        with pytest.raises(ExecutionError) as caught:
            await run(adapter, tools["time.get_current_time"], {"timezone": "Nowhere/Nope"}, ctx())
        assert caught.value.code is ErrorCode.EXECUTION_ERROR
        assert caught.value.retryable is False
        assert "Nowhere/Nope" in caught.value.message
        assert caught.value.details["content"][0]["type"] == "text"

    async def test_an_unknown_tool_is_a_permanent_execution_error(self, adapter, tools, hub):
        """The Python servers answer JSON-RPC -32602 'Unknown tool'."""
        ghost = Tool("time.vanished", "", {}, "mcp", McpTarget("time", "vanished", hub))
        with pytest.raises(ExecutionError, match="has no tool 'vanished'") as caught:
            await run(adapter, ghost, {}, ctx())
        assert caught.value.retryable is False
        assert caught.value.details["mcpCode"] == -32602

    async def test_an_unknown_server_is_a_permanent_execution_error(self, adapter, hub):
        tool = Tool("x.y", "", {}, "mcp", McpTarget("nowhere", "y", hub))
        with pytest.raises(ExecutionError, match="no MCP server named 'nowhere'") as caught:
            await run(adapter, tool, {}, ctx())
        assert caught.value.retryable is False

    async def test_one_text_content_is_text_output(self, adapter, tools):
        """Unstructured text is handed to the engine to parse (json) as TextOutput."""
        result = await run(adapter, tools["slow.echo"], {"text": '{"a": 1}'}, ctx())
        assert isinstance(result, TextOutput)
        assert result.data == '{"a": 1}'

    async def test_several_contents_are_a_list_of_dicts(self, adapter, tools):
        result = await run(adapter, tools["slow.several"], {}, ctx())
        assert [c["type"] for c in result] == ["text", "text", "image"]
        assert result[2]["mimeType"] == "image/png"

    async def test_a_tool_error_carries_the_servers_message(self, adapter, tools):
        with pytest.raises(ExecutionError, match="boom-42"):
            await run(adapter, tools["slow.fail"], {"message": "boom-42"}, ctx())

    async def test_secrets_of_the_server_are_added_to_the_context(self, adapter, tools):
        context = ctx()
        await run(adapter, tools["slow.echo"], {"text": "x"}, context)
        assert TOKEN in context.secrets

    async def test_a_timeout_cancels_on_the_server_and_the_session_goes_on(self, adapter, tools):
        """The engine cancels arun at its timeout: the server sees the cancellation, and the
        same session (same server process) answers the next call."""
        before = await run(adapter, tools["slow.stats"], {}, ctx())
        pid = await run(adapter, tools["slow.pid"], {}, ctx())
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                await run(adapter, tools["slow.sleep"], {"seconds": 5}, ctx(timeout_s=0.3))
        assert time.monotonic() - started < 1.5

        async def cancelled() -> bool:
            stats = await run(adapter, tools["slow.stats"], {}, ctx())
            return stats["cancelled"] == before["cancelled"] + 1

        for _ in range(40):
            if await cancelled():
                break
            await asyncio.sleep(0.05)
        assert await cancelled()
        assert await run(adapter, tools["slow.pid"], {}, ctx()) == pid
        assert await run(adapter, tools["slow.sleep"], {"seconds": 0.01}, ctx()) == {"slept": 0.01}

    async def test_the_read_timeout_guard_is_a_timeout(self, hub: McpHub):
        with pytest.raises(ToolCallError) as caught, _translate_errors("slow.sleep", "slow", "s"):
            await hub.acall("slow", "sleep", {"seconds": 3}, timeout_s=0.2)
        assert caught.value.code is ErrorCode.TIMEOUT

    async def test_concurrent_calls_share_one_session(self, adapter, tools):
        pids = await asyncio.gather(*(run(adapter, tools["slow.pid"], {}, ctx()) for _ in range(8)))
        assert len({p["result"] for p in pids}) == 1

    def test_arun_works_on_the_private_loop_itself(self, loop, adapter, tools):
        """The sync engine runs arun on the private loop: no hop, same session."""
        result = loop.run(run(adapter, tools["time.get_current_time"], {"timezone": "UTC"}, ctx()))
        assert result["timezone"] == "UTC"

    def test_arun_works_from_another_threads_loop(self, adapter, tools):
        """A user's loop in another thread (a Jupyter kernel's) awaits it too."""
        out: list[object] = []
        call = run(adapter, tools["slow.echo"], {"text": "from-thread"}, ctx())
        thread = threading.Thread(target=lambda: out.append(asyncio.run(call)))
        thread.start()
        thread.join(10)
        assert isinstance(out[0], TextOutput)
        assert out[0].data == "from-thread"


class TestLifecycle:
    async def test_a_lost_connection_is_retryable_and_the_next_call_restarts(self, loop):
        hub = make_hub(loop, {"slow": SERVERS["slow"]})
        adapter = McpAdapter()
        try:
            tools = {t.name: t for t in await hub.sources()[0].alist_tools()}
            first = await run(adapter, tools["slow.pid"], {}, ctx())
            with pytest.raises(ExecutionError, match="connection was lost") as caught:
                await run(adapter, tools["slow.crash"], {}, ctx())
            assert caught.value.retryable is True
            second = await run(adapter, tools["slow.pid"], {}, ctx())
            assert second != first
        finally:
            await hub.aclose()

    def test_close_stops_every_server_process(self, loop):
        before = live_children()
        hub = make_hub(loop)
        for source in hub.sources():
            source.list_tools()
        started = live_children() - before
        assert len(started) == 2
        hub.close()
        assert wait_until(lambda: not (live_children() & started)), live_children() & started

    def test_a_closed_hub_starts_sessions_again_on_demand(self, loop):
        hub = make_hub(loop, {"time": SERVERS["time"]})
        try:
            assert hub.sources()[0].list_tools()
            hub.close()
            result = asyncio.run(hub.acall("time", "get_current_time", {"timezone": "UTC"}))
            assert result.structured_content["timezone"] == "UTC"
        finally:
            hub.close()


# --- streamable HTTP ---------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SLOW_SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            return False
        return True

    try:
        assert wait_until(listening, 15), "the HTTP MCP server did not start"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


class TestHttp:
    async def test_tools_over_streamable_http(self, loop, http_server: str):
        hub = McpHub(
            {"web": {"url": http_server, "headers": {"Authorization": "Bearer ${TC_TEST_TOKEN}"}}},
            loop=loop, environ={"TC_TEST_TOKEN": TOKEN},
        )
        adapter = McpAdapter()
        try:
            tools = {t.name: t for t in await hub.sources()[0].alist_tools()}
            assert "web.sleep" in tools
            assert TOKEN in hub.secrets("web")
            result = await run(adapter, tools["web.echo"], {"text": "over http"}, ctx())
            assert result.data == "over http"
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.3):
                    await run(adapter, tools["web.sleep"], {"seconds": 5}, ctx(timeout_s=0.3))
            assert (await run(adapter, tools["web.echo"], {"text": "again"}, ctx())).data == "again"
        finally:
            await hub.aclose()


# --- error table -------------------------------------------------------------------------


def validation_error() -> Exception:
    """A pydantic ValidationError, as the SDK raises for a result it cannot read."""
    try:
        pydantic.TypeAdapter(int).validate_python("not an int")
    except pydantic.ValidationError as exc:
        return exc
    raise AssertionError("unreachable")


ERROR_TABLE = [
    (MCPError(-32000, "Connection closed"), ErrorCode.EXECUTION_ERROR, True),
    (MCPError(-32001, "timed out"), ErrorCode.TIMEOUT, True),
    (MCPError(-32602, "Unknown tool: x"), ErrorCode.EXECUTION_ERROR, False),
    (MCPError(-32602, "Invalid arguments: a must be int"), ErrorCode.INVALID_PARAMS, False),
    (MCPError(-32601, "Method not found"), ErrorCode.EXECUTION_ERROR, False),
    (MCPError(-32603, "Internal error"), ErrorCode.EXECUTION_ERROR, True),
    (ExceptionGroup("g", [MCPError(-32000, "closed")]), ErrorCode.EXECUTION_ERROR, True),
    (TimeoutError(), ErrorCode.TIMEOUT, True),
    (ConnectionResetError("reset"), ErrorCode.EXECUTION_ERROR, True),
    (anyio.ClosedResourceError(), ErrorCode.EXECUTION_ERROR, True),
    (anyio.BrokenResourceError(), ErrorCode.EXECUTION_ERROR, True),
    (anyio.EndOfStream(), ErrorCode.EXECUTION_ERROR, True),
    (validation_error(), ErrorCode.EXECUTION_ERROR, False),
]


@pytest.mark.parametrize(
    ("raised", "code", "retryable"), ERROR_TABLE,
    ids=["closed", "read-timeout", "unknown-tool", "invalid-params", "no-method", "internal",
         "group", "timeout", "reset", "closed-stream", "broken-stream", "end-of-stream",
         "bad-result"],
)
def test_sdk_failures_map_to_codes(raised: Exception, code: ErrorCode, retryable: bool):
    with pytest.raises(ToolCallError) as caught, _translate_errors("s.t", "s", "t"):
        raise raised
    assert caught.value.code is code
    assert caught.value.retryable is retryable
    assert caught.value.__cause__ is raised


def test_every_error_map_key_is_in_the_table():
    raised = {type(row[0]) for row in ERROR_TABLE}
    for key in _error_map():
        assert any(issubclass(kind, key) for kind in raised), key


# --- end to end: a registry file with mcpServers, through ToolCaller --------------------


@pytest.fixture(scope="module")
def caller(tmp_path_factory) -> Iterator[object]:
    from toolcaller import ToolCaller

    folder = tmp_path_factory.mktemp("registry")
    registry = {
        "tools": [{
            "name": "clock", "description": "The time somewhere",
            "paramsSchema": {"type": "object", "properties": {"timezone": {"type": "string"}},
                             "required": ["timezone"]},
            "mcp": {"server": "clocks", "tool": "get_current_time"},
        }],
        "mcpServers": {
            "time": {"command": "mcp-server-time"},
            "clocks": {"command": "mcp-server-time"},
            "slow": {"command": sys.executable, "args": [str(SLOW_SERVER)]},
            "ghost": {"command": "no-such-mcp-server-xyz"},
        },
    }
    path = folder / "tools.json"
    path.write_text(__import__("json").dumps(registry))
    made = ToolCaller.from_file(path)
    yield made
    made.close()


class TestEndToEnd:
    def test_discover_lists_servers_tools_and_reports_the_broken_one(self, caller):
        envelope = caller.handle({"action": "discover"})
        assert envelope["success"] is True
        names = [t["name"] for t in envelope["result"]["tools"]]
        assert "time.get_current_time" in names
        assert "slow.sleep" in names
        assert "clock" in names
        assert not any(n.startswith("clocks.") for n in names)  # picked by an entry
        (problem,) = envelope["result"]["problems"]
        assert problem["source"] == "mcp:ghost"

    def test_a_call_succeeds_with_the_structured_result(self, caller):
        envelope = caller.handle({"toolName": "time.get_current_time",
                                  "params": {"timezone": "UTC"}})
        assert envelope["success"] is True, envelope
        assert envelope["result"]["timezone"] == "UTC"
        assert envelope["metadata"]["attempts"] == 1

    def test_a_tool_error_is_one_execution_error(self, caller):
        envelope = caller.handle({"toolName": "clock", "params": {"timezone": "Nowhere/Nope"}})
        assert envelope["error"]["code"] == "EXECUTION_ERROR"
        assert envelope["metadata"]["attempts"] == 1
        assert "Nowhere/Nope" in envelope["error"]["message"]

    def test_params_are_checked_against_the_servers_schema(self, caller):
        envelope = caller.handle({"toolName": "time.get_current_time", "params": {}})
        assert envelope["error"]["code"] == "INVALID_PARAMS"
        assert envelope["metadata"]["attempts"] == 0

    def test_a_timeout_is_timeout_and_the_session_goes_on(self, caller):
        envelope = caller.call("slow.sleep", {"seconds": 5}, timeout=300, retries=0)
        assert envelope.to_dict()["error"]["code"] == "TIMEOUT"
        again = caller.call("slow.sleep", {"seconds": 0.01}).to_dict()
        assert again["result"] == {"slept": 0.01}

    async def test_acall_from_the_users_loop(self, caller):
        envelope = (await caller.acall("slow.echo", {"text": "[1, 2]"})).to_dict()
        assert envelope["result"] == "[1, 2]"  # text by nature: a string (rule 7)
        text = (await caller.acall("slow.echo", {"text": "not json"})).to_dict()
        assert text["result"] == "not json"

    def test_a_server_that_cannot_start_is_an_error_envelope(self, caller):
        envelope = caller.handle({"toolName": "ghost.anything", "params": {}})
        assert envelope["success"] is False
        assert "no-such-mcp-server-xyz" in envelope["error"]["message"]
