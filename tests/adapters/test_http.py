"""HttpAdapter against a real httpbin (gunicorn) and a tiny stdlib server, both on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from tests.adapters.conftest import free_port
from toolcaller import testing
from toolcaller.adapters._http_request import Call, prepare
from toolcaller.adapters._http_response import retry_after_s as _retry_after_s
from toolcaller.adapters.base import AttemptContext, TextOutput, parse_entry
from toolcaller.adapters.http import (
    _ERROR_MAP,
    HttpAdapter,
    HttpSpec,
    _translate_errors,
)
from toolcaller.core.tool import Tool
from toolcaller.errors import (
    ErrorCode,
    ExecutionError,
    InvalidParamsError,
    ToolCallError,
    ToolTimeoutError,
)


def http_tool(url: str, method: str = "GET", **spec: Any) -> Tool:
    return Tool(
        name="demo.http",
        description="an HTTP tool",
        params_schema={"type": "object"},
        kind="http",
        target={"method": method, "url": url, **spec},
    )


@pytest.fixture
async def aadapter() -> AsyncIterator[HttpAdapter]:
    adapter = HttpAdapter(trust_env=False)
    yield adapter
    await adapter.aclose()


@pytest.fixture
def invoke() -> Any:
    """Run one attempt, timed as the engine does, on a fresh loop closed after it."""
    adapter = HttpAdapter(trust_env=False)

    async def acall(tool: Tool, params: dict[str, Any], ctx: AttemptContext | None,
                    options: dict[str, Any]) -> Any:
        try:
            return await testing.invoke(adapter, tool, params, ctx=ctx, **options)
        finally:
            await adapter.aclose()

    def call(tool: Tool, params: dict[str, Any], ctx: AttemptContext | None = None,
             **options: Any) -> Any:
        return asyncio.run(acall(tool, params, ctx, {"timeout": 10_000} | options))

    return call


def parsed(out: Any) -> Any:
    assert isinstance(out, TextOutput)
    assert isinstance(out.data, str)
    return json.loads(out.data)


pytestmark = pytest.mark.integration


class TestSuccess:
    def test_get_sends_params_as_query(self, invoke: Any, httpbin_url: str) -> None:
        """GET sends params as the query: arrays repeat, booleans are JSON, null is left out."""
        tool = http_tool(f"{httpbin_url}/get?fixed=1", query={"lang": "en"})
        out = invoke(tool, {"q": "a b", "n": 3, "flag": True, "tags": ["x", "y"], "none": None})
        assert out.media_type == "application/json"
        args = parsed(out)["args"]
        assert args == {
            "fixed": "1", "lang": "en", "q": "a b", "n": "3", "flag": "true", "tags": ["x", "y"]
        }  # fmt: skip

    def test_post_sends_params_as_json_body(self, invoke: Any, httpbin_url: str) -> None:
        """POST sends the params as a JSON body."""
        params = {"name": "widget", "size": 2.5, "nested": {"ok": [1, None]}}
        body = parsed(invoke(http_tool(f"{httpbin_url}/anything", "POST"), params))
        assert body["method"] == "POST"
        assert body["json"] == params
        assert body["headers"]["Content-Type"] == "application/json"

    def test_params_go_to_path_query_headers_and_body(self, invoke: Any, httpbin_url: str) -> None:
        """queryParams, headerParams and bodyParam compose with a template, for real."""
        spec = {"queryParams": ["dryRun"], "bodyParam": "items", "headers": {"X-Mode": "fixed"},
                "headerParams": {"trace": "X-Trace-Id", "mode": "x-mode"}}  # fmt: skip
        tool = http_tool(f"{httpbin_url}/anything/{{id}}", "POST", **spec)
        params = {"id": 7, "dryRun": 1, "trace": "r-1", "mode": "p", "items": [1, "a"], "n": 0}
        echo = parsed(invoke(tool, params))
        assert (echo["method"], echo["json"]) == ("POST", [1, "a"])
        assert echo["url"].endswith("/anything/7?dryRun=1&n=0")
        assert (echo["headers"]["X-Trace-Id"], echo["headers"]["X-Mode"]) == ("r-1", "p")

    def test_path_template_takes_its_param(self, invoke: Any, httpbin_url: str) -> None:
        """`{name}` takes the param out of the query and into the path."""
        body = parsed(invoke(http_tool(f"{httpbin_url}/anything/{{id}}"), {"id": 42, "x": "y"}))
        assert body["url"].endswith("/anything/42?x=y")

    def test_path_template_is_percent_encoded(self, invoke: Any, aux_url: str) -> None:
        """A template value is percent-encoded, slashes included."""
        body = parsed(invoke(http_tool(f"{aux_url}/path/{{name}}"), {"name": "a b/c?d"}))
        assert body["path"] == "/path/a%20b%2Fc%3Fd"

    def test_status_template_204_gives_null(self, invoke: Any, httpbin_url: str) -> None:
        """An empty 2xx body is None (JSON null) with format json."""
        assert invoke(http_tool(f"{httpbin_url}/status/{{code}}"), {"code": 204}) is None

    def test_empty_body_raw_is_empty_text(self, invoke: Any, httpbin_url: str) -> None:
        """With format raw an empty body stays an empty TextOutput."""
        out = invoke(http_tool(f"{httpbin_url}/status/200"), {}, format="raw")
        assert isinstance(out, TextOutput)
        assert out.data == ""

    def test_html_is_text(self, invoke: Any, httpbin_url: str) -> None:
        """An HTML body comes back as text with its media type (the engine will not parse it)."""
        out = invoke(http_tool(f"{httpbin_url}/html"), {})
        assert out.media_type == "text/html"
        assert isinstance(out.data, str)
        assert "Herman Melville" in out.data

    def test_binary_is_bytes(self, invoke: Any, httpbin_url: str) -> None:
        """A binary body comes back as bytes, untouched."""
        out = invoke(http_tool(f"{httpbin_url}/bytes/64?seed=7"), {}, format="raw")
        assert out.media_type == "application/octet-stream"
        assert isinstance(out.data, bytes)
        assert len(out.data) == 64

    def test_untyped_utf8_body_is_text(self, invoke: Any, aux_url: str) -> None:
        """A body without Content-Type that is valid UTF-8 is text."""
        out = invoke(http_tool(f"{aux_url}/no-type"), {})
        assert out.media_type is None
        assert parsed(out) == {"untyped": True}

    def test_redirects_are_followed(self, invoke: Any, httpbin_url: str) -> None:
        """Redirects are followed by default."""
        assert parsed(invoke(http_tool(f"{httpbin_url}/redirect/2"), {}))["url"].endswith("/get")

    def test_cookies_are_not_kept(self, invoke: Any, httpbin_url: str) -> None:
        """A cookie set by one response is not sent again, not even on its own redirect."""
        out = invoke(http_tool(f"{httpbin_url}/cookies/set"), {"session": "abc"})
        assert parsed(out) == {"cookies": {}}

    def test_headers_read_env_vars(
        self, invoke: Any, httpbin_url: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Header values may read `${VAR}`; the values read become secrets of the attempt."""
        monkeypatch.setenv("TC_TEST_API_TOKEN", "t0k3n-from-env-91")
        tool = http_tool(
            f"{httpbin_url}/headers",
            headers={"Authorization": "Bearer ${TC_TEST_API_TOKEN}", "X-Plain": "v"},
        )
        ctx = testing.attempt_context(timeout=10_000)
        headers = parsed(invoke(tool, {}, ctx))["headers"]
        assert headers["Authorization"] == "Bearer t0k3n-from-env-91"
        assert headers["X-Plain"] == "v"
        assert {"t0k3n-from-env-91", "Bearer t0k3n-from-env-91"} <= ctx.secrets


