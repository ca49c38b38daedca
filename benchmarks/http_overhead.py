"""Overhead of HttpAdapter and ToolCaller over a bare pooled httpx request to the same endpoint.

The adapter alone is `toolcaller.testing.invoke(HttpAdapter(...), tool, params)`: one attempt
as the engine runs it (within its timeout), without validation, retries or history.

The endpoint answers a small JSON body from a stdlib HTTP/1.1 keep-alive server in a separate
process (in this process its thread would compete with the client for the GIL, and its own
work would count as the client's), or from `--url`. Each way calls the same URL with the same
params and ends with the same thing, the parsed JSON body (the bare way calls `.json()`, as the
engine parses the body with `format: json`), in shuffled rounds so that load and drift hit
every way alike; the ratios are computed in the same run:

    /work/venv/bin/python benchmarks/http_overhead.py [-n 2000] [--check] [--url URL]

Target: `ToolCaller.call` (sync) and `ToolCaller.acall` (async) at most 10% over the bare
httpx median. `--check` exits 1 when either is over. Also printed: p90, and the client
process's CPU time per call (less sensitive to other load than wall time).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from toolcaller import ToolCaller
from toolcaller.adapters.http import HttpAdapter
from toolcaller.core.tool import Tool
from toolcaller.testing import invoke

BUDGET = 0.10
PARAMS: dict[str, str | int] = {"q": "hello", "n": 3}
BODY = b'{"ok": true, "items": [1, 2, 3]}'


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        # one write: headers and body in separate packets meet delayed ACKs (40 ms stalls)
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(BODY)}"
        self.wfile.write(head.encode() + b"\r\n\r\n" + BODY)

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve() -> None:
    """Serve the endpoint on a free port until stdin closes (the parent went away)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()


Sample = tuple[float, float]  # wall ms, CPU ms


def run_shuffled(runners: dict[str, Callable[[], object]], n: int) -> dict[str, list[Sample]]:
    for run in runners.values():
        for _ in range(50):
            run()
    samples: dict[str, list[Sample]] = {name: [] for name in runners}
    order = list(runners)
    for _ in range(n):
        random.shuffle(order)
        for name in order:
            cpu, start = time.process_time(), time.perf_counter()
            runners[name]()
            wall = time.perf_counter() - start
            samples[name].append((wall * 1000, (time.process_time() - cpu) * 1000))
    return samples


async def arun_shuffled(
    runners: dict[str, Callable[[], Awaitable[object]]], n: int
) -> dict[str, list[Sample]]:
    for run in runners.values():
        for _ in range(50):
            await run()
    samples: dict[str, list[Sample]] = {name: [] for name in runners}
    order = list(runners)
    for _ in range(n):
        random.shuffle(order)
        for name in order:
            cpu, start = time.process_time(), time.perf_counter()
            await runners[name]()
            wall = time.perf_counter() - start
            samples[name].append((wall * 1000, (time.process_time() - cpu) * 1000))
    return samples


def report(title: str, samples: dict[str, list[Sample]], base: str, engine: str) -> float:
    """Print one table; return the engine's median overhead as a fraction of the base's."""
    print(f"\n{title}")
    reference = statistics.median(w for w, _ in samples[base])
    for name, values in samples.items():
        walls = [w for w, _ in values]
        median = statistics.median(walls)
        p90 = statistics.quantiles(walls, n=10)[-1]
        cpu = statistics.fmean(c for _, c in values)
        extra = median - reference
        print(f"  {name:<18} median {median:6.3f} ms  p90 {p90:6.3f} ms  "
              f"cpu {cpu:6.3f} ms  overhead {extra * 1000:+6.0f} µs {extra / reference:+7.1%}")
    ratio = statistics.median(w for w, _ in samples[engine]) / reference - 1
    print(f"  {engine} over {base}: {ratio:+.1%} (budget {BUDGET:.0%})")
    return ratio


def bench_sync(url: str, tool: Tool, n: int) -> float:
    client = httpx.Client(trust_env=False)
    caller = ToolCaller(tools=[tool], adapters={"http": HttpAdapter(trust_env=False)})
    assert caller.call(tool.name, PARAMS).success
    runners: dict[str, Callable[[], object]] = {
        "httpx.Client.get": lambda: client.get(url, params=PARAMS).json(),
        "ToolCaller.call": lambda: caller.call(tool.name, PARAMS),
    }
    try:
        samples = run_shuffled(runners, n)
    finally:
        client.close()
        caller.close()
    return report(f"sync, {n} calls each", samples, "httpx.Client.get", "ToolCaller.call")


async def bench_async(url: str, tool: Tool, n: int) -> float:
    client = httpx.AsyncClient(trust_env=False)
    adapter = HttpAdapter(trust_env=False)
    caller = ToolCaller(tools=[tool], adapters={"http": HttpAdapter(trust_env=False)})
    assert (await caller.acall(tool.name, PARAMS)).success

    async def bare() -> object:
        return (await client.get(url, params=PARAMS)).json()

    runners: dict[str, Callable[[], Awaitable[object]]] = {
        "AsyncClient.get": bare,
        "HttpAdapter.invoke": lambda: invoke(adapter, tool, PARAMS, timeout=5000),
        "ToolCaller.acall": lambda: caller.acall(tool.name, PARAMS),
    }
    try:
        samples = await arun_shuffled(runners, n)
    finally:
        await client.aclose()
        await adapter.aclose()
        caller.close()
    return report(f"async, {n} calls each", samples, "AsyncClient.get", "ToolCaller.acall")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-n", type=int, default=2000, help="calls per way")
    parser.add_argument("--check", action="store_true", help=f"fail over {BUDGET:.0%}")
    parser.add_argument("--url", help="a JSON endpoint to call instead of the local server")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0
    server = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--serve"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        url = args.url or f"http://127.0.0.1:{int(server.stdout.readline())}/items"
        tool = Tool(name="bench.http", description="a small JSON answer",
                    params_schema={"type": "object"}, kind="http",
                    target={"method": "GET", "url": url})  # fmt: skip
        print(f"endpoint {url} (server pid {server.pid}), load average {os.getloadavg()[0]:.2f}")
        worst = max(bench_sync(url, tool, args.n), asyncio.run(bench_async(url, tool, args.n)))
    finally:
        server.terminate()
        server.wait(10)
    print(f"\nworst engine overhead {worst:+.1%} (budget {BUDGET:.0%})")
    return 1 if args.check and worst > BUDGET else 0


if __name__ == "__main__":
    sys.exit(main())
