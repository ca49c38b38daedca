"""The demo's local HTTP server: the endpoints the demo `http.*` tools call, on 127.0.0.1.

`demo_url()` starts it on first use, once per process: a stdlib `ThreadingHTTPServer` on a free
loopback port, served by a daemon thread (so it never keeps a process alive), and returns its
base URL. Starting costs well under a millisecond. A forked child starts its own when it asks.
Endpoints (GET), all answering JSON unless said otherwise:

    /echo?a=1&b=x&b=y    the query as an object, {"a": "1", "b": ["x", "y"]}: query values
                         are text, a repeated key is an array
    /status/{code}       that status (200–599) with {"status": code}; no body for 204 and 304
    /delay?seconds=s     waits s seconds (0–10), then {"slept": s}
    /html                an HTML page (text/html: not JSON)
    /headers             the request's headers, {"headers": {name: value}}

Anything else is 404. Run it on its own with `python -m toolcaller.demo.server [--port N]`, and
point the demo registry at it with `TOOLCALLER_DEMO_URL=http://127.0.0.1:N`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socketserver
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["MAX_DELAY_S", "demo_url", "main"]

MAX_DELAY_S = 10.0
HTML = b"""<!DOCTYPE html>
<html><head><title>toolcaller demo</title></head>
<body><h1>Not JSON</h1><p>An HTML page: PARSE_ERROR with format json.</p></body></html>
"""


class _Handler(BaseHTTPRequestHandler):
    """Routes a GET to one of the endpoints in the module docstring."""

    protocol_version = "HTTP/1.1"  # keep-alive: the HTTP adapter pools connections
    server_version = "toolcaller-demo"
    disable_nagle_algorithm = True  # headers and body leave at once, no delayed-ACK stall

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        if url.path == "/echo":
            self._json(200, {k: v[0] if len(v) == 1 else v for k, v in query.items()})
        elif url.path.startswith("/status/"):
            self._status(url.path.removeprefix("/status/"))
        elif url.path == "/delay":
            self._delay(query.get("seconds", ["0"])[-1])
        elif url.path == "/html":
            self._send(200, HTML, "text/html; charset=utf-8")
        elif url.path == "/headers":
            self._json(200, {"headers": dict(self.headers.items())})
        else:
            self._json(404, {"error": f"no endpoint {url.path!r}",
                             "endpoints": ["/echo", "/status/{code}", "/delay", "/html",
                                           "/headers"]})  # fmt: skip

    def _status(self, text: str) -> None:
        code = int(text) if text.isdigit() else 0
        if not 200 <= code <= 599:
            self._json(400, {"error": f"status must be an integer from 200 to 599, got {text!r}"})
        elif code in (204, 304):
            self._send(code, b"", None)
        else:
            self._json(code, {"status": code})

    def _delay(self, text: str) -> None:
        try:
            seconds = float(text)
        except ValueError:
            seconds = -1.0
        if not 0 <= seconds <= MAX_DELAY_S:
            self._json(400, {"error": f"seconds must be from 0 to {MAX_DELAY_S:g}, got {text!r}"})
            return
        time.sleep(seconds)
        self._json(200, {"slept": seconds})

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _send(self, status: int, body: bytes, media_type: str | None) -> None:
        self.send_response(status)
        if media_type:
            self.send_header("Content-Type", media_type)
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Log nothing: the demo must not write to the caller's stderr."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a handler still sleeping in /delay never blocks the process's exit

    def server_bind(self) -> None:
        # HTTPServer's own asks the resolver for the host's FQDN: milliseconds, or a hang
        # with a broken DNS setup, for a name nobody reads
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "127.0.0.1", int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client left early (a timed-out call closes its connection)."""


_lock = threading.Lock()
_server: _Server | None = None


def demo_url() -> str:
    """Return the base URL of this process's demo server, starting it on first use.

    Raises:
        OSError: no socket could be bound on 127.0.0.1.
    """
    global _server
    with _lock:
        if _server is None:
            server = _Server(("127.0.0.1", 0), _Handler)
            thread = threading.Thread(
                target=server.serve_forever, name="toolcaller-demo-http", daemon=True
            )
            thread.start()
            _server = server
        return f"http://127.0.0.1:{_server.server_address[1]}"


def _forget_in_child() -> None:
    global _lock, _server
    _lock, _server = threading.Lock(), None  # the serving thread did not survive the fork


os.register_at_fork(after_in_child=_forget_in_child)


def main(argv: list[str] | None = None) -> None:
    """Serve the demo endpoints in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    args = parser.parse_args(argv)
    with _Server(("127.0.0.1", args.port), _Handler) as server:
        print(f"TOOLCALLER_DEMO_URL=http://127.0.0.1:{server.server_address[1]}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


if __name__ == "__main__":
    main()
