"""`toolcaller serve` as a user types it, and `serve`/`build_server` as Python uses them."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.serve.conftest import REGISTRY, ROOT, connect, serve_argv, server_env
from toolcaller import ToolCaller, UsageError
from toolcaller.serve import build_server, serve, stdio_config

pytestmark = [pytest.mark.mcp]


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolcaller", *args], capture_output=True,
                          text=True, timeout=timeout, env=server_env(), stdin=subprocess.DEVNULL,
                          check=False)


class TestCommandLine:
    def test_print_config_prints_the_entry_that_starts_the_server(self, tmp_path):
        """--print-config: an mcpServers entry with this Python, the registry's full path and
        the filter; nothing is served."""
        relative = Path("tests/serve/fixtures/registry.json")
        done = subprocess.run(
            [sys.executable, "-m", "toolcaller", "serve", "--registry", str(relative),
             "--filter", "tag:math", "--print-config"], capture_output=True, text=True,
            cwd=ROOT, env=server_env(), timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        entry = json.loads(done.stdout)["mcpServers"]["toolcaller"]
        assert entry["command"] == sys.executable
        assert entry["args"] == ["-m", "toolcaller", "serve", "--registry", str(REGISTRY),
                                 "--filter", "tag:math"]
        assert entry["env"] == {"PYTHONPATH": str(ROOT)}

    def test_a_bad_registry_is_a_usage_error_with_nothing_on_stdout(self, tmp_path):
        """Exit 2, the problem on stderr, stdout empty (a client reads protocol there)."""
        bad = tmp_path / "bad.json"
        bad.write_text('{"tools": [{"name": "x"}]}')
        done = _run("serve", "--registry", str(bad))
        assert done.returncode == 2
        assert done.stdout == ""
        assert str(bad) in done.stderr

    def test_a_taken_port_is_a_usage_error(self):
        """Exit 2 and a message naming the port when HTTP cannot listen."""
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            done = _run("serve", "--transport", "http", "--port", str(port))
        assert done.returncode == 2
        assert f"127.0.0.1:{port}" in done.stderr

    def test_help_names_every_option(self):
        """`toolcaller serve --help` documents the transport, port, filter and config."""
        done = _run("serve", "--help")
        for option in ("--transport", "--port", "--filter", "--print-config", "--registry"):
            assert option in done.stdout

    @pytest.mark.integration
    async def test_the_filter_limits_what_is_listed_and_called(self, tmp_path):
        """--filter serves only matching tools; the others are unknown tools (-32602)."""
        from mcp import MCPError

        argv = serve_argv("--filter", "tag:math -name:*async*")
        async with connect("stdio", tmp_path, argv=argv) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            with pytest.raises(MCPError) as caught:
                await client.call_tool("demo.fail", {})
        assert names == ["math.add"]
        assert caught.value.code == -32602
        assert "filter" in caught.value.message


class TestPython:
    async def test_calls_are_recorded_in_the_callers_history(self):
        """Served calls land in the history: done, failed and cancelled alike."""
        from mcp import Client

        with ToolCaller() as caller:
            async with Client(build_server(caller)) as client:  # in memory
                await client.call_tool("math.add", {"a": 1, "b": 2})
                await client.call_tool("demo.fail", {}, meta={"progress_token": "t"})
                with anyio.move_on_after(0.3):
                    await client.call_tool("demo.slow", {"seconds": 10})
                await anyio.sleep(0.1)
            records = caller.history.records()
        assert [(r.tool_name, r.status) for r in records] == [
            ("math.add", "success"), ("demo.fail", "failure"), ("demo.slow", "cancelled")]
        assert all(r.tool_call_id and r.tool_call_id.startswith("mcp-") for r in records)

    async def test_a_cancelled_call_makes_no_more_attempts(self):
        """notifications/cancelled during a retry wait ends the call: no attempt follows."""
        from mcp import Client

        runs: list[int] = []

        def flaky() -> None:
            runs.append(1)
            raise ConnectionError("down")

        with ToolCaller(tools=[flaky]) as caller:
            async with Client(build_server(caller)) as client:
                with anyio.move_on_after(0.3):  # the first retry waits 1000 ms
                    await client.call_tool("flaky", {})
                await anyio.sleep(1.2)
            [record] = caller.history.records()
        assert runs == [1]
        assert record.status == "cancelled"

    def test_serve_in_a_running_loop_asks_for_aserve(self):
        """serve() blocks: inside an event loop it says to await aserve()."""
        async def inside() -> None:
            with ToolCaller() as caller, pytest.raises(UsageError, match="aserve"):
                serve(caller)

        anyio.run(inside)

    def test_an_unknown_transport_is_a_usage_error(self):
        """Only stdio and http exist."""
        with ToolCaller() as caller, pytest.raises(UsageError, match="'pipe'"):
            serve(caller, transport="pipe")  # type: ignore[arg-type]

    def test_stdio_config_passes_the_python_path_on(self, monkeypatch):
        """MCP clients start servers with a minimal environment: PYTHONPATH goes in `env`."""
        monkeypatch.setenv("PYTHONPATH", "/somewhere")
        assert stdio_config(plugins=True) == {
            "command": sys.executable, "args": ["-m", "toolcaller", "serve", "--plugins"],
            "env": {"PYTHONPATH": "/somewhere"}}
        monkeypatch.delenv("PYTHONPATH")
        assert "env" not in stdio_config()
