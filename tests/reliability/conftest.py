"""Fixtures of the reliability tests: fault servers on 127.0.0.1, fault tools, leak counters."""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.helpers import LATE_MS
from tests.reliability import tools_faulty
from toolcaller import Tool, ToolCaller

HERE = Path(__file__).parent
SCRIPT = HERE / "scripts" / "faulty.py"
MCP_SERVER = HERE / "mcp_faulty_server.py"
FAULTY = "tests.reliability.tools_faulty"
SLACK_MS = LATE_MS
"""How far past its deadline a call may answer here (see `tests.helpers.LATE_MS`)."""
MB = 1024 * 1024


# -- tools ----------------------------------------------------------------------------------


def py_tool(fn: str, name: str | None = None, *, isolation: str | None = None,
            schema: dict[str, Any] | None = None, **settings: Any) -> Tool:
    """A python tool naming a function of `tools_faulty` by its "module:function" path."""
    return Tool(name=name or fn, description=f"fault tool {fn}",
                params_schema=schema if schema is not None else {"type": "object"},
                kind="python", target=f"{FAULTY}:{fn}", isolation=isolation,  # type: ignore[arg-type]
                **settings)


def script_tool(name: str = "script", **spec: Any) -> Tool:
    """A script tool running `scripts/faulty.py` with the current interpreter."""
    return Tool(name=name, description="fault script", params_schema={"type": "object"},
                kind="script", target={"command": [sys.executable, str(SCRIPT)], **spec})


def http_tool(name: str, url: str, *, method: str = "GET", **spec: Any) -> Tool:
    """An HTTP tool on the fault server."""
    return Tool(name=name, description="fault endpoint", params_schema={"type": "object"},
                kind="http", target={"method": method, "url": url, **spec})


ADD_SCHEMA = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
              "required": ["a", "b"]}


def check_add_works(caller: ToolCaller, name: str = "add") -> None:
    """Assert that a healthy call succeeds on this caller (it keeps working after a fault)."""
    envelope = caller.call(name, {"a": 1, "b": 2}).to_dict()
    assert envelope["success"] is True, envelope
    assert envelope["result"] == {"sum": 3}


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Run `fn` and return its value and the wall time in milliseconds."""
    began = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - began) * 1000.0


def assert_within(envelope: dict[str, Any], wall_ms: float, deadline_ms: float) -> None:
    """Assert that a call answered within its deadline plus `SLACK_MS` (both clocks)."""
    duration = envelope["metadata"]["duration"]
    assert duration <= deadline_ms + SLACK_MS, (duration, deadline_ms, envelope)
    assert wall_ms <= deadline_ms + SLACK_MS, (wall_ms, deadline_ms, envelope)


@pytest.fixture(autouse=True, scope="session")
def _release_hung_threads() -> Iterator[None]:
    """Let thread-mode `hang` tools return at the end (threads cannot be killed)."""
    yield
    tools_faulty.RELEASE.set()


# -- processes, threads, descriptors ---------------------------------------------------------


def live_children(pid: int | None = None) -> set[int]:
    """Pids of the running (non-zombie) descendants of a process (this one by default)."""
    root = os.getpid() if pid is None else pid
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state not in ("Z", "X"):
            parents[int(entry)] = int(ppid)
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return found


def open_fds() -> int:
    """Number of open file descriptors of this process."""
    return len(os.listdir("/proc/self/fd"))


def rss_mb() -> float:
    """Resident memory of this process, in MB."""
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / MB


def wait_until(predicate: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """Poll a predicate until it holds or the time is up; return its last value."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# -- an HTTP server that misbehaves ------------------------------------------------------------


class FaultHandler(BaseHTTPRequestHandler):
    """Answers /ok, /add, /hang, /headers-hang, /drip, /close, /garbage, /nan, /big, /path/…,
    /echo and /echo500 (both echo headers, path and body; the second as a 500)."""

    protocol_version = "HTTP/1.1"
    stop: threading.Event = threading.Event()  # replaced per server

    def do_GET(self) -> None:
        self._route(b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self._route(self.rfile.read(length) if length else b"")

    def _route(self, body: bytes) -> None:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        first = parts.path.strip("/").split("/", 1)[0]
        route = getattr(self, "_" + first.replace("-", "_"), None)
        if route is None:
            self._send(404, b"not here", "text/plain")
        else:
            route(query, body)

    def _ok(self, query: dict[str, str], body: bytes) -> None:
        self._send(200, b'{"ok": true}')

    def _add(self, query: dict[str, str], body: bytes) -> None:
        total = float(query.get("a", 0)) + float(query.get("b", 0))
        self._send(200, json.dumps({"sum": total if total % 1 else int(total)}).encode())

    def _hang(self, query: dict[str, str], body: bytes) -> None:
        self._wait_for_client_to_leave()  # never answers
        self.close_connection = True

    def _wait_for_client_to_leave(self) -> None:
        """Block until the client closes the connection (or the server stops)."""
        sock = self.connection
        while not self.stop.is_set():
            ready, _, _ = select.select([sock], [], [], 0.05)
            if ready:
                try:
                    if not sock.recv(1, socket.MSG_PEEK):
                        return
                except OSError:
                    return

    def _headers_hang(self, query: dict[str, str], body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100")
        self.end_headers()
        self.wfile.write(b'{"partial": ')
        self.wfile.flush()
        self._wait_for_client_to_leave()
        self.close_connection = True

    def _drip(self, query: dict[str, str], body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(10 * MB))
        self.end_headers()
        try:
            while not self.stop.wait(0.005):
                self.wfile.write(b" ")
                self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True

    def _close(self, query: dict[str, str], body: bytes) -> None:
        self.close_connection = True  # no answer at all: the connection just closes

    def _garbage(self, query: dict[str, str], body: bytes) -> None:
        self._send(200, b"\xff\xfe\x00\x80garbage\x1b[2J" + bytes(range(256)))

    def _nan(self, query: dict[str, str], body: bytes) -> None:
        self._send(200, b'{"value": NaN}')

    def _big(self, query: dict[str, str], body: bytes) -> None:
        size = int(float(query.get("mb", 100)) * MB)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        chunk = b"x" * (256 * 1024)
        try:
            for _ in range(size // len(chunk)):
                self.wfile.write(chunk)
        except OSError:
            pass
        self.close_connection = True

    def _path(self, query: dict[str, str], body: bytes) -> None:
        self._send(200, json.dumps({"path": self.path}).encode())

    def _echo(self, query: dict[str, str], body: bytes) -> None:
        echoed = {"headers": dict(self.headers), "path": self.path,
                  "body": body.decode("utf-8", "replace")}
        self._send(200, json.dumps(echoed).encode())

    def _echo500(self, query: dict[str, str], body: bytes) -> None:
        echoed = {"error": "internal", "headers": dict(self.headers), "path": self.path,
                  "body": body.decode("utf-8", "replace")}
        self._send(500, json.dumps(echoed).encode())

    def _send(self, status: int, body: bytes, media: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class FaultServer:
    """A threaded stdlib HTTP server running `FaultHandler` on 127.0.0.1."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        handler = type("Handler", (FaultHandler,), {"stop": self.stop})
        server_class = type("Server", (ThreadingHTTPServer,), {"request_queue_size": 1024})
        self.server = server_class(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)


@pytest.fixture(scope="session")
def fault_server() -> Iterator[FaultServer]:
    """The misbehaving HTTP server, for the whole session."""
    server = FaultServer()
    yield server
    server.close()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