class TestStatusErrors:
    @pytest.mark.parametrize("status", [500, 503, 408, 429], ids=str)
    def test_retryable_statuses(self, invoke: Any, httpbin_url: str, status: int) -> None:
        """5xx, 408 and 429 are retryable EXECUTION_ERRORs carrying the status."""
        with pytest.raises(ExecutionError) as info:
            invoke(http_tool(f"{httpbin_url}/status/{status}"), {})
        assert info.value.retryable
        assert info.value.details == {"status": status, "body": ""}
        assert f"answered {status}" in info.value.message

    @pytest.mark.parametrize("status", [400, 404, 418], ids=str)
    def test_other_4xx_are_permanent(self, invoke: Any, httpbin_url: str, status: int) -> None:
        """Other 4xx are permanent EXECUTION_ERRORs carrying the status."""
        with pytest.raises(ExecutionError) as info:
            invoke(http_tool(f"{httpbin_url}/status/{status}"), {})
        assert not info.value.retryable
        assert info.value.details["status"] == status

    def test_retry_after_seconds(self, invoke: Any, aux_url: str) -> None:
        """429 with `Retry-After: 2` asks for a 2 s wait, and the body starts the details."""
        with pytest.raises(ExecutionError) as info:
            invoke(http_tool(f"{aux_url}/429-seconds"), {})
        assert info.value.retryable
        assert info.value.retry_after_s == 2.0
        assert info.value.details == {"status": 429, "body": "slow down"}

    def test_retry_after_http_date(self, invoke: Any, aux_url: str) -> None:
        """503 with a `Retry-After` date asks for the wait until that date."""
        with pytest.raises(ExecutionError) as info:
            invoke(http_tool(f"{aux_url}/503-date"), {})
        assert info.value.retry_after_s is not None
        assert 25 < info.value.retry_after_s <= 30

    def test_basic_auth_401_hides_credentials(
        self, invoke: Any, httpbin_url: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """401 is permanent, and the Authorization value appears nowhere in the error."""
        credentials = base64.b64encode(b"user:wrong-password").decode()
        monkeypatch.setenv("TC_TEST_BASIC", credentials)
        auth = {"Authorization": "Basic ${TC_TEST_BASIC}"}
        tool = http_tool(f"{httpbin_url}/basic-auth/user/passwd", headers=auth)
        with pytest.raises(ExecutionError) as info:
            invoke(tool, {})
        err = info.value
        assert not err.retryable
        assert err.details["status"] == 401
        assert "check the credentials" in err.message
        text = str(err) + json.dumps(err.details) + repr(err.__cause__)
        assert credentials not in text

    def test_error_body_is_masked(self, invoke: Any, aux_url: str) -> None:
        """A 4xx body that echoes secret headers is masked in the details."""
        tool = http_tool(
            f"{aux_url}/echo-400",
            headers={"X-Api-Key": "literal-key-0123456789", "Cookie": "sid=cookie-value-xyz"},
        )
        with pytest.raises(ExecutionError) as info:
            invoke(tool, {})
        body = info.value.details["body"]
        assert "literal-key-0123456789" not in body
        assert "cookie-value-xyz" not in body
        assert "***" in body

    def test_redirect_not_followed_when_asked(self, invoke: Any, httpbin_url: str) -> None:
        """With followRedirects false a 3xx is a permanent error."""
        with pytest.raises(ExecutionError) as info:
            invoke(http_tool(f"{httpbin_url}/redirect/1", followRedirects=False), {})
        assert not info.value.retryable
        assert info.value.details["status"] == 302


class TestOtherFailures:
    def test_missing_template_param(self, invoke: Any) -> None:
        """A missing URL param is INVALID_PARAMS naming it, before any request."""
        with pytest.raises(InvalidParamsError) as info:
            invoke(http_tool("http://127.0.0.1:9/items/{id}/{part}"), {"part": "a"})
        assert "'id'" in info.value.message
        assert info.value.details == [{"path": "/id", "message": "missing"}]

    def test_object_template_param(self, invoke: Any) -> None:
        """An object or array cannot fill a URL param."""
        with pytest.raises(InvalidParamsError):
            invoke(http_tool("http://127.0.0.1:9/items/{id}"), {"id": {"a": 1}})

    def test_connection_refused_is_retryable(self, invoke: Any) -> None:
        """A refused connection is a retryable EXECUTION_ERROR."""
        with pytest.raises(ExecutionError) as info:
            invoke(http_tool(f"http://127.0.0.1:{free_port()}/x"), {})
        assert info.value.retryable
        assert "ConnectError" in info.value.message

    def test_missing_env_var(self, invoke: Any) -> None:
        """An unset `${VAR}` in a header is permanent and named."""
        tool = http_tool("http://127.0.0.1:9/x", headers={"X-Key": "${TC_SURELY_UNSET_VAR}"})
        with pytest.raises(ExecutionError, match="TC_SURELY_UNSET_VAR") as info:
            invoke(tool, {})
        assert not info.value.retryable

    def test_body_over_cap(self, invoke: Any, httpbin_url: str) -> None:
        """A body larger than maxResponseBytes is a permanent error."""
        with pytest.raises(ExecutionError, match="exceeds 100 bytes") as info:
            invoke(http_tool(f"{httpbin_url}/bytes/1000", maxResponseBytes=100), {})
        assert not info.value.retryable

    def test_invalid_entry(self, invoke: Any) -> None:
        """An `http` entry that does not fit the spec is a permanent error."""
        with pytest.raises(ExecutionError, match="invalid `http` entry") as info:
            invoke(http_tool("http://x/", method="GET /"), {})
        assert not info.value.retryable


class TestTime:
    def test_times_out(self, invoke: Any, httpbin_url: str) -> None:
        """A slow answer ends in TIMEOUT at the attempt's timeout."""
        started = time.monotonic()
        with pytest.raises(ToolTimeoutError):
            invoke(http_tool(f"{httpbin_url}/delay/3"), {}, timeout=500)
        assert time.monotonic() - started < 1.0

    def test_bounds_a_dripping_body(self, invoke: Any, httpbin_url: str) -> None:
        """The whole request, slow body included, stays within the attempt's timeout."""
        tool = http_tool(f"{httpbin_url}/drip?duration=4&numbytes=8&delay=0")
        started = time.monotonic()
        with pytest.raises(ToolTimeoutError):
            invoke(tool, {}, timeout=1000)
        assert time.monotonic() - started < 1.6

    def test_spec_timeout_caps_the_attempt(self, invoke: Any, httpbin_url: str) -> None:
        """The entry's `timeout` (ms) caps a longer attempt timeout."""
        started = time.monotonic()
        with pytest.raises(ToolTimeoutError):
            invoke(http_tool(f"{httpbin_url}/delay/2", timeout=300), {}, timeout=5000)
        assert time.monotonic() - started < 1.0

    async def test_invoke_is_cancelled(self, aadapter: HttpAdapter, httpbin_url: str) -> None:
        """Cancelling `invoke` returns at once, and the adapter keeps working after it."""
        started = time.monotonic()
        tool = http_tool(f"{httpbin_url}/delay/3")
        coro = aadapter.invoke(tool, {}, testing.attempt_context(tool, timeout=5000))
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(coro, 0.5)
        assert time.monotonic() - started < 1.0
        out = await testing.invoke(aadapter, http_tool(f"{httpbin_url}/get"), {}, timeout=5000)
        assert parsed(out)["args"] == {}


class TestPooling:
    def test_loops_get_their_own_clients(self, httpbin_url: str) -> None:
        """Each event loop gets its own client, closed when the loop shuts down; loops in
        several threads call at once."""
        adapter = HttpAdapter(trust_env=False)
        tool = http_tool(f"{httpbin_url}/get")

        clients: list[httpx.AsyncClient] = []

        async def call_twice() -> None:
            for _ in range(2):
                parsed(await testing.invoke(adapter, tool, {}, timeout=5000))
            clients.append(adapter._aclients[asyncio.get_running_loop()].client)

        async def call_and_close() -> None:
            await call_twice()
            await adapter.aclose()

        asyncio.run(call_twice())  # no aclose: the loop's shutdown closes its client...
        assert clients[0].is_closed
        asyncio.run(call_and_close())  # ...and a new loop gets a new one
        assert clients[1] is not clients[0]
        errors: list[BaseException] = []

        def worker() -> None:
            try:
                asyncio.run(call_twice())
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert errors == []
        assert len(set(map(id, clients))) == 6
        assert all(client.is_closed for client in clients)

    def test_close_reaches_a_loop_in_another_thread(self, httpbin_url: str) -> None:
        """`aclose()` has a loop running in another thread close its client."""
        adapter = HttpAdapter(trust_env=False)
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        try:
            future = asyncio.run_coroutine_threadsafe(
                testing.invoke(adapter, http_tool(f"{httpbin_url}/get"), {}, timeout=5000),
                loop,
            )
            parsed(future.result(5))
            client = adapter._aclients[loop].client
            asyncio.run(adapter.aclose())
            deadline = time.monotonic() + 2
            while not client.is_closed and time.monotonic() < deadline:
                time.sleep(0.01)
            assert client.is_closed
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(5)
            loop.close()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        ("3", 3.0),
        (" 1.5 ", 1.5),
        ("-4", 0.0),
        ("nan", None),
        ("soon", None),
        (format_datetime(datetime.now(UTC) - timedelta(seconds=60), usegmt=True), 0.0),
    ],
    ids=["absent", "empty", "seconds", "fraction", "negative", "nan", "garbage", "past-date"],
)
def test_retry_after_parsing(value: str | None, expected: float | None) -> None:
    """Retry-After is read as seconds or an HTTP date, never negative, None when unreadable."""
    assert _retry_after_s(value) == expected


