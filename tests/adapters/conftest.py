"""Fixtures for the adapter tests: real servers on 127.0.0.1 and the test scripts' folder."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).parent
SCRIPTS = HERE / "scripts"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def httpbin_url() -> Iterator[str]:
    """A real httpbin served by gunicorn (threaded workers, so /delay/N blocks no one)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "2",
         "--worker-class", "gthread", "--threads", "8", "--no-control-socket",
         "--log-level", "warning", "httpbin:app"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/get", timeout=1, trust_env=False).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode() if proc.stderr else ""
                pytest.fail(f"httpbin did not start on port {port}: {err[-2000:]}")
            time.sleep(0.1)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)  # gunicorn's quick shutdown: abandoned /delay calls
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stderr:
            proc.stderr.close()


class _AuxHandler(BaseHTTPRequestHandler):
    """Answers the few cases httpbin cannot: 429 with Retry-After, 4xx echoing headers."""

    def do_GET(self) -> None:
        if self.path.startswith("/429-seconds"):
            self._send(429, b"slow down", {"Retry-After": "2"})
        elif self.path.startswith("/503-date"):
            when = datetime.now(UTC) + timedelta(seconds=30)
            self._send(503, b"", {"Retry-After": format_datetime(when, usegmt=True)})
        elif self.path.startswith("/echo-400"):
            body = json.dumps({"error": "bad", "headers": dict(self.headers)}).encode()
            self._send(400, body, {"Content-Type": "application/json"})
        elif self.path.startswith("/path/"):
            body = json.dumps({"path": self.path}).encode()
            self._send(200, body, {"Content-Type": "application/json"})
        elif self.path.startswith("/no-type"):
            self._send(200, b'{"untyped": true}', {})
        else:
            self._send(404, b"not here", {})

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def aux_url() -> Iterator[str]:
    """A tiny stdlib HTTP server in a thread, for the cases httpbin has no endpoint for."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AuxHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def is_alive(pid: int) -> bool:
    """Say whether a process runs (a zombie waiting for its parent to reap it counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def wait_gone(pid: int, within_s: float = 0.2) -> bool:
    """Poll until the process is gone; return False if it still runs after `within_s`."""
    deadline = time.monotonic() + within_s
    while is_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True
