"""`toolcaller serve` against FastMCP, both serving the same `add` over stdio.

    /work/venv/bin/python -m benchmarks.serve [--n 300] [--rounds 6] [--check]

Needs the `mcp` extra and `fastmcp` (`pip install fastmcp`; 4.x runs beside mcp 2.3).

Round trip: both servers run at once; one client per server sends `tools/call add {"a": 1,
"b": 2}` one after the other, in alternating rounds so that load and drift hit both alike.
Two clients measure it:

- a minimal JSON-RPC client (lines on the pipes, legacy handshake): the round trip is the
  server's and the pipe's, the client adds next to nothing. The target is read here:
  toolcaller's median at most 0.5× FastMCP's, for the sync `add` and the async one;
- the official `mcp` SDK `Client` (2026-07-28 era), for reference: the SDK client's own
  work per call (validation, its tools/list for output schemas) is in both figures alike.

Concurrency: 200 calls of a tool that sleeps 50 ms, sent at once over one session (minimal
client), three times, the best kept. The ideal is 50 ms; the target is at most 1.2× it. The
same 200 calls of a no-op tool show the floor: what the server needs to take in and answer 200
calls even when the tool takes no time, and `total / (50 ms + floor)` says whether the 50 ms
waits overlapped. The SDK's bare low-level server (its own stdio transport, a handler that
just adds or sleeps, no engine) is measured the same way: the SDK's own floor.

Last, each server's CPU time per call over a burst of 500 calls (psutil): a figure that the
load of other processes on the machine skews less than wall-clock times.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ROUND_TRIP_TARGET = 0.5
CONCURRENCY_TARGET = 1.2
CONCURRENT_CALLS = 200
SLEEP_MS = 50.0


# -- the tools, the same on both sides ------------------------------------------------------


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


async def add_async(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


async def sleep_ms(ms: float = SLEEP_MS) -> float:
    """Sleep `ms` milliseconds."""
    await asyncio.sleep(ms / 1000.0)
    return ms


def _registry(folder: Path) -> Path:
    numbers = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
               "required": ["a", "b"]}
    tools = [
        {"name": "add", "description": "Add two numbers.", "paramsSchema": numbers,
         "python": "benchmarks.serve:add"},
        {"name": "add_async", "description": "Add two numbers.", "paramsSchema": numbers,
         "python": "benchmarks.serve:add_async"},
        {"name": "sleep_ms", "description": "Sleep.", "paramsSchema": {
            "type": "object", "properties": {"ms": {"type": "number"}}},
         "python": "benchmarks.serve:sleep_ms"},
    ]
    path = folder / "bench.json"
    path.write_text(json.dumps({"tools": tools}))
    return path


def run_fastmcp() -> None:
    """Serve the same three tools with FastMCP over stdio (`--fastmcp-server`)."""
    from fastmcp import FastMCP

    server = FastMCP("bench")
    for fn in (add, add_async, sleep_ms):
        server.tool(fn)
    server.run(transport="stdio", show_banner=False)


def run_bare_sdk() -> None:
    """Serve `add_async` and `sleep_ms` on the SDK's bare low-level server (`--sdk-server`).

    No engine: what the SDK's own server and stdio transport cost per call.
    """
    import anyio
    from mcp.server import Server
    from mcp.server.stdio import stdio_server

    async def list_tools(ctx: Any, params: Any) -> dict[str, Any]:
        return {"tools": [{"name": n, "inputSchema": {"type": "object"}}
                          for n in ("add_async", "sleep_ms")],
                "ttlMs": 0, "cacheScope": "private", "resultType": "complete"}

    async def call_tool(ctx: Any, params: Any) -> dict[str, Any]:
        args = params.arguments or {}
        value = (await sleep_ms(args["ms"]) if params.name == "sleep_ms"
                 else await add_async(args["a"], args["b"]))
        return {"content": [{"type": "text", "text": json.dumps({"result": value})}],
                "structuredContent": {"result": value}, "isError": False,
                "resultType": "complete"}

    handlers: dict[str, Any] = {"on_list_tools": list_tools, "on_call_tool": call_tool}
    server = Server("bare", **handlers)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


# -- a minimal JSON-RPC client ----------------------------------------------------------------


class RawClient:
    """JSON-RPC lines over a server's stdin and stdout; concurrent calls paired by id."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = iter(range(1, 1 << 62))
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            waiter = self._waiting.pop(message.get("id"), None)
            if waiter is not None and not waiter.done():
                waiter.set_result(message)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        number = next(self._ids)
        waiter = asyncio.get_running_loop().create_future()
        self._waiting[number] = waiter
        self._write({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        answer = await waiter
        if "error" in answer or answer["result"].get("isError"):
            raise RuntimeError(f"{method} failed: {answer}")
        return answer

    def _write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.request("tools/call", {"name": name, "arguments": arguments})

    async def start(self) -> None:
        await self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                          "clientInfo": {"name": "bench", "version": "0"}})
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})


@contextlib.asynccontextmanager
async def raw_client(argv: list[str]) -> AsyncIterator[RawClient]:
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=_env(), limit=1 << 24)
    client = RawClient(proc)
    try:
        await client.start()
        yield client
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        client._reader.cancel()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


# -- measurements -----------------------------------------------------------------------------


