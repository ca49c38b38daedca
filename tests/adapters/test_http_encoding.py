"""How HTTP params are written on the wire: query styles, form and multipart bodies, credentials."""

from __future__ import annotations

import base64
import urllib.parse
from typing import Any

import httpx
import pytest

from toolcaller import testing
from toolcaller.adapters._http_auth import Credential, choose_credentials
from toolcaller.adapters._http_encoding import ParamStyle, form_body, query_pairs
from toolcaller.adapters._http_request import HttpSpec, prepare
from toolcaller.adapters.base import parse_entry
from toolcaller.core.tool import Tool
from toolcaller.errors import ExecutionError, InvalidParamsError


def built(params: dict[str, Any], method: str = "POST", *, idempotent: bool = False,
          **spec: Any) -> httpx.Request:
    """The request one attempt would send (no network)."""
    tool = Tool(name="t", description="t", params_schema={"type": "object"}, kind="http",
                target={"method": method, "url": "http://h/x", **spec}, idempotent=idempotent)
    entry = parse_entry(HttpSpec, tool, "http")
    with httpx.Client() as client:
        return prepare(entry, tool, params, testing.attempt_context(timeout=5000)).build(client)


def query_of(request: httpx.Request) -> list[tuple[str, str]]:
    return urllib.parse.parse_qsl(request.url.query.decode(), keep_blank_values=True)


class TestQueryStyles:
    @pytest.mark.parametrize(("style", "value", "expected"), [
        ({"style": "form"}, [3, 4], [("id", "3"), ("id", "4")]),
        ({"style": "form", "explode": False}, [3, 4], [("id", "3,4")]),
        ({"style": "spaceDelimited", "explode": False}, [3, 4], [("id", "3 4")]),
        ({"style": "pipeDelimited", "explode": False}, [3, 4], [("id", "3|4")]),
        ({"style": "form"}, {"role": "admin", "n": 2}, [("role", "admin"), ("n", "2")]),
        ({"style": "form", "explode": False}, {"a": True}, [("id", "a,true")]),
        ({"style": "deepObject"}, {"a": {"b": [1, 2]}},
         [("id[a][b][0]", "1"), ("id[a][b][1]", "2")]),
        ({"style": "form"}, "x", [("id", "x")]),
    ], ids=["form-array", "form-array-flat", "space", "pipe", "form-object",
            "form-object-flat", "deep-nested", "scalar"])
    def test_openapi_styles(self, style: Any, value: Any, expected: Any) -> None:
        """Each OpenAPI style and explode writes arrays and objects as the specification says."""
        pairs = list(query_pairs({"id": value}, {"id": ParamStyle.model_validate(style)}))
        assert pairs == expected

    def test_unstyled_params_keep_the_plain_rule(self) -> None:
        """Without a style, arrays repeat their key and objects are JSON text."""
        assert list(query_pairs({"a": [1, None, "x"], "o": {"k": 1}, "n": None}, {})) == [
            ("a", "1"), ("a", "x"), ("o", '{"k":1}')]

    def test_styles_reach_the_url(self) -> None:
        """An entry's `styles` apply to the query string of a GET."""
        request = built({"tags": ["a", "b"]}, "GET",
                        styles={"tags": {"style": "pipeDelimited", "explode": False}})
        assert query_of(request) == [("tags", "a|b")]


