"""What one attempt of an HTTP tool sends: the `http` entry's spec, and the request built from it.

See `toolcaller.adapters.http` for the rules (templates, query, headers or body, `${VAR}`,
secrets), `_http_encoding` for how values are written, `_http_auth` for credentials. The
secrets a request carries are also kept out of httpx's own log (`_http_log`).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from toolcaller._types import JSONObject
from toolcaller.adapters._http_auth import Credential, choose_credentials
from toolcaller.adapters._http_encoding import (
    FORM,
    MULTIPART,
    ParamStyle,
    form_body,
    multipart_body,
    query_pairs,
    raw_body,
    scalar_text,
)
from toolcaller.adapters._http_log import remember_secrets
from toolcaller.adapters.base import AttemptContext
from toolcaller.core.redact import is_secret_name
from toolcaller.core.templates import URL_PARAM, expand_vars, url_params
from toolcaller.core.tool import Tool
from toolcaller.errors import InvalidParamsError

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "IDEMPOTENT_METHODS",
    "QUERY_METHODS",
    "Call",
    "HttpSpec",
    "prepare",
]

DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024
QUERY_METHODS = frozenset({"GET", "DELETE", "HEAD", "OPTIONS"})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
"""Methods that may be sent again after a failure whose effect is unknown (RFC 9110 §9.2.2)."""
TIMEOUT_GUARD_S = 1.0
"""httpx's timeout is the attempt's time left plus this (see `prepare`)."""
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110 token
_BAD_HEADER_VALUE = re.compile(r"[^\t\x20-\x7e]")  # httpx sends header values as ASCII


class HttpSpec(BaseModel):
    """The `http` object of a registry entry."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, coerce_numbers_to_str=True
    )

    method: str = Field("GET", description="HTTP method.")
    url: str = Field(min_length=1, description="URL; `{name}` takes a param, `${VAR}` the env.")
    headers: dict[str, str] = Field(default_factory=dict, description="Headers; may read ${VAR}.")
    query: dict[str, str] = Field(default_factory=dict, description="Fixed query entries.")
    query_params: list[str] = Field(
        default_factory=list, alias="queryParams",
        description="Params sent in the query string whatever the method.",
    )  # fmt: skip
    header_params: dict[str, str] = Field(
        default_factory=dict, alias="headerParams",
        description="Params sent as headers: {param: header name}.",
    )  # fmt: skip
    body_param: str | None = Field(
        None, alias="bodyParam", min_length=1,
        description="The param whose value is the whole JSON body; other params go to the query.",
    )  # fmt: skip
    content_type: str | None = Field(
        None, alias="contentType",
        description="Media type of the body: JSON (default), application/x-www-form-urlencoded, "
                    "multipart/form-data, or another (the body param is then a string).",
    )  # fmt: skip
    styles: dict[str, ParamStyle] = Field(
        default_factory=dict,
        description="How query params and form fields are written: {param: {style, explode}}.",
    )
    auth: list[list[Credential]] = Field(
        default_factory=list,
        description="Credentials read from the environment; the first complete one is sent.",
    )
    timeout: float | None = Field(None, gt=0, description="Cap on the attempt's timeout, in ms.")
    follow_redirects: bool = Field(True, alias="followRedirects", description="Follow 3xx.")
    max_response_bytes: int = Field(
        DEFAULT_MAX_RESPONSE_BYTES, alias="maxResponseBytes", gt=0, description="Cap on the body."
    )

    @field_validator("method")
    @classmethod
    def _upper(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z]+", value):
            raise ValueError(f"not an HTTP method: {value!r}")
        return value.upper()

    @field_validator("auth", mode="before")
    @classmethod
    def _alternatives(cls, value: Any) -> Any:
        """Accept one credential, or a list of alternatives each one credential or a list."""
        if isinstance(value, dict):
            return [[value]]
        if isinstance(value, list):
            return [item if isinstance(item, list) else [item] for item in value]
        return value

    @property
    def media_type(self) -> str:
        """The body's media type: `contentType`, else a fixed Content-Type header, else JSON."""
        given = self.content_type or next(
            (v for k, v in self.headers.items() if k.lower() == "content-type"), "")
        return given.split(";")[0].strip().lower() or "application/json"

    @model_validator(mode="after")
    def _one_place_per_param(self) -> HttpSpec:
        bad = [h for h in self.header_params.values() if not _HEADER_NAME.fullmatch(h)]
        if bad:
            raise ValueError(f"headerParams: not a header name: {bad[0]!r}")
        places: dict[str, str] = {}
        for where, names in (
            ("the URL", url_params(self.url)),
            ("queryParams", self.query_params),
            ("headerParams", list(self.header_params)),
            ("bodyParam", [self.body_param] if self.body_param else []),
        ):
            for name in dict.fromkeys(names):
                if name in places:
                    raise ValueError(f"param {name!r} is in both {places[name]} and {where}")
                places[name] = where
        return self


