"""Per-call overhead of `ToolCaller` over the bare tool, for every kind of tool available.

Python tools reuse `benchmarks.overhead`; script, HTTP and MCP tools run only when their
adapters exist, each against its own bare baseline (`subprocess.run`, `httpx.Client.get`, the
MCP SDK's `Client.call_tool`).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any, TextIO

from benchmarks import overhead, pool_tools
from benchmarks._timing import asample_us, sample_us, summary
from benchmarks.suite_kit import (
    MCP_SERVER,
    http_registry,
    http_server,
    mcp_registry,
    row,
    scratch,
    script_registry,
    skipped,
)
from toolcaller import ToolCaller, tool

SECTION = "overhead"
PARAMS = {"a": 1, "b": 2}


def run(quick: bool) -> list[dict[str, Any]]:
    """All overhead rows: python (sync, async, process), script, HTTP, MCP."""
    rows = python_rows(2_000 if quick else 20_000)
    rows += process_rows(50 if quick else 500)
    rows += script_rows(20 if quick else 100)
    rows += http_rows(200 if quick else 2_000)
    rows += mcp_rows(50 if quick else 300)
    return rows


def _us(case: str, via: dict[str, float], bare: dict[str, float], note: str = "") -> dict[str, Any]:
    return row(SECTION, case, via["median"], "µs", p99=via["p99"], reference=bare["median"],
               note=note)


def python_rows(n: int) -> list[dict[str, Any]]:
    """Sync and async Python tools, through call/acall/handle (`benchmarks.overhead.measure`)."""
    out = []
    for measured in overhead.measure(n):
        via = {"median": float(measured["median µs"]),  # type: ignore[arg-type]
               "p99": float(measured["p99 µs"])}  # type: ignore[arg-type]
        bare = {"median": float(measured["bare median µs"])}  # type: ignore[arg-type]
        out.append(_us(f"python {measured['case']}", via, bare, "reference: the bare function"))
    return out


def process_rows(n: int) -> list[dict[str, Any]]:
    """A sync tool with isolation 'process': a warm child per attempt (the first call untimed)."""
    caller = ToolCaller(tools=[tool(name="padd", isolation="process")(pool_tools.add)])
    try:
        first = caller.call("padd", PARAMS)
        if not first.success:
            return [skipped(SECTION, "python process, call()", str(first.error))]
        bare = summary(sample_us(lambda: pool_tools.add(1, 2), 10_000))
        via = summary(sample_us(lambda: caller.call("padd", PARAMS), n, warmup=20))
        return [_us("python process, call()", via, bare, "reference: the bare function")]
    finally:
        caller.close()


def script_rows(n: int) -> list[dict[str, Any]]:
    """A Python script tool vs `subprocess.run` of the same command."""
    try:
        import toolcaller.adapters.script  # noqa: F401
    except ImportError as exc:
        return [skipped(SECTION, "script, call()", f"no script adapter ({exc})")]
    with scratch() as folder:
        caller = ToolCaller.from_file(script_registry(folder))
        command = [sys.executable, "-S", str(folder / "add.py")]
        stdin = json.dumps(PARAMS).encode()
        try:
            check = caller.call("script.add", PARAMS)
            if not check.success:
                return [skipped(SECTION, "script, call()", str(check.error))]
            bare = summary(sample_us(
                lambda: json.loads(subprocess.run(command, input=stdin, capture_output=True,
                                                  check=True).stdout), n, warmup=5))
            via = summary(sample_us(lambda: caller.call("script.add", PARAMS), n, warmup=5))
        finally:
            caller.close()
    return [_us("script, call()", via, bare, "reference: subprocess.run, same script")]


def http_rows(n: int) -> list[dict[str, Any]]:
    """An HTTP GET tool vs a bare pooled `httpx.Client().get` on the same local server."""
    try:
        import httpx

        import toolcaller.adapters.http  # noqa: F401
    except ImportError as exc:
        return [skipped(SECTION, "http, call()", f"no HTTP adapter ({exc})")]
    with scratch() as folder, http_server() as base:
        caller = ToolCaller.from_file(http_registry(folder, base))
        client = httpx.Client()
        try:
            check = caller.call("http.add", PARAMS)
            if not check.success:
                return [skipped(SECTION, "http, call()", str(check.error))]
            bare = summary(sample_us(lambda: client.get(f"{base}/add", params=PARAMS).json(),
                                     n, warmup=50))
            via = summary(sample_us(lambda: caller.call("http.add", PARAMS), n, warmup=50))

            async def async_rows() -> tuple[dict[str, float], dict[str, float]]:
                async with httpx.AsyncClient() as aclient:
                    abare = summary(await asample_us(
                        lambda: aclient.get(f"{base}/add", params=PARAMS), n, warmup=50))
                avia = summary(await asample_us(lambda: caller.acall("http.add", PARAMS), n,
                                                warmup=50))
                return abare, avia

            abare, avia = asyncio.run(async_rows())
        finally:
            client.close()
            caller.close()
    return [_us("http, call()", via, bare, "reference: httpx.Client().get, keep-alive"),
            _us("http, acall()", avia, abare, "reference: httpx.AsyncClient().get")]


def mcp_rows(n: int) -> list[dict[str, Any]]:
    """An MCP stdio tool vs the SDK's own `Client.call_tool` on a session of its own.

    Both talk to a process of the same test server (`tests/adapters/mcp_slow_server.py`,
    tool `echo`). The bare session lives on this thread's loop; toolcaller's lives on the
    caller's private loop, so `acall()` includes the hop there and back and `call()` the hop
    from this thread.
    """
    args = {"text": '{"sum": 3}'}  # echoed back as text: valid JSON, so the result parses
    with scratch() as folder:
        try:
            path = mcp_registry(folder)
        except LookupError as why:
            return [skipped(SECTION, "mcp, call()", str(why))]
        with ToolCaller.from_file(path) as caller:
            check = caller.call("bench.echo", args, timeout=30_000)  # starts the server
            if not check.success:
                return [skipped(SECTION, "mcp, call()", str(check.error))]
            with open(os.devnull, "w") as quiet:  # the bare server's log lines
                bare = asyncio.run(_sdk_calls(n, args, quiet))
            via = summary(sample_us(lambda: caller.call("bench.echo", args), n, warmup=30))

            async def acall() -> dict[str, float]:
                return summary(await asample_us(lambda: caller.acall("bench.echo", args), n,
                                                warmup=30))

            avia = asyncio.run(acall())
    note = "reference: the SDK's Client.call_tool on its own stdio session, on this loop"
    return [_us("mcp, call()", via, bare, note), _us("mcp, acall()", avia, bare, note)]


async def _sdk_calls(n: int, args: dict[str, Any], errlog: TextIO) -> dict[str, float]:
    """Time `mcp.Client.call_tool` on a session opened here, to a process of the same server."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER)])
    async with Client(stdio_client(server, errlog=errlog)) as client:
        return summary(await asample_us(lambda: client.call_tool("echo", args), n, warmup=30))