async def round_trips(clients: dict[str, Any], tool: str, n: int, rounds: int,
                      call: Any) -> dict[str, list[float]]:
    """Sequential calls, `rounds` alternating rounds of `n // rounds` per server; µs each."""
    samples: dict[str, list[float]] = {name: [] for name in clients}
    for client in clients.values():  # warm-up: imports, first-call caches
        for _ in range(30):
            await call(client, tool)
    order = list(clients)
    for number in range(rounds):
        for name in order if number % 2 == 0 else reversed(order):
            for _ in range(max(n // rounds, 1)):
                started = time.perf_counter()
                await call(clients[name], tool)
                samples[name].append((time.perf_counter() - started) * 1e6)
    return samples


async def burst_ms(client: RawClient, tool: str, arguments: dict[str, Any], tries: int = 3
                   ) -> float:
    """The best of `tries` bursts of 200 concurrent calls over one session, in ms."""
    best = float("inf")
    await asyncio.gather(*(client.call(tool, arguments) for _ in range(20)))
    for _ in range(tries):
        started = time.perf_counter()
        await asyncio.gather(*(client.call(tool, arguments) for _ in range(CONCURRENT_CALLS)))
        best = min(best, (time.perf_counter() - started) * 1000)
    return best


async def _concurrency(name: str, client: RawClient) -> bool:
    """Print the burst figures of one server; say whether the strict target is met."""
    floor = await burst_ms(client, "add_async", {"a": 1, "b": 2})
    total = await burst_ms(client, "sleep_ms", {"ms": SLEEP_MS})
    ratio = total / SLEEP_MS
    met = ratio <= CONCURRENCY_TARGET
    print(f"  {name:<17} {SLEEP_MS:g} ms tool {total:7.1f} ms = {ratio:5.2f}× ideal"
          f"{'  ok' if met else '  MISSED'} | no-op tool {floor:6.1f} ms (the floor); "
          f"{total:.0f} / ({SLEEP_MS:g} + {floor:.0f}) = {total / (SLEEP_MS + floor):.2f}×")
    return met


async def cpu_us_per_call(client: RawClient, tool: str, calls: int = 500) -> float:
    """The server process's CPU time per call over a burst of concurrent calls."""
    import psutil

    server = psutil.Process(client.proc.pid)
    before = sum(server.cpu_times()[:2])
    await asyncio.gather(*(client.call(tool, {"a": 1, "b": 2}) for _ in range(calls)))
    return (sum(server.cpu_times()[:2]) - before) / calls * 1e6


async def _raw_call(client: RawClient, tool: str) -> None:
    await client.call(tool, {"a": 1, "b": 2})


async def _sdk_call(client: Any, tool: str) -> None:
    result = await client.call_tool(tool, {"a": 1, "b": 2})
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result}")


@contextlib.asynccontextmanager
async def sdk_client(argv: list[str]) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=_env())
    async with Client(params) as client:  # type: ignore[arg-type]
        yield client


async def main_async(args: argparse.Namespace) -> bool:
    with tempfile.TemporaryDirectory() as folder:
        servers = {
            "toolcaller serve": [sys.executable, "-m", "toolcaller", "serve", "--registry",
                                 str(_registry(Path(folder)))],
            "FastMCP": [sys.executable, "-m", "benchmarks.serve", "--fastmcp-server"],
        }
        ok = True
        async with contextlib.AsyncExitStack() as stack:
            raw = {k: await stack.enter_async_context(raw_client(v)) for k, v in servers.items()}
            print("round trip, minimal JSON-RPC client (µs; target: toolcaller ≤ "
                  f"{ROUND_TRIP_TARGET}× FastMCP)")
            for tool in ("add", "add_async"):
                ok &= _report(tool, await round_trips(raw, tool, args.n, args.rounds, _raw_call),
                              target=True)
            print(f"\n{CONCURRENT_CALLS} concurrent calls over one session (ms, best of 3; "
                  f"ideal {SLEEP_MS:g} ms, target ≤ {CONCURRENCY_TARGET}× it)")
            for name, client in raw.items():
                ok &= await _concurrency(name, client) or name != "toolcaller serve"
            bare = [sys.executable, "-m", "benchmarks.serve", "--sdk-server"]
            async with raw_client(bare) as client:
                await _concurrency("bare SDK server", client)
            print("\nserver CPU per call in a burst of 500 add_async calls (µs, all threads; "
                  "the load of other processes inflates wall times more than this)")
            for name, client in raw.items():
                print(f"  {name:<17} {await cpu_us_per_call(client, 'add_async'):8,.0f}")
        if args.sdk:
            async with contextlib.AsyncExitStack() as stack:
                sdk = {k: await stack.enter_async_context(sdk_client(v))
                       for k, v in servers.items()}
                print("\nround trip, the official SDK Client (µs; for reference)")
                for tool in ("add", "add_async"):
                    _report(tool, await round_trips(sdk, tool, args.n, args.rounds, _sdk_call),
                            target=False)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\n{os.cpu_count()} CPUs, load average {load}")
    return ok


def _report(tool: str, samples: dict[str, list[float]], *, target: bool) -> bool:
    medians = {name: statistics.median(values) for name, values in samples.items()}
    ratio = medians["toolcaller serve"] / medians["FastMCP"]
    for name, values in samples.items():
        ordered = sorted(values)
        print(f"  {tool:<10} {name:<17} median {medians[name]:8,.0f}   p90 "
              f"{ordered[int(len(ordered) * 0.9)]:8,.0f}")
    met = ratio <= ROUND_TRIP_TARGET
    verdict = ("  ok" if met else "  MISSED") if target else ""
    print(f"  {tool:<10} ratio toolcaller / FastMCP: {ratio:.2f}×{verdict}")
    return met or not target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.serve",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="timed calls per server and tool")
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds")
    parser.add_argument("--no-sdk", dest="sdk", action="store_false",
                        help="skip the SDK client's reference figures")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--fastmcp-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sdk-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.fastmcp_server:
        run_fastmcp()
        return 0
    if args.sdk_server:
        run_bare_sdk()
        return 0
    ok = asyncio.run(main_async(args))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