def built(params: dict[str, Any], ctx: AttemptContext | None = None, **spec: Any) -> Any:
    """The request one attempt would send (no network)."""
    tool = http_tool("http://h/items/{id}", spec.pop("method", "POST"), **spec)
    entry = parse_entry(HttpSpec, tool, "http")
    with httpx.Client() as client:
        return prepare(entry, tool, params, ctx or testing.attempt_context(timeout=5000)).build(
            client)


class TestParamPlaces:
    @pytest.mark.parametrize(
        ("spec", "params", "url", "body"),
        [
            ({"queryParams": ["dry"]}, {"id": 1, "dry": True, "n": 2}, "/items/1?dry=true",
             b'{"n":2}'),
            ({"bodyParam": "b"}, {"id": 1, "b": [1, 2], "q": "x"}, "/items/1?q=x", b"[1,2]"),
            ({"bodyParam": "b"}, {"id": 1, "b": None}, "/items/1", b"null"),
            ({"bodyParam": "b"}, {"id": 1, "q": ["x", "y"]}, "/items/1?q=x&q=y", b""),
            ({"bodyParam": "b", "method": "DELETE"}, {"id": 1, "b": {"a": 1}, "q": 2},
             "/items/1?q=2", b'{"a":1}'),
            ({"method": "POST"}, {"id": 1}, "/items/1", b"{}"),
            ({"method": "GET", "queryParams": ["q"]}, {"id": 1, "q": 1, "r": 2},
             "/items/1?q=1&r=2", b""),
        ],
        ids=["post-query", "body-list", "body-null", "no-body", "delete-body", "empty", "get"],
    )  # fmt: skip
    def test_params_find_their_place(self, spec: Any, params: Any, url: str, body: bytes) -> None:
        """Templates first, then named places; the rest follow the method or bodyParam."""
        request = built(params, **spec)
        assert str(request.url) == "http://h" + url
        assert request.content == body
        assert ("content-type" in request.headers) == bool(body)

    def test_header_params(self) -> None:
        """Header params replace fixed headers of any case; null ones and the rest are left."""
        spec: dict[str, Any] = {"method": "GET", "headers": {"x-mode": "f", "X-Keep": "k"},
            "headerParams": {"mode": "X-Mode", "tags": "X-Tags", "obj": "X-Obj", "gone": "X-G"}}
        params = {"id": 1, "mode": 3, "tags": ["a", True], "obj": {"k": 1}, "gone": None, "q": 0}
        request = built(params, **spec)
        assert request.headers.get_list("x-mode") == ["3"]
        assert (request.headers["X-Tags"], request.headers["X-Obj"]) == ("a,true", '{"k":1}')
        assert "X-G" not in request.headers
        assert request.headers["X-Keep"] == "k"
        assert str(request.url) == "http://h/items/1?q=0"

    def test_secret_header_params_are_masked(self) -> None:
        """A header param whose header or param name looks secret becomes a secret."""
        ctx = testing.attempt_context(timeout=5000)
        spec: dict[str, Any] = {"headerParams": {"auth": "Authorization", "api_key": "X-Key"}}
        built({"id": 1, "auth": "Bearer abc123def", "api_key": "k-998877"}, ctx, **spec)
        assert ctx.secrets == {"Bearer abc123def", "abc123def", "k-998877"}

    def test_a_header_value_that_cannot_be_sent_is_invalid_params(self) -> None:
        """A header param value that is not one line of ASCII is the caller's mistake."""
        with pytest.raises(InvalidParamsError, match="'note' goes to header 'X-Note'") as info:
            built({"id": 1, "note": "two\nlines"}, headerParams={"note": "X-Note"})
        assert info.value.details == [{"path": "/note", "message": "not a valid header value"}]

    @pytest.mark.parametrize(
        ("spec", "problem"),
        [({"queryParams": ["id"]}, "'id' is in both the URL and queryParams"),
         ({"queryParams": ["a"], "bodyParam": "a"}, "'a' is in both queryParams and bodyParam"),
         ({"headerParams": {"a": "Bad Name"}}, "not a header name: 'Bad Name'")],
        ids=["template-query", "query-body", "header-name"],
    )  # fmt: skip
    def test_a_param_in_two_places_is_an_invalid_entry(self, spec: Any, problem: str) -> None:
        """An entry that sends one param to two places is refused, permanently."""
        with pytest.raises(ExecutionError, match="invalid `http` entry") as info:
            built({"id": 1}, **spec)
        assert not info.value.retryable
        assert problem in json.dumps(info.value.details)


