"""Overhead of MCP calls through toolcaller over the SDK's bare `Client.call_tool`.

Two processes of the same server (our FastMCP test server over stdio,
`tests/adapters/mcp_slow_server.py`, tool `echo`, given JSON text so that every way succeeds):
one session the SDK opens here, on this thread's event loop (the baseline, what a user of the
SDK alone writes), and the one toolcaller's hub keeps on the caller's private loop (the
registry's `mcpServers`, loaded with `ToolCaller.from_file`). The ways, called in shuffled
rounds so that load and drift hit them alike, each timed where it runs:

- `Client.call_tool`, the baseline, awaited on this thread's loop;
- `McpHub.acall` (the tool's `McpTarget.sessions`), `McpAdapter.invoke` (one attempt as the
  engine runs it: `toolcaller.testing.invoke`), `ToolCaller.acall`: awaited on the same loop,
  so each includes the hop to the private loop and back;
- `ToolCaller.call`: from this thread, sync.

Also printed: the process's CPU time per call (every thread's, the servers' excluded), which
the scheduling delays of a busy machine do not inflate as they do the wall time of hops.

    /work/venv/bin/python -m benchmarks.mcp_overhead [--n 1000] [--check]

Target: `ToolCaller.call` and `ToolCaller.acall` at most 10% over the baseline median, the
ratio computed in this run. `--check` exits 1 when either is over.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

from benchmarks.suite_kit import MCP_SERVER, mcp_registry, scratch
from toolcaller import ToolCaller
from toolcaller.adapters.mcp import McpAdapter, McpTarget
from toolcaller.testing import invoke

BUDGET = 0.10
ARGS = {"text": '{"ok": true}'}
BASE = "Client.call_tool"
ENGINE = ("ToolCaller.call", "ToolCaller.acall")


Sample = tuple[float, float]  # wall µs, process CPU µs (all threads: the private loop's too)


async def _timed(make: Callable[[], Awaitable[Any]]) -> Sample:
    cpu, start = time.process_time(), time.perf_counter()
    await make()
    return (time.perf_counter() - start) * 1e6, (time.process_time() - cpu) * 1e6


Way = Callable[[], Awaitable[Sample]]


def ways(caller: ToolCaller, client: Any) -> dict[str, Way]:
    """Build one way per name: an awaitable timing one call (wall and CPU µs)."""
    tool = caller.registry.get("bench.echo")
    assert tool is not None
    assert isinstance(tool.target, McpTarget)
    hub = tool.target.sessions
    adapter = McpAdapter()

    def timed(make: Callable[[], Awaitable[Any]]) -> Way:
        return lambda: _timed(make)

    async def sync_call() -> Sample:  # blocks this loop meanwhile: nothing else runs on it
        cpu, start = time.process_time(), time.perf_counter()
        caller.call("bench.echo", ARGS)
        return (time.perf_counter() - start) * 1e6, (time.process_time() - cpu) * 1e6

    return {
        BASE: timed(lambda: client.call_tool("echo", ARGS)),
        "McpHub.acall": timed(lambda: hub.acall("bench", "echo", ARGS)),
        "McpAdapter.invoke": timed(lambda: invoke(adapter, tool, ARGS, timeout=5000)),
        "ToolCaller.acall": timed(lambda: caller.acall("bench.echo", ARGS)),
        "ToolCaller.call": sync_call,
    }


async def run_shuffled(runners: dict[str, Way], n: int) -> dict[str, list[Sample]]:
    """Warm every way, then `n` rounds calling each once, in a new random order each round."""
    for run in runners.values():
        for _ in range(50):
            await run()
    samples: dict[str, list[Sample]] = {name: [] for name in runners}
    order = list(runners)
    for _ in range(n):
        random.shuffle(order)
        for name in order:
            samples[name].append(await runners[name]())
    return samples


async def measure(n: int, errlog: TextIO) -> dict[str, list[Sample]]:
    """Open both sessions (the SDK's in this task: anyio wants it closed by the same task)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER)])
    with scratch() as folder, ToolCaller.from_file(mcp_registry(folder)) as caller:
        envelope = await caller.acall("bench.echo", ARGS, timeout=30_000)  # starts the server
        assert envelope.success, envelope
        async with Client(stdio_client(server, errlog=errlog)) as client:
            return await run_shuffled(ways(caller, client), n)


def report(samples: dict[str, list[Sample]], n: int) -> float:
    """Print the table; return the worst engine overhead as a fraction of the baseline."""
    walls = {name: [w for w, _ in values] for name, values in samples.items()}
    base = statistics.median(walls[BASE])
    print(f"MCP call latency over stdio, µs, {n} calls each, shuffled")
    print(f"  {'way':<24} {'median':>8} {'p90':>8} {'cpu':>7} {'overhead':>9} {'ratio':>7}")
    for name, values in walls.items():
        median = statistics.median(values)
        p90 = statistics.quantiles(values, n=10)[-1]
        cpu = statistics.fmean(c for _, c in samples[name])
        print(f"  {name:<24} {median:8.1f} {p90:8.1f} {cpu:7.1f} {median - base:+9.1f} "
              f"{median / base - 1:+7.1%}")
    worst = max(statistics.median(walls[e]) / base - 1 for e in ENGINE)
    print(f"worst engine overhead {worst:+.1%} over {BASE} (budget {BUDGET:.0%})")
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="calls per way")
    parser.add_argument("--check", action="store_true", help=f"fail over {BUDGET:.0%}")
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"load average {os.getloadavg()[0]:.2f}")
    with open(os.devnull, "w") as quiet:  # the bare server's log lines
        worst = report(asyncio.run(measure(args.n, quiet)), args.n)
    print(f"({time.perf_counter() - started:.1f} s)")
    return 1 if args.check and worst > BUDGET else 0


if __name__ == "__main__":
    sys.exit(main())
