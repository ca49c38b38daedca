"""HTTP tools through the engine against a real httpbin: codes, retries, text rules, bodies."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from toolcaller import ToolCaller
from toolcaller.adapters.http import HttpAdapter
from toolcaller.core.tool import Tool

pytestmark = pytest.mark.integration


@pytest.fixture
def caller(httpbin_url: str) -> Iterator[Any]:
    tools = [
        Tool(
            name=name, description=name, params_schema={"type": "object"}, kind="http",
            target={"method": "GET", "url": f"{httpbin_url}{path}"},
        )
        for name, path in [
            ("h.get", "/get"), ("h.503", "/status/503"), ("h.404", "/status/404"),
            ("h.delay", "/delay/3"), ("h.html", "/html"), ("h.bytes", "/bytes/16"),
        ]
    ]  # fmt: skip
    caller = ToolCaller(tools=tools, adapters={"http": HttpAdapter(trust_env=False)})
    yield caller
    caller.close()


class TestThroughEngine:
    def test_success(self, caller: Any) -> None:
        """A 2xx JSON body is the parsed result."""
        envelope = caller.handle({"toolName": "h.get", "params": {"a": "1"}})
        assert envelope["success"], envelope
        assert envelope["result"]["args"] == {"a": "1"}

    def test_503_is_retried_until_exhausted(self, caller: Any) -> None:
        """503 is retried: RETRY_EXHAUSTED after 1 + retries attempts."""
        options = {"retries": 2, "retryDelay": 20}
        envelope = caller.handle({"toolName": "h.503", "options": options})
        assert envelope["error"]["code"] == "RETRY_EXHAUSTED"
        assert envelope["metadata"]["attempts"] == 3

    def test_404_is_not_retried(self, caller: Any) -> None:
        """404 is permanent: EXECUTION_ERROR after one attempt."""
        options = {"retries": 3, "retryDelay": 20}
        envelope = caller.handle({"toolName": "h.404", "options": options})
        assert envelope["error"]["code"] == "EXECUTION_ERROR"
        assert envelope["metadata"]["attempts"] == 1

    def test_delay_times_out(self, caller: Any) -> None:
        """A slow endpoint gives TIMEOUT on time (sync path)."""
        options = {"timeout": 300, "retries": 0}
        envelope = caller.handle({"toolName": "h.delay", "options": options})
        assert envelope["error"]["code"] == "TIMEOUT"
        assert envelope["metadata"]["attempts"] == 1
        assert envelope["metadata"]["duration"] < 1000

    async def test_delay_times_out_async(self, caller: Any) -> None:
        """A slow endpoint gives TIMEOUT on time (async path, cancelled)."""
        options = {"timeout": 300, "retries": 0}
        envelope = await caller.ahandle({"toolName": "h.delay", "options": options})
        assert envelope["error"]["code"] == "TIMEOUT"
        assert envelope["metadata"]["duration"] < 1000

    def test_html_with_format_json_is_a_string(self, caller: Any) -> None:
        """HTML is text by nature: a string and a success under format json (rule 7)."""
        envelope = caller.handle({"toolName": "h.html"})
        assert envelope["success"], envelope
        assert "Moby-Dick" in envelope["result"]

    def test_bytes_with_format_json_say_use_raw(self, caller: Any) -> None:
        """A binary body under format json is PARSE_ERROR whose message says to use raw."""
        envelope = caller.handle({"toolName": "h.bytes", "options": {"retries": 2}})
        assert envelope["error"]["code"] == "PARSE_ERROR"
        assert "format 'raw'" in envelope["error"]["message"]
        assert envelope["metadata"]["attempts"] == 1

    def test_raw_formats(self, caller: Any) -> None:
        """With format raw, HTML is a string and bytes are {mediaType, base64} (standard)."""
        html = caller.handle({"toolName": "h.html", "options": {"format": "raw"}})
        assert html["success"]
        assert "Moby-Dick" in html["result"]
        data = caller.handle({"toolName": "h.bytes", "options": {"format": "raw"}})
        assert data["success"]
        assert data["result"]["mediaType"] == "application/octet-stream"
        assert len(base64.b64decode(data["result"]["base64"], validate=True)) == 16


def http_caller(tools: list[Tool]) -> ToolCaller:
    return ToolCaller(tools=tools, adapters={"http": HttpAdapter(trust_env=False)})


def entry(name: str, url: str, method: str = "GET", *, idempotent: bool = False,
          **spec: Any) -> Tool:
    return Tool(name=name, description=name, params_schema={"type": "object"}, kind="http",
                target={"method": method, "url": url, **spec}, idempotent=idempotent)


class TestRetrySafety:
    """A request whose effect on the server is unknown is sent again only if that is safe."""

    @pytest.mark.parametrize(("method", "idempotent", "attempts"),
                             [("POST", False, 1), ("PATCH", False, 1), ("POST", True, 3),
                              ("PUT", False, 3), ("DELETE", False, 3)],
                             ids=["post", "patch", "post-idempotent", "put", "delete"])
    def test_5xx_retried_only_when_idempotent(self, httpbin_url: str, method: str,
                                              idempotent: bool, attempts: int) -> None:
        """A 503 to a POST ends after one attempt unless the tool is marked idempotent."""
        tool = entry("t", f"{httpbin_url}/status/503", method, idempotent=idempotent)
        with http_caller([tool]) as caller:
            envelope = caller.handle({"toolName": "t", "options": {"retries": 2,
                                                                  "retryDelay": 10}})
        assert envelope["metadata"]["attempts"] == attempts
        if attempts == 1:
            assert "not idempotent" in envelope["error"]["message"]

    def test_post_timeout_is_not_retried(self, httpbin_url: str) -> None:
        """A POST that timed out may have run: TIMEOUT after one attempt."""
        tool = entry("t", f"{httpbin_url}/delay/3", "POST")
        with http_caller([tool]) as caller:
            envelope = caller.handle({"toolName": "t", "options": {
                "timeout": 300, "retries": 2, "retryDelay": 10}})
        assert envelope["error"]["code"] == "TIMEOUT"
        assert envelope["metadata"]["attempts"] == 1

    def test_429_is_retried_for_any_method(self, aux_url: str) -> None:
        """429 says the request was not processed: a POST is retried too."""
        tool = entry("t", f"{aux_url}/429-seconds", "GET")
        with http_caller([tool]) as caller:
            envelope = caller.handle({"toolName": "t", "options": {
                "retries": 1, "retryDelay": 10, "deadline": 10_000}})
        assert envelope["metadata"]["attempts"] == 2


class TestBodies:
    def test_form_urlencoded(self, httpbin_url: str) -> None:
        """A form body sends fields as key=value; objects in brackets, arrays repeated."""
        tool = entry("t", f"{httpbin_url}/post", "POST",
                     contentType="application/x-www-form-urlencoded")
        params = {"custname": "ada", "size": "small", "topping": ["cheese", "onion"],
                  "metadata": {"order": 7}}
        with http_caller([tool]) as caller:
            envelope = caller.handle({"toolName": "t", "params": params})
        assert envelope["success"], envelope
        assert envelope["result"]["form"] == {"custname": "ada", "size": "small",
                                              "topping": ["cheese", "onion"],
                                              "metadata[order]": "7"}
        assert envelope["result"]["headers"]["Content-Type"] == (
            "application/x-www-form-urlencoded")

    def test_multipart_with_a_file(self, httpbin_url: str) -> None:
        """A multipart body sends text fields and {base64} files."""
        tool = entry("t", f"{httpbin_url}/post", "POST", contentType="multipart/form-data")
        upload = {"base64": base64.b64encode(b"hello file").decode(), "filename": "a.txt",
                  "mediaType": "text/plain"}
        with http_caller([tool]) as caller:
            envelope = caller.handle({"toolName": "t", "params": {"note": "hi",
                                                                  "upload": upload}})
        assert envelope["success"], envelope
        assert envelope["result"]["form"] == {"note": "hi"}
        assert envelope["result"]["files"] == {"upload": "hello file"}

    @pytest.mark.parametrize(("style", "expected"), [
        ({"style": "form", "explode": True}, {"k": "v", "n": "1"}),
        ({"style": "form", "explode": False}, {"freeform": "k,v,n,1"}),
        ({"style": "deepObject"}, {"freeform[k]": "v", "freeform[n]": "1"}),
    ], ids=["form-explode", "form", "deep-object"])
    def test_query_object_styles(self, httpbin_url: str, style: Any, expected: Any) -> None:
        """An object query param is written by its OpenAPI style, not as JSON text."""
        tool = entry("t", f"{httpbin_url}/anything", styles={"freeform": style})
        with http_caller([tool]) as caller:
            envelope = caller.handle({"toolName": "t", "params": {"freeform": {"k": "v",
                                                                               "n": 1}}})
        assert envelope["result"]["args"] == expected


class TestCredentials:
    def test_basic_auth_from_the_environment(self, httpbin_url: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
        """Basic credentials read from ${VAR}s authenticate; the password never shows."""
        monkeypatch.setenv("TC_HB_USER", "ada")
        monkeypatch.setenv("TC_HB_PASSWORD", "s3cret-pw")
        auth = {"type": "basic", "username": "${TC_HB_USER}", "password": "${TC_HB_PASSWORD}"}
        good = entry("good", f"{httpbin_url}/basic-auth/ada/s3cret-pw", auth=auth)
        bad = entry("bad", f"{httpbin_url}/basic-auth/ada/other-pw", auth=auth)
        with http_caller([good, bad]) as caller:
            assert caller.handle({"toolName": "good"})["result"] == {
                "authenticated": True, "user": "ada"}
            failed = caller.handle({"toolName": "bad"})
            assert failed["error"]["code"] == "EXECUTION_ERROR"
            assert "s3cret-pw" not in str(failed)
            assert "s3cret-pw" not in str(
                caller.history.records())

    def test_first_complete_alternative_wins(self, httpbin_url: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
        """Alternatives whose variables are unset are skipped; the bearer token is sent."""
        monkeypatch.delenv("TC_UNSET_KEY", raising=False)
        monkeypatch.setenv("TC_HB_TOKEN", "tok-123")
        auth = [{"type": "apiKey", "in": "header", "name": "X-Key", "value": "${TC_UNSET_KEY}"},
                {"type": "bearer", "token": "${TC_HB_TOKEN}"}]
        with http_caller([entry("t", f"{httpbin_url}/bearer", auth=auth)]) as caller:
            assert caller.handle({"toolName": "t"})["result"] == {
                "authenticated": True, "token": "tok-123"}

    def test_unset_credentials_are_named_on_401(self, httpbin_url: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
        """With no credential set, the request goes without and a 401 names the variables."""
        monkeypatch.delenv("TC_UNSET_TOKEN", raising=False)
        auth = {"type": "bearer", "token": "${TC_UNSET_TOKEN}"}
        with http_caller([entry("t", f"{httpbin_url}/bearer", auth=auth)]) as caller:
            envelope = caller.handle({"toolName": "t"})
        assert envelope["error"]["code"] == "EXECUTION_ERROR"
        assert "${TC_UNSET_TOKEN}" in envelope["error"]["message"]

    def test_api_key_in_query_and_cookie(self, httpbin_url: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
        """An API key goes in the query or a cookie, as the credential says."""
        monkeypatch.setenv("TC_HB_KEY", "key-9876")
        auth = [[{"type": "apiKey", "in": "query", "name": "api_key", "value": "${TC_HB_KEY}"},
                 {"type": "apiKey", "in": "cookie", "name": "sid", "value": "${TC_HB_KEY}"}]]
        with http_caller([entry("t", f"{httpbin_url}/anything", auth=auth)]) as caller:
            result = caller.handle({"toolName": "t"})["result"]
        assert result["args"] == {"api_key": "key-9876"}
        assert result["headers"]["Cookie"] == "sid=key-9876"