class TestBodies:
    def test_form_body_defaults(self) -> None:
        """Form fields: scalars as text, arrays repeated, objects and lists of them bracketed."""
        body = form_body({"a": 1, "b": [1, 2], "meta": {"k": "v"},
                          "items": [{"price": "p1", "qty": 2}], "none": None}, {})
        assert urllib.parse.parse_qsl(body.decode()) == [
            ("a", "1"), ("b", "1"), ("b", "2"), ("meta[k]", "v"),
            ("items[0][price]", "p1"), ("items[0][qty]", "2")]

    def test_content_type_header_picks_the_encoding(self) -> None:
        """A fixed Content-Type header of a form makes the body a form."""
        request = built({"a": "b c"}, headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert request.content == b"a=b+c"

    def test_multipart_parts(self) -> None:
        """Multipart: text fields, JSON parts for objects, files from {base64}; one boundary."""
        upload = {"base64": base64.b64encode(b"\x00\x01").decode(), "filename": "x.bin"}
        request = built({"note": "hi", "meta": {"k": 1}, "file": upload},
                        contentType="multipart/form-data", headers={"Content-Type": "x/y"})
        kind = request.headers["Content-Type"]
        assert kind.startswith("multipart/form-data; boundary=")
        body = request.content
        assert b'name="note"\r\n\r\nhi\r\n' in body
        assert b'name="meta"\r\nContent-Type: application/json\r\n\r\n{"k":1}' in body
        assert b'name="file"; filename="x.bin"\r\nContent-Type: application/octet-stream' in body
        assert b"\x00\x01" in body

    def test_multipart_bad_base64_is_invalid_params(self) -> None:
        """A file whose base64 does not decode is the caller's mistake."""
        with pytest.raises(InvalidParamsError, match="base64"):
            built({"file": {"base64": "***"}}, contentType="multipart/form-data")

    @pytest.mark.parametrize(("body", "expected"), [("plain words", b"plain words"),
                                                    ({"base64": "AAE="}, b"\x00\x01")],
                             ids=["text", "bytes"])
    def test_other_media_types_send_the_body_param(self, body: Any, expected: bytes) -> None:
        """A text/plain body is the body param's string (or bytes), sent as it is."""
        request = built({"doc": body}, contentType="text/plain", bodyParam="doc")
        assert (request.content, request.headers["Content-Type"]) == (expected, "text/plain")

    def test_a_form_body_must_be_an_object(self) -> None:
        """A form body made of a list is INVALID_PARAMS."""
        with pytest.raises(InvalidParamsError, match="object"):
            built({"b": [1]}, contentType="application/x-www-form-urlencoded", bodyParam="b")


class TestCredentials:
    def test_one_credential_or_alternatives(self) -> None:
        """`auth` takes one credential, or alternatives each one credential or several."""
        one = HttpSpec.model_validate({"url": "http://h", "auth": {"type": "bearer",
                                                                   "token": "t"}})
        assert len(one.auth) == 1
        assert len(one.auth[0]) == 1
        many = HttpSpec.model_validate({"url": "http://h", "auth": [
            {"type": "bearer", "token": "t"}, [{"type": "basic", "username": "u",
                                                "password": "p"}]]})
        assert [len(a) for a in many.auth] == [1, 1]

    def test_unknown_credential_type_is_an_invalid_entry(self) -> None:
        """A credential of an unknown type makes the entry invalid (a permanent failure)."""
        tool = Tool(name="t", description="t", params_schema={}, kind="http",
                    target={"url": "http://h", "auth": {"type": "oauth2"}})
        with pytest.raises(ExecutionError, match="invalid `http` entry"):
            parse_entry(HttpSpec, tool, "http")

    def test_basic_password_is_secret_user_name_is_not(self) -> None:
        """The password and the header are secrets; the user name is not (it masks words)."""
        basic = Credential.model_validate({"type": "basic", "username": "${U}",
                                           "password": "${P}"})
        applied = choose_credentials([[basic]], tool_name="t",
                                     environ={"U": "user", "P": "pw-1234"})
        assert applied.headers["Authorization"] == "Basic " + base64.b64encode(
            b"user:pw-1234").decode()
        assert "pw-1234" in applied.secrets
        assert "user" not in applied.secrets

    def test_a_param_header_wins_over_credentials(self) -> None:
        """An Authorization header param given in the call replaces the entry's credentials."""
        request = built({"auth": "Bearer given-123"}, "GET",
                        auth={"type": "bearer", "token": "fixed-456"},
                        headerParams={"auth": "Authorization"})
        assert request.headers["Authorization"] == "Bearer given-123"
