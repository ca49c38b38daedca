"""Overhead of MCP calls through toolcaller over a bare `ClientSession.call_tool`, same session.

One server (our FastMCP test server over stdio, `tests/adapters/mcp_slow_server.py`, tool
`echo`, given JSON text so that every way succeeds) and one session: the one toolcaller's hub
holds open on its private loop. The ways, called in shuffled rounds so that load and drift hit
them alike, each timed where it runs (the harness's own thread hops are not counted):

- `ClientSession.call_tool`, the baseline: `client.session.call_tool` awaited on the private
  loop, where the session lives;
- `Client.call_tool`: the SDK's wrapper around it, which toolcaller awaits (same loop);
- `McpHub.acall`, `McpAdapter.arun`, `ToolCaller.acall`: awaited on an event loop in the main
  thread (a user's loop), so each includes the hop to the private loop and back;
- `ToolCaller.call`: from the main thread, sync.

Also printed: the process's CPU time per call (every thread's, the server's excluded), which
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
from pathlib import Path
from typing import Any

from toolcaller import ToolCaller
from toolcaller.adapters.base import AttemptContext
from toolcaller.adapters.mcp import McpAdapter
from toolcaller.sources.mcp import attach_mcp_servers

BUDGET = 0.10
SERVER = Path(__file__).resolve().parent.parent / "tests" / "adapters" / "mcp_slow_server.py"
CONFIG = {"bench": {"command": sys.executable, "args": [str(SERVER)]}}
ARGS = {"text": '{"ok": true}'}
BASE = "ClientSession.call_tool"
ENGINE = ("ToolCaller.call", "ToolCaller.acall")


Sample = tuple[float, float]  # wall µs, process CPU µs (all threads: the private loop's too)


async def _timed(make: Callable[[], Awaitable[Any]]) -> Sample:
    cpu, start = time.process_time(), time.perf_counter()
    await make()
    return (time.perf_counter() - start) * 1e6, (time.process_time() - cpu) * 1e6


def ways(caller: ToolCaller) -> dict[str, Callable[[], Sample]]:
    """Build one zero-argument function per way, returning that call's wall and CPU µs."""
    hub = attach_mcp_servers(caller, CONFIG)
    envelope = caller.call("bench.echo", ARGS)  # starts the session
    assert envelope.success, envelope
    private = caller.loop_thread
    client = private.run(hub._get("bench").session())  # the hub's own live session
    session = client.session
    tool = caller.registry.get("bench.echo")
    assert tool is not None
    adapter = McpAdapter(hub)
    user = asyncio.new_event_loop()

    def on_private(make: Callable[[], Awaitable[Any]]) -> Callable[[], Sample]:
        return lambda: private.run(_timed(make))

    def on_user(make: Callable[[], Awaitable[Any]]) -> Callable[[], Sample]:
        return lambda: user.run_until_complete(_timed(make))

    def sync_call() -> Sample:
        cpu, start = time.process_time(), time.perf_counter()
        caller.call("bench.echo", ARGS)
        return (time.perf_counter() - start) * 1e6, (time.process_time() - cpu) * 1e6

    return {
        BASE: on_private(lambda: session.call_tool("echo", ARGS)),
        "Client.call_tool": on_private(lambda: client.call_tool("echo", ARGS)),
        "McpHub.acall": on_user(lambda: hub.acall("bench", "echo", ARGS)),
        "McpAdapter.arun": on_user(lambda: adapter.arun(tool, ARGS, AttemptContext(5.0))),
        "ToolCaller.acall": on_user(lambda: caller.acall("bench.echo", ARGS)),
        "ToolCaller.call": sync_call,
    }


def run_shuffled(runners: dict[str, Callable[[], Sample]], n: int) -> dict[str, list[Sample]]:
    for run in runners.values():
        for _ in range(50):
            run()
    samples: dict[str, list[Sample]] = {name: [] for name in runners}
    order = list(runners)
    for _ in range(n):
        random.shuffle(order)
        for name in order:
            samples[name].append(runners[name]())
    return samples


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
    with ToolCaller(tools=[]) as caller:
        worst = report(run_shuffled(ways(caller), args.n), args.n)
    print(f"({time.perf_counter() - started:.1f} s)")
    return 1 if args.check and worst > BUDGET else 0


if __name__ == "__main__":
    sys.exit(main())
