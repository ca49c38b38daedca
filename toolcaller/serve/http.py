"""MCP over streamable HTTP on 127.0.0.1, behind a bearer token, as `toolcaller ui` is.

The SDK's Starlette app serves `/mcp` (DNS-rebinding protection on, as the SDK sets it for
loopback hosts); a small ASGI layer refuses every request without
`Authorization: Bearer <token>` (401). The token is fresh for each start unless one is given.
uvicorn's own signal handling is replaced by the caller's: it would re-raise SIGTERM after
shutting down, and kill the process before the caller's processes are cleaned up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import signal
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.serve.stdio import MAX_MESSAGE_BYTES

__all__ = ["HOST", "MCP_PATH", "HttpEndpoint", "new_token", "run_http"]

HOST = "127.0.0.1"
MCP_PATH = "/mcp"


def new_token() -> str:
    """Return a fresh bearer token (URL-safe, 32 characters)."""
    return secrets.token_urlsafe(24)


@dataclass(frozen=True, slots=True)
class HttpEndpoint:
    """Where a running HTTP server answers, and the token it wants."""

    url: str
    """The MCP endpoint, e.g. `http://127.0.0.1:8765/mcp`."""
    token: str
    """The bearer token every request must carry."""

    def mcp_config(self) -> JSONObject:
        """Return the `mcpServers` entry of this endpoint (`url` and the header)."""
        return {"url": self.url, "headers": {"Authorization": f"Bearer {self.token}"}}


class BearerAuth:
    """ASGI middleware: a 401 for every HTTP request without the right bearer token."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Pass the request on if it carries the token; answer 401 otherwise."""
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not secrets.compare_digest(given, self._expected):
                body = json.dumps({"error": "unauthorized: send the header 'Authorization: "
                                            "Bearer <token>' printed when the server started"})
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="toolcaller"')]})
                await send({"type": "http.response.body", "body": body.encode()})
                return
        await self.app(scope, receive, send)


async def run_http(server: Any, *, host: str = HOST, port: int = 0, token: str | None = None,
                   on_ready: Callable[[HttpEndpoint], None] | None = None) -> None:
    """Serve the SDK `server` over streamable HTTP until cancelled (or SIGINT/SIGTERM).

    Args:
        server: the SDK's low-level `Server` (`toolcaller.serve.build_server`).
        host: the address to listen on (loopback by default).
        port: the port; 0 picks a free one.
        token: the bearer token; a fresh one when `None`.
        on_ready: told the endpoint once the server accepts connections.
    """
    import uvicorn

    token = token or new_token()
    app = server.streamable_http_app(host=host, streamable_http_path=MCP_PATH,
                                     max_request_body_size=MAX_MESSAGE_BYTES)
    config = uvicorn.Config(BearerAuth(app, token), log_config=None, log_level="warning",
                            access_log=False, lifespan="on")
    web = _quiet_server(config)
    with _listening(host, port) as sock:
        bound = sock.getsockname()[1]
        endpoint = HttpEndpoint(f"http://{host}:{bound}{MCP_PATH}", token)
        with _stop_on_signals(web):
            ready = asyncio.get_running_loop().create_task(_tell_ready(web, endpoint, on_ready))
            try:
                await web.serve(sockets=[sock])
            finally:
                ready.cancel()


def _quiet_server(config: Any) -> Any:
    """A uvicorn server that leaves the signals to us (see the module docstring)."""
    import uvicorn

    class QuietServer(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return QuietServer(config)


async def _tell_ready(web: Any, endpoint: HttpEndpoint,
                      on_ready: Callable[[HttpEndpoint], None] | None) -> None:
    while not web.started:  # noqa: ASYNC110 - uvicorn sets a flag, it has no event to await
        await asyncio.sleep(0.01)
    if on_ready is not None:
        on_ready(endpoint)


@contextlib.contextmanager
def _listening(host: str, port: int) -> Iterator[socket.socket]:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
        yield sock
    finally:
        sock.close()


@contextlib.contextmanager
def _stop_on_signals(web: Any) -> Iterator[None]:
    loop = asyncio.get_running_loop()
    handled: list[signal.Signals] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, lambda: setattr(web, "should_exit", True))
        except (RuntimeError, ValueError):  # not the main thread: the embedder handles them
            continue
        handled.append(sig)
    try:
        yield
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
