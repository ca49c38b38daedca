"""Fixtures for the serve tests: `toolcaller serve` started and stopped by the tests.

`connect(transport)` starts the test registry's server (stdio: the SDK client starts it; HTTP:
a child process that prints its `mcpServers` entry) and yields a connected SDK `Client`.
`wait_gone(pid)` and `descendants(pid)` look for processes left behind (psutil).
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="serving needs the mcp extra")
psutil = pytest.importorskip("psutil", reason="the leftover-process checks need psutil")

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
REGISTRY = FIXTURES / "registry.json"
START_S = 60.0
"""How long a server may take to start on a loaded machine (the SDK import alone takes ~1 s)."""


def server_env(**extra: str) -> dict[str, str]:
    """The minimal environment an MCP client gives a server, plus this checkout on the path."""
    keep = ("PATH", "HOME", "LANG", "TMPDIR", "SYSTEMROOT")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


def serve_argv(*args: str, registry: Path = REGISTRY) -> list[str]:
    """The command line of `toolcaller serve` for a registry."""
    return [sys.executable, "-m", "toolcaller", "serve", "--registry", str(registry), *args]


@dataclass
class HttpServer:
    """A server started by a test: its process, URL and token."""

    proc: subprocess.Popen[bytes]
    url: str
    token: str
    log: Path


@contextlib.contextmanager
def http_server(argv: list[str], log: Path) -> Iterator[HttpServer]:
    """Start an HTTP server that prints its `mcpServers` entry; SIGTERM it at the end."""
    with log.open("wb") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, env=server_env(),
                                start_new_session=True)
    try:
        entry = _read_entry(proc, log)
        token = entry["headers"]["Authorization"].removeprefix("Bearer ")
        yield HttpServer(proc, entry["url"], token, log)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stdout:
            proc.stdout.close()


def _read_entry(proc: subprocess.Popen[bytes], log: Path) -> dict[str, Any]:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    data, deadline = b"", time.monotonic() + START_S
    while time.monotonic() < deadline:
        if selector.select(timeout=0.2):
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
            with contextlib.suppress(ValueError):
                servers = json.loads(data)["mcpServers"]
                return next(iter(servers.values()))  # type: ignore[no-any-return]
        elif proc.poll() is not None:
            break
    proc.kill()
    pytest.fail(f"the HTTP server did not start: {log.read_text(errors='replace')[-3000:]}")


@contextlib.asynccontextmanager
async def connect(transport: str, tmp_path: Path, *, argv: list[str] | None = None,
                  mode: str = "auto") -> AsyncIterator[Any]:
    """Start a served registry and yield an SDK `Client` connected to it."""
    from mcp import Client, StdioServerParameters

    argv = argv or serve_argv(*(["--transport", "http", "--print-config"]
                                if transport == "http" else []))
    if transport == "stdio":
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=server_env())
        async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
            yield client
        return
    with http_server(argv, tmp_path / "server.log") as server:
        async with http_client(server.url, server.token, mode=mode) as client:
            yield client


@contextlib.asynccontextmanager
async def http_client(url: str, token: str | None, *, mode: str = "auto") -> AsyncIterator[Any]:
    """An SDK `Client` over streamable HTTP, sending the bearer token."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode) as client:  # type: ignore[arg-type]
            yield client


def wait_gone(pid: int, timeout_s: float = 5.0) -> bool:
    """Wait until a process has exited (a zombie counts as gone); say whether it did."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


async def gone(pid: int, timeout_s: float = 5.0) -> bool:
    """`wait_gone` for async tests: the event loop keeps turning while it waits."""
    import anyio

    return await anyio.to_thread.run_sync(wait_gone, pid, timeout_s)


def descendants(pid: int) -> list[Any]:
    """The live descendants of a process (zombies excluded)."""
    try:
        found = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    alive = []
    for child in found:
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.append(child)
    return alive


async def wait_for_file(path: Path, timeout_s: float = 20.0) -> str:
    """Wait until a file exists with some text in it; return the text."""
    import anyio

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError), open(path, encoding="utf-8") as handle:  # noqa: ASYNC230 - a tiny local file
            if text := handle.read().strip():
                return text
        await anyio.sleep(0.02)
    pytest.fail(f"{path} was not written within {timeout_s} s")


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    """Each test runs over both transports."""
    return str(request.param)
