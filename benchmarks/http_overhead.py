"""Overhead of HttpAdapter (run and arun), and of ToolCaller, over bare pooled httpx calls.

Serves a small JSON answer from a stdlib HTTP/1.1 server on 127.0.0.1 (keep-alive) and calls it
each way, shuffled, printing medians in ms:

    /work/venv/bin/python benchmarks/http_overhead.py [-n 500]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from toolcaller.adapters.base import AttemptContext
from toolcaller.adapters.http import HttpAdapter
from toolcaller.core.tool import Tool

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


def report(title: str, samples: dict[str, list[float]], base: str) -> None:
    print(f"\n{title}")
    reference = statistics.median(samples[base])
    for name, values in samples.items():
        median = statistics.median(values)
        p90 = statistics.quantiles(values, n=10)[-1]
        extra = median - reference
        print(f"  {name:<20} median {median:6.3f} ms  p90 {p90:6.3f} ms  overhead {extra:+.3f} ms")


def bench_sync(url: str, tool: Tool, n: int) -> None:
    client = httpx.Client(trust_env=False)
    adapter = HttpAdapter(trust_env=False)
    runners: dict[str, Callable[[], object]] = {
        "httpx.Client.get": lambda: client.get(url, params=PARAMS).content,
        "HttpAdapter.run": lambda: adapter.run(tool, PARAMS, AttemptContext(timeout_s=5)),
    }
    try:
        from toolcaller import ToolCaller

        caller = ToolCaller(tools=[tool])
        caller.adapters["http"] = HttpAdapter(trust_env=False)
        if caller.call(tool.name, PARAMS).success:
            runners["ToolCaller.call"] = lambda: caller.call(tool.name, PARAMS)
    except Exception as exc:  # noqa: BLE001 - report why the engine could not be measured
        print(f"ToolCaller.call skipped: {type(exc).__name__}: {exc}")
    samples = run_shuffled(runners, n)
    report(f"sync, {n} calls each", samples, "httpx.Client.get")
    client.close()
    adapter.close()


def run_shuffled(runners: dict[str, Callable[[], object]], n: int) -> dict[str, list[float]]:
    for run in runners.values():
        for _ in range(10):
            run()
    samples: dict[str, list[float]] = {name: [] for name in runners}
    order = list(runners)
    for _ in range(n):
        random.shuffle(order)
        for name in order:
            start = time.perf_counter()
            runners[name]()
            samples[name].append((time.perf_counter() - start) * 1000)
    return samples


async def bench_async(url: str, tool: Tool, n: int) -> None:
    client = httpx.AsyncClient(trust_env=False)
    adapter = HttpAdapter(trust_env=False)

    async def bare() -> object:
        return (await client.get(url, params=PARAMS)).content

    runners: dict[str, Callable[[], Awaitable[object]]] = {
        "AsyncClient.get": bare,
        "HttpAdapter.arun": lambda: adapter.arun(tool, PARAMS, AttemptContext(timeout_s=5)),
    }
    for run in runners.values():
        for _ in range(10):
            await run()
    samples: dict[str, list[float]] = {name: [] for name in runners}
    order = list(runners)
    for _ in range(n):
        random.shuffle(order)
        for name in order:
            start = time.perf_counter()
            await runners[name]()
            samples[name].append((time.perf_counter() - start) * 1000)
    report(f"async, {n} calls each", samples, "AsyncClient.get")
    await client.aclose()
    await adapter.aclose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=500, help="calls per way")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/items"
    tool = Tool(
        name="bench.http",
        description="a small JSON answer",
        params_schema={"type": "object"},
        kind="http",
        target={"method": "GET", "url": url},
    )
    try:
        bench_sync(url, tool, args.n)
        asyncio.run(bench_async(url, tool, args.n))
    finally:
        server.shutdown()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
