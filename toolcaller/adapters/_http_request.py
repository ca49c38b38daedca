"""What one attempt of an HTTP tool sends: the `http` entry's spec, and the request built from it.

See `toolcaller.adapters.http` for the rules (templates, query, headers or body, `${VAR}`,
secrets). The secrets a request carries are also kept out of httpx's own log (`_LogMask`).
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import threading
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from toolcaller._types import JSONObject
from toolcaller.adapters.base import AttemptContext
from toolcaller.core.redact import is_secret_name, mask_text
from toolcaller.core.templates import URL_PARAM, expand_vars, url_params
from toolcaller.core.tool import Tool
from toolcaller.errors import InvalidParamsError

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "LOG_SECRETS_KEPT",
    "QUERY_METHODS",
    "Call",
    "HttpSpec",
    "mask_http_logs",
    "prepare",
]

DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024
QUERY_METHODS = frozenset({"GET", "DELETE", "HEAD", "OPTIONS"})
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
    if spec.header_params:
        _put_header_params(spec.header_params, rest, headers, ctx, tool.name)
    for name in spec.query_params:
        if name in rest:
            query.extend(_to_query({name: rest.pop(name)}))
    content = None
    if spec.body_param is not None:  # the body is one param: every other one is a query entry
        if spec.body_param in rest:
            content = _to_json(rest.pop(spec.body_param), tool.name)
        query.extend(_to_query(rest))
    elif spec.method in QUERY_METHODS:
        query.extend(_to_query(rest))
    else:
        content = _to_json(rest, tool.name)
    if content is not None and not any(k.lower() == "content-type" for k in headers):
        headers["Content-Type"] = "application/json"
    # The engine ends the attempt at its limit by cancelling it; httpx's own timeout comes a
    # guard later, so that the two never race: a cancel landing in httpcore's clean-up after a
    # ReadTimeout would leave the connection open. An entry's shorter `timeout` is httpx's.
    timeout_s = ctx.remaining_s() + TIMEOUT_GUARD_S
    if spec.timeout is not None:
        timeout_s = min(timeout_s, spec.timeout / 1000)
    _LOG_MASK.remember(_as_logged(ctx.secrets))
    return Call(
        tool.name, spec.method, url, query, headers, content, timeout_s,
        time.monotonic() + timeout_s, spec.max_response_bytes, spec.follow_redirects,
        ctx.secrets,
    )  # fmt: skip


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
    values = {n: urllib.parse.quote(_scalar_text(params.pop(n)), safe="") for n in names}
    return URL_PARAM.sub(lambda m: values[m.group(1)], url)


def _scalar_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value)  # 2.5, 1e+100: as JSON writes them


def _to_query(params: JSONObject) -> Iterator[tuple[str, str]]:
    for key, value in params.items():
        items = value if isinstance(value, list) else [value]
        for item in items:
            if item is None:
                continue
            if isinstance(item, dict | list):
                yield key, json.dumps(item, separators=(",", ":"))
            else:
                yield key, _scalar_text(item)


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
        return ",".join(_scalar_text(v) for v in value if v is not None)
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return _scalar_text(value)


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


# -- httpx's own log ---------------------------------------------------------------------

LOG_SECRETS_KEPT = 4096
_HTTP_LOGGERS = (
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
)
_PATH_SAFE = "/!$&'()*+,;=:@%"  # what httpx leaves as it is in a URL's path


class _LogMask(logging.Filter):
    """Masks, in httpx's and httpcore's log records, the secrets that requests carried.

    httpx logs each request's URL, query included, at INFO; httpcore logs hosts and response
    headers at DEBUG. The mask remembers the last `LOG_SECRETS_KEPT` values, process-wide
    (a record names no call), and rewrites a record's message rather than dropping it.
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self._size = size
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._known: tuple[str, ...] = ()

    def remember(self, secrets: Iterable[str]) -> None:
        """Mask these values from now on; forget the least recently used beyond the size."""
        with self._lock:
            added = False
            for secret in secrets:
                if secret in self._recent:
                    self._recent.move_to_end(secret)
                else:
                    self._recent[secret] = None
                    added = True
            if added:
                while len(self._recent) > self._size:
                    self._recent.popitem(last=False)
                self._known = tuple(self._recent)

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask known secrets and token-shaped strings in the record's message; keep it."""
        try:
            text = record.getMessage()
        except (TypeError, ValueError):
            return True  # a malformed record: logging reports it as it would without us
        masked = mask_text(text, [s for s in self._known if s in text])
        if masked != text:
            record.msg, record.args = masked, None
        return True


_LOG_MASK = _LogMask(LOG_SECRETS_KEPT)


def mask_http_logs() -> None:
    """Add the mask to httpx's and httpcore's loggers (idempotent).

    A logger's filters see only the records made on that very logger, not its children's,
    so each logger that httpx or httpcore writes to gets it.
    """
    for name in _HTTP_LOGGERS:
        logging.getLogger(name).addFilter(_LOG_MASK)  # a filter already there is not added


def _as_logged(secrets: Iterable[str]) -> set[str]:
    """Each secret as it is, and percent-encoded as a URL's path or query shows it."""
    forms: set[str] = set()
    for secret in secrets:
        path, query = urllib.parse.quote(secret, _PATH_SAFE), urllib.parse.quote_plus(secret)
        forms.update((secret, path, query, urllib.parse.quote(secret, "")))
    return forms
