"""Serving again: toolcaller as a client of `toolcaller serve`, and an MCP server re-served."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import LATE_MS
from tests.serve.conftest import FIXTURES, ROOT, connect, serve_argv, server_env
from toolcaller import ToolCaller
from toolcaller.serve import stdio_config

pytestmark = [pytest.mark.integration, pytest.mark.mcp]

# (tool, params, options): every code, and results of every shape, from the demo registry
REQUESTS: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [
    ("math.add", {"a": 1, "b": 2}, None),
    ("text.echo", {"text": "hello", "upper": True}, None),
    ("data.table", {"rows": 3}, None),
    ("script.wc", {"text": "two words\nand more"}, None),
    ("http.echo", {"text": "hi", "count": 3}, None),
    ("demo.flaky", {"failures": 1, "key": "served-twice"}, None),
    ("demo.fail", {}, None),
    ("math.divide", {"a": 1, "b": 0}, None),
    ("demo.not_found", {"item": "x"}, None),
    ("http.status", {"code": 404}, None),
    ("http.status", {"code": 503}, None),
    ("demo.not_json", {}, None),
    ("script.not_json", {}, None),
    ("demo.nan", {}, None),
    ("math.add", {"a": "one", "b": 2}, None),
    ("math.ad", {"a": 1, "b": 2}, None),
    ("demo.slow", {"seconds": 5}, {"timeout": 100, "retries": 0}),
    ("demo.hang", {}, None),
    ("demo.login", {"username": "ann", "password": "hunter22"}, None),
]


def _client_registry(tmp_path: Path) -> Path:
    entry = stdio_config()
    entry["env"] = {"PYTHONPATH": str(ROOT)}
    path = tmp_path / "client.json"
    path.write_text(json.dumps({"mcpServers": {"served": entry}}))
    return path


def test_a_toolcaller_client_gets_the_envelopes_of_direct_calls(tmp_path):
    """Through an mcpServers entry that starts `toolcaller serve`, codes and results match."""
    with ToolCaller() as direct, ToolCaller.from_file(_client_registry(tmp_path)) as proxied:
        listed = proxied.discover().result["tools"]  # starts the served process
        assert {t["name"] for t in listed} == {
            f"served.{t['name']}" for t in direct.discover().result["tools"]}
        for name, params, options in REQUESTS:
            want = direct.call(name, params, options)
            got = proxied.call(f"served.{name}", params, options)
            assert (got.success, got.code, got.result) == (want.success, want.code, want.result), (
                name, params, got.error)
            assert "hunter22" not in got.to_json()


def test_the_served_schemas_are_the_direct_ones(tmp_path):
    """A served tool's paramsSchema, as the client discovers it, is the direct one."""
    with ToolCaller() as direct, ToolCaller.from_file(_client_registry(tmp_path)) as proxied:
        schemas = {t["name"]: t["paramsSchema"] for t in direct.discover().result["tools"]}
        for tool in proxied.discover().result["tools"]:
            assert tool["paramsSchema"] == schemas[tool["name"].removeprefix("served.")]


async def test_a_reserved_mcp_server_keeps_schemas_and_annotations(tmp_path):
    """An MCP server served again through toolcaller lists its tools as the server does."""
    from mcp import Client, StdioServerParameters

    upstream = StdioServerParameters(command="python3", args=[str(FIXTURES / "upstream.py")],
                                     env=server_env())
    async with Client(upstream) as client:  # type: ignore[arg-type]
        own = {t.name: t for t in (await client.list_tools()).tools}
    async with connect("stdio", tmp_path,
                       argv=serve_argv(registry=FIXTURES / "proxy.json")) as client:
        served = {t.name: t for t in (await client.list_tools()).tools}
        lookup = await client.call_tool("whole.lookup", {"key": "k"})
    assert set(served) == {"up.stall", "whole.lookup", "whole.stall"}
    for name, tool in own.items():
        again = served[f"whole.{name}"]
        assert again.input_schema == tool.input_schema
        assert again.output_schema == tool.output_schema
        assert again.annotations == tool.annotations
        assert again.title == tool.title
    assert served["up.stall"].annotations == own["stall"].annotations
    assert lookup.structured_content == {"key": "k", "value": "K"}


async def test_a_reserved_server_gets_the_timeout_it_lacks(tmp_path):
    """The entry's timeout cuts a call the upstream server would let run on."""
    async with connect("stdio", tmp_path,
                       argv=serve_argv(registry=FIXTURES / "proxy.json")) as client:
        await client.list_tools()  # the upstream servers start here, not in the timed call
        started = time.monotonic()
        result = await client.call_tool("up.stall", {"seconds": 30})
        elapsed_ms = (time.monotonic() - started) * 1000
        after = await client.call_tool("whole.lookup", {"key": "still"})
    assert result.is_error is True
    assert (result.meta or {})["toolcaller/error"]["code"] == "TIMEOUT"
    assert elapsed_ms < 300 + LATE_MS * 4
    assert after.structured_content == {"key": "still", "value": "STILL"}