@dataclass(slots=True)
class Call:
    """One prepared request: what to send, how long it may take, and how to name it."""

    tool_name: str
    method: str
    url: str
    query: list[tuple[str, str | int | float | bool | None]]
    headers: dict[str, str]
    content: bytes | None
    timeout_s: float
    deadline: float
    cap: int
    follow_redirects: bool
    secrets: set[str]
    retry_safe: bool = True
    """Whether a failure whose effect on the server is unknown may be retried (idempotent)."""
    auth_hint: str = ""
    """Which credentials were not sent because their variables are not set (for 401/403)."""

    @property
    def shown_url(self) -> str:
        """The URL without its query, for messages (which mask `secrets` as a whole)."""
        return self.url.split("?", 1)[0]

    def build(self, client: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        url, query = httpx.URL(self.url), self.query
        if query and url.query:  # httpx's `params` would replace the URL's own query: merge
            query = [*url.params.multi_items(), *query]
            url = url.copy_with(query=None)
        return client.build_request(
            self.method,
            url,
            params=query or None,
            headers=self.headers,
            content=self.content,
            extensions={"timeout": Remaining(self.deadline, self.timeout_s)},
        )


class Remaining(dict[str, float]):
    """httpcore's `timeout` extension, answering each network wait with the time left.

    httpcore reads `timeouts.get("connect" | "write" | "read" | "pool")` right before each
    wait, so a request as a whole, not each of its phases, stays within the attempt's timeout.
    Were it to copy the dict instead, each phase would still be bounded by the full timeout.
    """

    def __init__(self, deadline: float, timeout_s: float) -> None:
        super().__init__(connect=timeout_s, read=timeout_s, write=timeout_s, pool=timeout_s)
        self._deadline = deadline

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self:
            return default
        if not math.isfinite(self._deadline):
            return None  # no timeout at all
        return max(self._deadline - time.monotonic(), 0.001)


def prepare(spec: HttpSpec, tool: Tool, params: JSONObject, ctx: AttemptContext) -> Call:
    """Build one attempt's request from the tool's entry and the params; declare its secrets."""
    rest = dict(params)
    url = _fill_template(spec.url, rest, tool.name)
    url, revealed = expand_vars(url, os.environ, where=f"the URL of tool {tool.name!r}")
    ctx.secrets.update(revealed)
    headers = _headers(spec, ctx, tool.name)
    query = _fixed_query(spec, ctx, tool.name)
    applied = choose_credentials(spec.auth, tool_name=tool.name) if spec.auth else None
    if applied is not None:
        _put_credentials(applied, headers, query, ctx)
    if spec.header_params:
        _put_header_params(spec.header_params, rest, headers, ctx, tool.name)
    for name in spec.query_params:
        if name in rest:
            query.extend(query_pairs({name: rest.pop(name)}, spec.styles))
    body: Any = _NO_BODY
    if spec.body_param is not None:  # the body is one param: every other one is a query entry
        if spec.body_param in rest:
            body = rest.pop(spec.body_param)
        query.extend(query_pairs(rest, spec.styles))
    elif spec.method in QUERY_METHODS:
        query.extend(query_pairs(rest, spec.styles))
    else:
        body = rest
    call = Call(tool.name, spec.method, url, query, headers, None, 0.0, 0.0,
                spec.max_response_bytes, spec.follow_redirects, ctx.secrets,
                retry_safe=spec.method in IDEMPOTENT_METHODS or tool.idempotent,
                auth_hint=applied.wanted if applied is not None else "")
    if body is not _NO_BODY:
        _put_body(call, spec, body, tool.name)
    # The engine ends the attempt at its limit by cancelling it; httpx's own timeout comes a
    # guard later, so that the two never race: a cancel landing in httpcore's clean-up after a
    # ReadTimeout would leave the connection open. An entry's shorter `timeout` is httpx's.
    timeout_s = ctx.remaining_s() + TIMEOUT_GUARD_S
    if spec.timeout is not None:
        timeout_s = min(timeout_s, spec.timeout / 1000)
    call.timeout_s, call.deadline = timeout_s, time.monotonic() + timeout_s
    remember_secrets(ctx.secrets)
    return call


_NO_BODY = object()


def _put_body(call: Call, spec: HttpSpec, body: Any, tool_name: str) -> None:
    """Encode the body by the entry's media type, and say which (unless a header says so)."""
    media = spec.media_type
    if media == MULTIPART:
        if not isinstance(body, dict):
            raise _not_an_object(tool_name, media)
        call.content, with_boundary = multipart_body(body, tool_name)
        for key in [k for k in call.headers if k.lower() == "content-type"]:
            del call.headers[key]  # a fixed one would lack the boundary
        call.headers["Content-Type"] = with_boundary
        return
    if media == FORM:
        if not isinstance(body, dict):
            raise _not_an_object(tool_name, media)
        call.content = form_body(body, spec.styles)
    elif media == "application/json" or media.endswith("+json"):
        call.content = _to_json(body, tool_name)
    else:
        call.content = raw_body(body, tool_name)
    if not any(k.lower() == "content-type" for k in call.headers):
        call.headers["Content-Type"] = spec.content_type or media


def _not_an_object(tool_name: str, media: str) -> InvalidParamsError:
    return InvalidParamsError(
        f"tool {tool_name!r} sends a {media} body, whose fields must be an object",
        details=[{"path": "/", "message": "not an object"}],
    )


def _put_credentials(applied: Any, headers: dict[str, str],
                     query: list[tuple[str, str | int | float | bool | None]],
                     ctx: AttemptContext) -> None:
    ctx.secrets.update(applied.secrets)
    for name, value in applied.headers.items():
        if not any(k.lower() == name.lower() for k in headers):  # a fixed header wins
            headers[name] = value
    query.extend(applied.query)
    if applied.cookies:
        cookie = "; ".join(applied.cookies)
        old = next((k for k in headers if k.lower() == "cookie"), None)
        headers[old or "Cookie"] = f"{headers[old]}; {cookie}" if old else cookie


def _fill_template(url: str, params: JSONObject, tool_name: str) -> str:
    """Put the params named by `{name}` into the URL, percent-encoded, and take them out."""
    names = url_params(url)
    if not names:
        return url
    missing = [n for n in names if params.get(n) is None]
    unfit = [n for n in names if isinstance(params.get(n), dict | list)]
    if missing or unfit:
        problem = "missing" if missing else "not a string, number or boolean"
        raise InvalidParamsError(
            f"tool {tool_name!r}: URL param(s) {', '.join(map(repr, missing or unfit))} "
            f"{problem}; its URL {url!r} needs {', '.join(map(repr, names))}",
            details=[{"path": f"/{n}", "message": problem} for n in missing or unfit],
        )
    values = {n: urllib.parse.quote(scalar_text(params.pop(n)), safe="") for n in names}
    return URL_PARAM.sub(lambda m: values[m.group(1)], url)


def _to_json(params: JSONObject, tool_name: str) -> bytes:
    try:
        return json.dumps(params, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise InvalidParamsError(f"params of tool {tool_name!r} are not JSON: {exc}") from exc


def _fixed_query(
    spec: HttpSpec, ctx: AttemptContext, tool_name: str
) -> list[tuple[str, str | int | float | bool | None]]:
    query: list[tuple[str, str | int | float | bool | None]] = []
    for key, template in spec.query.items():
        value, revealed = expand_vars(template, os.environ, where=f"query {key!r} of {tool_name!r}")
        ctx.secrets.update(revealed)
        if value and is_secret_name(key):
            ctx.secrets.add(value)
        query.append((key, value))
    return query


def _put_header_params(
    header_params: dict[str, str],
    params: JSONObject,
    headers: dict[str, str],
    ctx: AttemptContext,
    tool_name: str,
) -> None:
    """Move the `headerParams` params into headers (they win over fixed headers of that name)."""
    for param, header in header_params.items():
        value = params.pop(param, None)
        if value is None:
            continue  # an optional header left out
        text = _header_text(value)
        if _BAD_HEADER_VALUE.search(text):
            raise InvalidParamsError(
                f"tool {tool_name!r}: param {param!r} goes to header {header!r}, whose value "
                "must be printable ASCII on one line",
                details=[{"path": f"/{param}", "message": "not a valid header value"}],
            )
        for key in [k for k in headers if k.lower() == header.lower()]:
            del headers[key]
        headers[header] = text
        if text and (is_secret_name(header) or is_secret_name(param)):
            _add_header_secret(text, ctx)


def _header_text(value: object) -> str:
    """Write a param as a header value.

    Scalars as in the URL, arrays of scalars comma-joined (OpenAPI's `simple` style), anything
    else as compact JSON.
    """
    if isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
        return ",".join(scalar_text(v) for v in value if v is not None)
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return scalar_text(value)


def _add_header_secret(value: str, ctx: AttemptContext) -> None:
    ctx.secrets.add(value)
    scheme, _, credentials = value.partition(" ")
    if credentials.strip() and scheme.isalpha():  # "Bearer abc": abc alone is secret too
        ctx.secrets.add(credentials.strip())


def _headers(spec: HttpSpec, ctx: AttemptContext, tool_name: str) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, template in spec.headers.items():
        where = f"header {name!r} of {tool_name!r}"
        value, revealed = expand_vars(template, os.environ, where=where)
        ctx.secrets.update(revealed)
        if value and is_secret_name(name):
            _add_header_secret(value, ctx)
        headers[name] = value
    return headers
