"""Fault injection into script, HTTP and MCP tools: each fault's code, in time, then recovery.

Scripts run `scripts/faulty.py`; HTTP tools call `FaultServer` (a stdlib server on 127.0.0.1
whose `/hang` never answers); MCP tools call `mcp_faulty_server.py` over stdio.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import check_envelope
from tests.reliability.conftest import (
    ADD_SCHEMA,
    MB,
    MCP_SERVER,
    SLACK_MS,
    FaultServer,
    assert_within,
    check_add_works,
    free_port,
    http_tool,
    live_children,
    py_tool,
    script_tool,
    timed,
    wait_until,
)
from toolcaller import ToolCaller

pytestmark = pytest.mark.integration


def run(caller: ToolCaller, name: str, params: dict[str, Any] | None = None,
        use_acall: bool = False, **options: Any) -> tuple[dict[str, Any], float]:
    """Call through `call()` or `acall()`; return the checked envelope and wall ms."""
    if use_acall:
        async def main() -> Any:
            return await caller.acall(name, params or {}, **options)

        envelope, wall = timed(lambda: asyncio.run(main()))
    else:
        envelope, wall = timed(lambda: caller.call(name, params or {}, **options))
    return check_envelope(envelope.to_dict()), wall


DRIVERS = pytest.mark.parametrize("use_acall", [False, True], ids=["call", "acall"])
HANG = {"timeout": 100, "deadline": 400, "retries": 2, "retryDelay": 0}  # room for 3 and hand-offs


# -- scripts -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scripts() -> Iterator[ToolCaller]:
    made = ToolCaller(tools=[script_tool(), script_tool("capped", maxOutputBytes=MB),
                             py_tool("add", schema=ADD_SCHEMA)])
    yield made
    made.close()


SCRIPT_FAULTS = [
    ({"mode": "exit"}, "EXECUTION_ERROR", "status 3"),
    ({"mode": "system_exit"}, "EXECUTION_ERROR", "status 2"),
    ({"mode": "keyboard_interrupt"}, "EXECUTION_ERROR", "SIGINT"),
    ({"mode": "kill", "sig": "SIGKILL"}, "EXECUTION_ERROR", "SIGKILL"),
    ({"mode": "kill", "sig": "SIGSEGV"}, "EXECUTION_ERROR", "SIGSEGV"),
    ({"mode": "garbage"}, "PARSE_ERROR", "not valid JSON"),
    ({"mode": "nan"}, "PARSE_ERROR", "NaN"),
    ({"mode": "close_stdout_exit"}, "PARSE_ERROR", "not valid JSON"),
    ({"mode": "close_stdout", "sleep": 0.05}, "PARSE_ERROR", "not valid JSON"),
]


class TestScriptFaults:
    @DRIVERS
    @pytest.mark.parametrize(("params", "code", "word"), SCRIPT_FAULTS,
                             ids=[f[0]["mode"] + f[0].get("sig", "") for f in SCRIPT_FAULTS])
    def test_fault(self, scripts: ToolCaller, use_acall: bool, params: dict[str, Any],
                   code: str, word: str) -> None:
        """Exits, signals and bad output map to their codes; nothing of the script is left."""
        before = live_children()
        envelope, wall = run(scripts, "script", params, use_acall, retries=0, deadline=4000)
        assert envelope["error"]["code"] == code, envelope["error"]
        assert word in envelope["error"]["message"]
        assert envelope["metadata"]["attempts"] == 1
        assert_within(envelope, wall, 4000)
        assert live_children() <= before
        check_add_works(scripts)

    @DRIVERS
    @pytest.mark.parametrize("mode", ["hang", "close_stdout"])
    def test_a_hang_times_out_and_its_group_is_killed(self, scripts: ToolCaller,
                                                      use_acall: bool, mode: str) -> None:
        """A script that never exits (stdout closed or not) is TIMEOUT by the deadline."""
        before = live_children()
        envelope, wall = run(scripts, "script", {"mode": mode}, use_acall, **HANG)
        assert envelope["error"]["code"] == "TIMEOUT"
        assert envelope["metadata"]["attempts"] == 3
        assert_within(envelope, wall, HANG["deadline"])
        assert live_children() <= before

    @DRIVERS
    @pytest.mark.parametrize(("tool", "size"), [("capped", 2 * MB), ("script", 100 * MB)],
                             ids=["2MB-over-1MB-cap", "100MB-over-default-cap"])
    def test_output_past_the_cap(self, scripts: ToolCaller, use_acall: bool, tool: str,
                                 size: int) -> None:
        """More than maxOutputBytes is a permanent EXECUTION_ERROR: one attempt, group killed."""
        envelope, wall = run(scripts, tool, {"mode": "big", "n": size}, use_acall,
                             deadline=4000)
        assert envelope["error"]["code"] == "EXECUTION_ERROR"
        assert "maxOutputBytes" in envelope["error"]["message"]
        assert envelope["metadata"]["attempts"] == 1
        assert_within(envelope, wall, 4000)

    def test_garbage_in_raw_format_is_returned_as_base64(self, scripts: ToolCaller) -> None:
        """format raw returns binary stdout untouched (base64 in JSON)."""
        envelope, _ = run(scripts, "script", {"mode": "garbage"}, format="raw", retries=0)
        assert envelope["success"] is True
        json.dumps(envelope, allow_nan=False)


# -- HTTP ----------------------------------------------------------------------------------


ROUTES = ["ok", "add", "hang", "headers-hang", "drip", "close", "garbage", "nan", "big",
          "echo500"]


@pytest.fixture(scope="module")
def web(fault_server: FaultServer) -> Iterator[ToolCaller]:
    tools = [http_tool(f"http.{r}", f"{fault_server.url}/{r}") for r in ROUTES]
    tools += [http_tool("http.refused", f"http://127.0.0.1:{free_port()}/x"),
              http_tool("http.big-allowed", f"{fault_server.url}/big",
                        maxResponseBytes=200 * MB),
              py_tool("add", schema=ADD_SCHEMA)]
    made = ToolCaller(tools=tools)
    yield made
    made.close()


def check_http_add_works(caller: ToolCaller) -> None:
    envelope = caller.call("http.add", {"a": 1, "b": 2}).to_dict()
    assert envelope["result"] == {"sum": 3}, envelope


HTTP_FAULTS = [
    ("hang", HANG, "TIMEOUT", 3),
    ("headers-hang", HANG, "TIMEOUT", 3),
    ("drip", HANG, "TIMEOUT", 3),
    ("close", {"retries": 0}, "EXECUTION_ERROR", 1),
    ("close", {"retries": 2, "retryDelay": 0}, "RETRY_EXHAUSTED", 3),
    ("refused", {"retries": 2, "retryDelay": 0}, "RETRY_EXHAUSTED", 3),
    ("garbage", {}, "PARSE_ERROR", 1),
    ("nan", {}, "PARSE_ERROR", 1),
    ("big", {}, "EXECUTION_ERROR", 1),
    ("echo500", {"retries": 1, "retryDelay": 0}, "RETRY_EXHAUSTED", 2),
]


class TestHttpFaults:
    @DRIVERS
    @pytest.mark.parametrize(("route", "options", "code", "attempts"), HTTP_FAULTS,
                             ids=[f"{f[0]}-{f[2]}" for f in HTTP_FAULTS])
    def test_fault(self, web: ToolCaller, use_acall: bool, route: str,
                   options: dict[str, Any], code: str, attempts: int) -> None:
        """Silence, drips, dropped connections, bad bodies and 5xx get their codes in time."""
        deadline = options.get("deadline", 3000)
        envelope, wall = run(web, f"http.{route}", {}, use_acall,
                             **{"deadline": deadline, **options})
        assert envelope["error"]["code"] == code, envelope["error"]
        assert envelope["metadata"]["attempts"] == attempts
        assert_within(envelope, wall, deadline)
        check_http_add_works(web)
        check_add_works(web)

    @DRIVERS
    def test_a_100_mb_body_within_the_cap_is_a_success(self, web: ToolCaller,
                                                       use_acall: bool) -> None:
        """100 MB under a 200 MB maxResponseBytes arrives whole (format raw)."""
        envelope, _ = run(web, "http.big-allowed", {"mb": 100}, use_acall, format="raw",
                          retries=0, timeout=20_000, deadline=20_000)
        assert len(envelope["result"]) == 100 * MB
        del envelope
        check_http_add_works(web)


# -- MCP -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolCaller]:
    pytest.importorskip("mcp")
    folder = tmp_path_factory.mktemp("mcp-faults")
    registry = {"tools": [], "mcpServers": {
        "f": {"command": sys.executable, "args": [str(MCP_SERVER)]}}}
    path = folder / "tools.json"
    path.write_text(json.dumps(registry))
    made = ToolCaller.from_file(path)
    check_add_works(made, "f.add")  # the server is up before any timing starts
    yield made
    made.close()


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def check_mcp_add_works(caller: ToolCaller) -> None:
    """A healthy MCP call succeeds (default options: a dead server is restarted by a retry)."""
    envelope = caller.call("f.add", {"a": 1, "b": 2}, timeout=5000, deadline=10_000).to_dict()
    assert envelope["result"] == {"sum": 3.0}, envelope


MCP_FAULTS = [
    ("hang", {}, HANG, "TIMEOUT"),
    ("block", {"seconds": 1}, HANG, "TIMEOUT"),
    ("crash", {}, {"retries": 0}, "EXECUTION_ERROR"),
    ("sigkill", {}, {"retries": 0}, "EXECUTION_ERROR"),
    # The SDK's server either hangs or dies when a tool raises a BaseException (it races):
    # TIMEOUT or a lost connection, both by the deadline.
    ("system_exit", {}, {"retries": 0, "timeout": 1000}, "TIMEOUT|EXECUTION_ERROR"),
    ("custom_base", {}, {"retries": 0, "timeout": 1000}, "TIMEOUT|EXECUTION_ERROR"),
]


class TestMcpFaults:
    @DRIVERS
    @pytest.mark.parametrize(("fn", "params", "options", "code"), MCP_FAULTS,
                             ids=[f[0] for f in MCP_FAULTS])
    def test_fault(self, mcp: ToolCaller, use_acall: bool, fn: str, params: dict[str, Any],
                   options: dict[str, Any], code: str) -> None:
        """Hangs, crashes and big text from an MCP server get their codes in time."""
        check_mcp_add_works(mcp)  # a server killed by the previous case is back
        deadline = options.get("deadline", 3000)
        envelope, wall = run(mcp, f"f.{fn}", params, use_acall,
                             **{"deadline": deadline, **options})
        assert envelope["error"]["code"] in code.split("|"), envelope["error"]
        assert_within(envelope, wall, deadline)
        check_mcp_add_works(mcp)

    @DRIVERS
    def test_big_text_is_a_string_in_time(self, mcp: ToolCaller, use_acall: bool) -> None:
        """5 MB of text from a tool without an output schema is a string (rule 7), in time."""
        check_mcp_add_works(mcp)
        envelope, wall = run(mcp, "f.big", {"mb": 5}, use_acall, deadline=3000, retries=0)
        assert envelope["success"], envelope.get("error")
        assert len(envelope["result"]) >= 5_000_000
        assert_within(envelope, wall, 3000)

    @pytest.mark.parametrize("fn", ["nan", "garbage", "close_stdout"])
    def test_odd_but_answered(self, mcp: ToolCaller, fn: str) -> None:
        """NaN becomes null on the server, garbage lines on stdout are skipped: no crash."""
        check_mcp_add_works(mcp)
        envelope, _ = run(mcp, f"f.{fn}", {}, retries=0)
        json.dumps(envelope, allow_nan=False)
        check_mcp_add_works(mcp)

    def test_one_server_process_at_a_time(self, mcp: ToolCaller) -> None:
        """After crashes and restarts, one server process runs (none left behind)."""
        check_mcp_add_works(mcp)
        servers = lambda: [p for p in live_children() if "mcp_faulty_server" in cmdline(p)]  # noqa: E731
        assert wait_until(lambda: len(servers()) == 1, 5.0), servers()


COLD_CALL = """
import json, sys, time
from toolcaller import ToolCaller
began = time.perf_counter()
caller = ToolCaller.from_file(sys.argv[1])
envelope = caller.call("hang", {}, timeout=100, deadline=200, retries=0).to_dict()
print(json.dumps({"code": envelope["error"]["code"],
                  "duration": envelope["metadata"]["duration"],
                  "wall": (time.perf_counter() - began) * 1000}))
caller.close()
"""


def test_a_cold_mcp_call_keeps_its_deadline(tmp_path: Path) -> None:
    """The first call in a fresh process (as with the CLI) answers by its deadline.

    Starting the server, importing the SDK and the handshake all happen inside the call's
    budget; none of it may hold the envelope past the deadline.
    """
    pytest.importorskip("mcp")
    registry = {"tools": [{"name": "hang", "description": "hang", "paramsSchema": {},
                           "mcp": {"server": "f", "tool": "hang"}}],
                "mcpServers": {"f": {"command": sys.executable, "args": [str(MCP_SERVER)]}}}
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(registry))
    done = subprocess.run([sys.executable, "-c", COLD_CALL, str(path)], capture_output=True,
                          timeout=60, cwd=Path(__file__).parents[2], check=True)
    figures = json.loads(done.stdout)
    assert figures["code"] == "TIMEOUT"
    assert figures["duration"] <= 200 + SLACK_MS, figures
