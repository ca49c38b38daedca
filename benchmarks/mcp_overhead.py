"""Per-call cost of MCP calls through toolcaller, over a bare SDK `Client` call on one loop.

Run: python -m benchmarks.mcp_overhead [--n 300]

Rows: the SDK's own `Client.call_tool` (its loop, no hop) as the baseline; `McpHub.acall` from
another loop (one hop to the private loop and back); `McpAdapter.arun` (plus result mapping);
`ToolCaller.acall` and `ToolCaller.call` (validation, envelope, history). The server is our
FastMCP test server over stdio (`tests/adapters/mcp_slow_server.py`, tool `echo`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._timing import asample_us, sample_us, summary, table
from toolcaller._loop import LoopThread
from toolcaller.adapters.base import AttemptContext
from toolcaller.adapters.mcp import McpAdapter
from toolcaller.sources.mcp import McpHub

SERVER = Path(__file__).resolve().parent.parent / "tests" / "adapters" / "mcp_slow_server.py"
CONFIG = {"bench": {"command": sys.executable, "args": [str(SERVER)]}}
ARGS = {"text": "hello"}


async def bare_sdk(n: int) -> dict[str, float]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    async with Client(params) as client:
        return summary(await asample_us(lambda: client.call_tool("echo", ARGS), n, warmup=50))


def through_toolcaller(n: int) -> list[dict[str, Any]]:
    loop = LoopThread("bench-mcp")
    hub = McpHub(CONFIG, loop=loop)
    adapter = McpAdapter(hub)
    tool = {t.name: t for t in hub.sources()[0].list_tools()}["bench.echo"]
    rows: list[dict[str, Any]] = []

    async def user_loop() -> None:
        rows.append({"path": "McpHub.acall (hop to the private loop)",
                     **summary(await asample_us(lambda: hub.acall("bench", "echo", ARGS), n,
                                                warmup=50))})
        rows.append({"path": "McpAdapter.arun (+ result mapping)",
                     **summary(await asample_us(
                         lambda: adapter.arun(tool, ARGS, AttemptContext(5.0)), n, warmup=50))})

    try:
        asyncio.run(user_loop())
        rows.extend(_engine_rows(n))
    finally:
        hub.close()
        loop.close()
    return rows


def _engine_rows(n: int) -> list[dict[str, Any]]:
    try:
        from toolcaller import ToolCaller
        from toolcaller.sources.mcp import attach_mcp_servers
    except ImportError as exc:  # the engine is not there yet
        return [{"path": f"ToolCaller: unavailable ({exc})"}]
    caller = ToolCaller(tools=[])
    try:
        attach_mcp_servers(caller, CONFIG)
        caller.call("bench.echo", ARGS)  # start the session
        rows = [{"path": "ToolCaller.call (sync)",
                 **summary(sample_us(lambda: caller.call("bench.echo", ARGS), n, warmup=50))}]

        async def acall_rows() -> dict[str, Any]:
            return {"path": "ToolCaller.acall (user loop)",
                    **summary(await asample_us(lambda: caller.acall("bench.echo", ARGS), n,
                                               warmup=50))}

        rows.append(asyncio.run(acall_rows()))
        return rows
    finally:
        caller.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = [{"path": "SDK Client.call_tool (baseline)", **asyncio.run(bare_sdk(args.n))}]
    rows.extend(through_toolcaller(args.n))
    base = rows[0]["median"]
    for row in rows:
        if "median" in row:
            row["overhead_us"] = row["median"] - base
    print(f"MCP call latency over stdio, microseconds, n={args.n}")
    print(table(rows, ["path", "median", "p99", "overhead_us"]))
    print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
