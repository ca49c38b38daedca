"""`HttpAdapter`: one HTTP request per attempt, over pooled httpx connections.

The tool's `target` is the registry entry's `http` object (`HttpSpec`)::

    {"method": "POST", "url": "http://127.0.0.1:8080/items/{id}",
     "headers": {"X-Trace": "1"}, "query": {"lang": "en"},
     "queryParams": ["dryRun"], "headerParams": {"requestId": "X-Request-Id"},
     "bodyParam": "item", "contentType": "application/x-www-form-urlencoded",
     "styles": {"tags": {"style": "pipeDelimited", "explode": false}},
     "auth": {"type": "bearer", "token": "${API_TOKEN}"},
     "timeout": 2000, "followRedirects": true, "maxResponseBytes": 10485760}

- **Path templates**: each `{name}` in `url` takes the param `name` out of the params and puts
  its value in, percent-encoded (`/` included): strings as they are, numbers as JSON writes
  them, booleans as `true`/`false`. A missing (or null) one, or an object or array, is an
  `InvalidParamsError` naming it: the caller gave wrong params, so no attempt is worth retrying.
- **Header params**: `"headerParams": {"param": "Header-Name"}` sends each named param as that
  header (left out when absent or null; arrays of scalars comma-joined, objects as JSON text),
  replacing a fixed header (or a credential) of the same name. A value that is not printable
  one-line ASCII is an `InvalidParamsError`.
- **Query params**: `"queryParams": ["name", …]` sends those params in the query string whatever
  the method (a POST's `?dryRun=true`).
- **Body param**: `"bodyParam": "name"` makes that param's value the whole body (an array, a
  string, an object: as given; no body when it is absent), and sends every other param in the
  query string.
- **Other params** go to the query string for GET, DELETE, HEAD and OPTIONS (null values left
  out; arrays as repeated keys and objects as JSON text, unless `styles` names them: OpenAPI's
  `style`/`explode`, see `_http_encoding`), and as the body for every other method (`{}` when
  none is left). `query` adds fixed query entries before them. Each param has one place: a
  name used by the URL template and by `queryParams`, `headerParams` or `bodyParam`, or by two
  of them, makes the entry invalid.
- **Bodies** are JSON unless `contentType` (or a fixed `Content-Type` header) says
  `application/x-www-form-urlencoded` (objects as `a[b]=…`), `multipart/form-data` (files as
  `{"base64", "mediaType", "filename"}`), or another type (the body param is then a string,
  or `{"base64": …}`).
- **Credentials**: `auth` lists alternatives (basic, bearer, API key in a header, query or
  cookie) read from `${VAR}`s; the first complete one is sent (`_http_auth`).
- **`${VAR}`** may appear in `url`, `headers`, `query` and `auth` values. Values read that way,
  and values of headers whose names look secret (`Authorization`, `Cookie`, `X-Api-Key`, …,
  plus the credentials after an auth scheme), fixed or from a header param, join
  `AttemptContext.secrets` and are masked in every message and detail, and (with the values of
  secret params, as a URL shows them) in httpx's and httpcore's own log records (`_http_log`).
- **Time**: what is left of the attempt's limit (capped by `timeout`, in ms) bounds connecting,
  sending, waiting and the body: each network wait gets what is left of it. Redirects are
  followed (at most 20) unless `"followRedirects": false`. Cookies a server sets are never kept
  between calls.
- **Proxies** come from the environment (`HTTP_PROXY`, `NO_PROXY`, … when `trust_env`), except
  for loopback hosts (`localhost`, `127.0.0.1`, `[::1]`), which are always reached directly, as
  Go's HTTP client does: a proxy elsewhere cannot reach the caller's own loopback.
- **Pooling**: each event loop that runs attempts gets its own `httpx.AsyncClient` (connections
  cannot cross loops), closed by `aclose()` or, at the latest, when its loop shuts down
  (`asyncio.run` returning: see `_LoopClient`).

Outcomes, one attempt each (details are `{"status": n, "body": "<start of body, masked>"}`).
"Retried if safe": only for an idempotent method (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) or a
tool marked `"idempotent": true` (an OpenAPI operation with `x-idempotent: true`): a POST whose
effect on the server is unknown is not sent twice.

    2xx                       TextOutput promising JSON (JSON types), text (text/*, XML…),
                              unknown (no media type) or binary: `_http_response`
    408, 429                  ExecutionError, retried; `Retry-After` → `retry_after_s`
    5xx                       ExecutionError, retried if safe; `Retry-After` as above
    other 4xx, 3xx not followed ExecutionError permanent
    body > maxResponseBytes   ExecutionError permanent
    connect errors/timeouts   ExecutionError / ToolTimeoutError, retried (nothing was sent)
    other timeouts, resets    ToolTimeoutError / ExecutionError, retried if safe
    bad URL, scheme, header,
    redirect loop, bad entry  ExecutionError permanent
    cancelled                 CancelledError re-raised; the connection is dropped
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import ssl
import threading
import time
import weakref
from collections.abc import AsyncGenerator, Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import httpx

from toolcaller._types import JSONObject
from toolcaller.adapters._http_log import mask_http_logs
from toolcaller.adapters._http_request import (
    DEFAULT_MAX_RESPONSE_BYTES,
    Call,
    HttpSpec,
    prepare,
)
from toolcaller.adapters._http_response import not_retried, outcome
from toolcaller.adapters.base import AttemptContext, parse_entry
from toolcaller.core.redact import mask_text
from toolcaller.core.tool import Tool
from toolcaller.errors import ExecutionError, ToolCallError, ToolTimeoutError

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "HttpAdapter", "HttpSpec"]

_LOOPBACK = ("all://localhost", "all://127.0.0.1", "all://[::1]")
USER_AGENT = "toolcaller (httpx)"
class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    """A policy that stores no cookie: a pooled client must not carry state between calls."""

    def set_ok(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
        return False


class HttpAdapter:
    """Runs `http` tools: one request per attempt on pooled connections.

    Args:
        limits: pool limits of each client (default: 100 connections, 20 kept alive).
        verify: check TLS certificates (against certifi's bundle, or `SSL_CERT_FILE` when
            `trust_env`), not (`False`), or with an `ssl.SSLContext` of your own.
        trust_env: read proxies, `.netrc` and `SSL_CERT_FILE` from the environment, as httpx does.
    """

    kind = "http"

    def __init__(
        self,
        *,
        limits: httpx.Limits | None = None,
        verify: bool | ssl.SSLContext = True,
        trust_env: bool = True,
    ) -> None:
        self._limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
        self._verify: bool | ssl.SSLContext = verify
        self._trust_env = trust_env
        self._lock = threading.Lock()
        self._specs: weakref.WeakKeyDictionary[Tool, HttpSpec] = weakref.WeakKeyDictionary()
        self._aclients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClient]
        self._aclients = weakref.WeakKeyDictionary()
        mask_http_logs()

    async def invoke(self, tool: Tool, params: JSONObject, ctx: AttemptContext) -> object:
        """Send the request once on the running loop (cancellation drops the connection)."""
        spec = self._specs.get(tool)
        if spec is None:
            spec = self._specs[tool] = parse_entry(HttpSpec, tool, "http")
        call = prepare(spec, tool, params, ctx)
        client = await self._async_client()
        ctx.note = mask_text(f"{call.method} {call.shown_url} was cancelled, its connection "
                             "dropped", call.secrets)
        if not call.retry_safe:
            ctx.no_retry = not_retried(call).removeprefix("; ")
        with _translate_errors(call):
            request = call.build(client)
            response = await client.send(
                request, stream=True, follow_redirects=call.follow_redirects
            )
            try:
                body = _Body(call)
                async for chunk in response.aiter_bytes():
                    body.add(chunk)
            finally:
                await response.aclose()
        return outcome(call, response, body.data(), ctx.format)

    async def aclose(self) -> None:
        """Close every client: this loop's here, other loops' on their own loops."""
        current = asyncio.get_running_loop()
        with self._lock:
            aclients = list(self._aclients.items())
            self._aclients.clear()
        for loop, entry in aclients:
            if loop is current:
                await entry.aclose()
            else:
                _close_on(loop, entry)

    async def _async_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._aclients.get(loop)
            if entry is not None:
                return entry.client
            entry = _LoopClient(httpx.AsyncClient(**self._client_options()))
            self._aclients[loop] = entry
        await entry.guard.asend(None)
        return entry.client

    def _ssl_context(self) -> ssl.SSLContext:
        # Built once and shared: each client would otherwise load the CA bundle (~50 ms), and
        # `asyncio.run` per call means a new loop, so a new client, per call.
        if not isinstance(self._verify, ssl.SSLContext):
            self._verify = httpx.create_ssl_context(verify=self._verify, trust_env=self._trust_env)
        return self._verify

    def _client_options(self) -> dict[str, Any]:
        return {
            "limits": self._limits,
            "verify": self._ssl_context(),
            "trust_env": self._trust_env,
            "cookies": http.cookiejar.CookieJar(policy=_NoCookies()),
            "headers": {"User-Agent": USER_AGENT},
            "mounts": dict.fromkeys(_LOOPBACK, None),  # None: no proxy, the default transport
        }


class _LoopClient:
    """The async client of one event loop, closed when that loop shuts down.

    A loop cannot tell us it is ending, but `asyncio.run` (and pytest-asyncio, IPython, anyio)
    call `loop.shutdown_asyncgens()` before closing it, which runs the `finally` of every async
    generator still suspended on the loop: `guard` is one, started on first use, so the client's
    connections are closed on their own loop instead of leaking when `asyncio.run` returns.
    """

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.guard: AsyncGenerator[None, None] = self._close_at_shutdown()

    async def _close_at_shutdown(self) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            await self.client.aclose()

    async def aclose(self) -> None:
        await self.guard.aclose()
        await self.client.aclose()  # in case the guard never started


def _close_on(loop: asyncio.AbstractEventLoop, entry: _LoopClient) -> None:
    """Have a loop close its client, without waiting.

    Waiting could deadlock: `close()` may run in the very thread whose loop must do the work
    (a Jupyter cell blocks the kernel's loop while it runs).
    """
    if loop.is_closed():
        return  # closed at its shutdown, or nothing can run there any more
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        _pending.add(task := loop.create_task(entry.aclose()))
        task.add_done_callback(_pending.discard)
    elif loop.is_running():
        asyncio.run_coroutine_threadsafe(entry.aclose(), loop)
    # an idle loop may belong to another thread: its client closes when that loop shuts down


_pending: set[asyncio.Task[None]] = set()  # keeps fire-and-forget closings alive until done


# -- errors: one map, one context manager ------------------------------------------------

_permanent = partial(ExecutionError, permanent=True)
_ERROR_MAP: dict[type[Exception], Callable[..., ToolCallError]] = {
    httpx.TimeoutException: ToolTimeoutError,
    httpx.TransportError: ExecutionError,  # refused, reset, closed early: another try may work
    httpx.UnsupportedProtocol: _permanent,
    httpx.LocalProtocolError: _permanent,  # our request is malformed (a bad header value)
    httpx.TooManyRedirects: _permanent,
    httpx.InvalidURL: _permanent,
    UnicodeEncodeError: _permanent,  # a header value that is not ASCII
}


@contextmanager
def _translate_errors(call: Call) -> Iterator[None]:
    """Map httpx's failures to the error vocabulary, with secrets masked."""
    try:
        yield
    except ToolCallError:
        raise
    except tuple(_ERROR_MAP) as exc:
        # a ReadTimeout is a TransportError too: the most specific entry wins
        target = next(_ERROR_MAP[t] for t in type(exc).__mro__ if t in _ERROR_MAP)
        if isinstance(exc, httpx.TimeoutException):
            what = f"did not answer within {call.timeout_s * 1000:.0f} ms ({type(exc).__name__})"
        else:
            what = f"failed: {type(exc).__name__}: {exc}"
        message = f"HTTP tool {call.tool_name!r}: {call.method} {call.shown_url} {what}"
        # A request that may have reached the server runs again only if that is safe.
        unsent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)
        if target in (ExecutionError, ToolTimeoutError) and not (call.retry_safe or unsent):
            error = target(mask_text(message + not_retried(call), call.secrets))
            error.retryable = False
            raise error from exc
        raise target(mask_text(message, call.secrets)) from exc


class _Body:
    """Collects a response body within the attempt's size cap and deadline."""

    def __init__(self, call: Call) -> None:
        self._call = call
        self._chunks: list[bytes] = []
        self._size = 0

    def add(self, chunk: bytes) -> None:
        call = self._call
        self._size += len(chunk)
        if self._size > call.cap:
            raise ExecutionError(
                f"HTTP tool {call.tool_name!r}: response body exceeds {call.cap} bytes "
                "(maxResponseBytes)",
                details={"maxResponseBytes": call.cap},
                permanent=True,
            )
        self._chunks.append(chunk)
        if time.monotonic() > call.deadline:
            raise ToolTimeoutError(
                mask_text(
                    f"HTTP tool {call.tool_name!r}: {call.method} {call.shown_url} did not "
                    f"finish its body within {call.timeout_s * 1000:.0f} ms",
                    call.secrets,
                )
            )

    def data(self) -> bytes:
        return b"".join(self._chunks)