def _call() -> Call:
    return Call(
        "demo.http", "GET", "http://h/x", [], {}, None, 1.0, 0.0, 10, True, set()
    )


@pytest.mark.parametrize(
    ("exc", "code", "retryable"),
    [
        (httpx.ReadTimeout("timed out"), ErrorCode.TIMEOUT, True),
        (httpx.ConnectTimeout("timed out"), ErrorCode.TIMEOUT, True),
        (httpx.ConnectError("refused"), ErrorCode.EXECUTION_ERROR, True),
        (httpx.RemoteProtocolError("closed"), ErrorCode.EXECUTION_ERROR, True),
        (httpx.UnsupportedProtocol("ftp"), ErrorCode.EXECUTION_ERROR, False),
        (httpx.LocalProtocolError("bad header"), ErrorCode.EXECUTION_ERROR, False),
        (httpx.TooManyRedirects("loop"), ErrorCode.EXECUTION_ERROR, False),
        (httpx.InvalidURL("bad"), ErrorCode.EXECUTION_ERROR, False),
        (UnicodeEncodeError("ascii", "é", 0, 1, "no"), ErrorCode.EXECUTION_ERROR, False),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Exception) else str(v),
)
def test_error_map(exc: Exception, code: ErrorCode, retryable: bool) -> None:
    """Each httpx failure maps to one code, the most specific entry winning, cause chained."""
    with pytest.raises(ToolCallError) as info, _translate_errors(_call()):
        raise exc
    assert info.value.code is code
    assert info.value.retryable is retryable
    assert info.value.__cause__ is exc


def test_error_map_is_exercised() -> None:
    """The table above covers every key of the adapter's error map."""
    assert set(_ERROR_MAP) == {
        httpx.TimeoutException, httpx.TransportError, httpx.UnsupportedProtocol,
        httpx.LocalProtocolError, httpx.TooManyRedirects, httpx.InvalidURL, UnicodeEncodeError,
    }  # fmt: skip


def test_error_messages_are_masked() -> None:
    """A secret that reaches an httpx message is masked."""
    call = _call()
    call.secrets.add("sekret-value-42")
    with pytest.raises(ExecutionError) as info, _translate_errors(call):
        raise httpx.ConnectError("could not reach sekret-value-42")
    assert "sekret-value-42" not in info.value.message
