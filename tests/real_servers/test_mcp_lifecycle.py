"""MCP servers' lives: a slow cold start within the deadline, starting in the background, and
SIGTERM/SIGHUP of the process that holds them (a script, the CLI) stopping them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adapters.conftest import is_alive
from tests.helpers import LATE_MS
from tests.real_servers.conftest import SLOW_START, write_registry
from toolcaller import ToolCaller

pytestmark = [pytest.mark.integration, pytest.mark.mcp, pytest.mark.slow]

SLOW_SERVER = Path(__file__).parents[1] / "adapters" / "mcp_slow_server.py"
START_S = 7.0
"""How long the slow-starting server sleeps before it starts: more than the 5 s deadline."""


def wait_until(predicate: Callable[[], bool], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def slow_registry(folder: Path, **extra: object) -> Path:
    pytest.importorskip("mcp_server_time")
    return write_registry(folder, {"mcpServers": {"late": {
        "command": sys.executable, "args": [str(SLOW_START), str(START_S), "mcp-server-time"],
        **extra}}})


class TestColdStart:
    @pytest.mark.parametrize("picked", [False, True], ids=["whole-server", "picked-tool"])
    def test_first_call_answers_by_its_deadline_and_a_later_one_succeeds(
            self, tmp_path: Path, picked: bool) -> None:
        """The first call says the server is still starting, on time; the start goes on."""
        registry = slow_registry(tmp_path)
        name = "late.get_current_time"
        if picked:  # an entry with its schema: no listing needed, the attempt waits instead
            data = __import__("json").loads(registry.read_text())
            data["tools"] = [{"name": "clock", "description": "time",
                              "paramsSchema": {"type": "object"},
                              "mcp": {"server": "late", "tool": "get_current_time"}}]
            registry = write_registry(tmp_path, data)
            name = "clock"
        with ToolCaller.from_file(registry) as caller:
            first = caller.call(name, {"timezone": "UTC"}).to_dict()
            assert first["error"]["code"] == "TIMEOUT", first
            assert first["metadata"]["duration"] < 5000 + LATE_MS
            assert "still starting" in first["error"]["message"]
            assert "so far" in first["error"]["message"]
            hub = caller._hubs[0]
            assert wait_until(lambda: hub.is_started("late"), START_S + 20)
            second = caller.call(name, {"timezone": "UTC"}).to_dict()
            assert second["success"], second
            assert second["result"]["timezone"] == "UTC"

    def test_background_connect_starts_servers_without_waiting(self, tmp_path: Path) -> None:
        """connect='background' returns at once; the server starts and lists on its own."""
        registry = slow_registry(tmp_path)
        began = time.monotonic()
        with ToolCaller.from_file(registry, connect="background") as caller:
            assert time.monotonic() - began < 2.0
            hub = caller._hubs[0]
            assert wait_until(lambda: hub.cached_tools("late") != [], START_S + 20)
            envelope = caller.call("late.get_current_time", {"timezone": "UTC"}).to_dict()
            assert envelope["success"], envelope
            assert envelope["metadata"]["duration"] < 2000

    def test_per_server_options_let_a_slow_server_start_within_the_call(
            self, tmp_path: Path) -> None:
        """A server entry's options (a longer deadline) let the first call wait for it."""
        registry = slow_registry(tmp_path, options={"deadline": 40_000, "timeout": 20_000})
        with ToolCaller.from_file(registry) as caller:
            envelope = caller.call("late.get_current_time", {"timezone": "UTC"}).to_dict()
        assert envelope["success"], envelope


HOLDER = textwrap.dedent("""
    import sys, time
    from toolcaller import ToolCaller
    caller = ToolCaller.from_file(sys.argv[1])
    envelope = caller.call("slow.pid")
    print(envelope.result["result"] if envelope.success else envelope.to_json(), flush=True)
    time.sleep(60)
""")


def slow_server_registry(folder: Path) -> Path:
    pytest.importorskip("mcp")
    return write_registry(folder, {"mcpServers": {"slow": {
        "command": sys.executable, "args": [str(SLOW_SERVER)],
        "options": {"timeout": 20_000, "deadline": 30_000}}}})


def children_of(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finding the servers reads /proc")
class TestSignals:
    @pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
    def test_a_process_holding_a_caller_stops_its_servers(self, tmp_path: Path,
                                                          signum: int) -> None:
        """SIGTERM or SIGHUP of a script holding a ToolCaller stops its MCP server at once."""
        registry = slow_server_registry(tmp_path)
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(registry)],
                                  stdout=subprocess.PIPE, text=True, env=env)
        try:
            assert holder.stdout is not None
            line = holder.stdout.readline()
            assert line.strip().isdigit(), line
            server = int(line)
            assert is_alive(server)
            holder.send_signal(signum)
            assert holder.wait(10) == -signum  # it still ends as the signal says
            assert wait_until(lambda: not is_alive(server), 1.5), "the server outlived it"
        finally:
            holder.kill()
            holder.wait()
            if holder.stdout is not None:
                holder.stdout.close()

    def test_the_cli_stops_its_servers_on_sigterm(self, tmp_path: Path) -> None:
        """SIGTERM of `toolcaller call` in the middle of a call stops the MCP server too."""
        registry = slow_server_registry(tmp_path)
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
        cli = subprocess.Popen(
            [sys.executable, "-m", "toolcaller", "call", "slow.sleep", "--params",
             '{"seconds": 30}', "--registry", str(registry)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            servers: set[int] = set()
            assert wait_until(lambda: bool(servers.update(children_of(cli.pid)) or servers),
                              20)
            time.sleep(1.0)  # the call is running
            cli.send_signal(signal.SIGTERM)
            assert cli.wait(10) == -signal.SIGTERM
            assert wait_until(lambda: not any(is_alive(p) for p in servers), 1.5)
        finally:
            cli.kill()
            cli.wait()
