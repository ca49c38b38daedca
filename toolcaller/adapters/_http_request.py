"""What one attempt of an HTTP tool sends: the `http` entry's spec, and the request built from it.

See `toolcaller.adapters.http` for the rules (templates, query or body, `${VAR}`, secrets).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolcaller._types import JSONObject
from toolcaller.adapters._env import expand_vars
from toolcaller.adapters.base import AttemptContext
from toolcaller.core.redact import is_secret_name, mask_text
from toolcaller.core.tool import Tool
from toolcaller.errors import ExecutionError, InvalidParamsError

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "QUERY_METHODS", "Call", "HttpSpec", "prepare"]

DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024
QUERY_METHODS = frozenset({"GET", "DELETE", "HEAD", "OPTIONS"})
_TEMPLATE = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_.-]*)\}")
_CACHE_KEY = "http.spec"


class HttpSpec(BaseModel):
    """The `http` object of a registry entry."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, coerce_numbers_to_str=True
    )

    method: str = Field("GET", description="HTTP method.")
    url: str = Field(min_length=1, description="URL; `{name}` takes a param, `${VAR}` the env.")
    headers: dict[str, str] = Field(default_factory=dict, description="Headers; may read ${VAR}.")
    query: dict[str, str] = Field(default_factory=dict, description="Fixed query entries.")
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


@dataclass(slots=True)
class Call:
    """One prepared request: what to send, how long it may take, and how to name it."""

    tool_name: str
    method: str
    url: str
    shown_url: str
    query: list[tuple[str, str | int | float | bool | None]]
    headers: dict[str, str]
    content: bytes | None
    timeout_s: float
    deadline: float
    cap: int
    follow_redirects: bool
    secrets: set[str]

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


def prepare(tool: Tool, params: JSONObject, ctx: AttemptContext) -> Call:
    """Build one attempt's request from the tool's entry and the params; declare its secrets."""
    start = time.monotonic()
    spec = _spec(tool)
    rest = dict(params)
    url = _fill_template(spec.url, rest, tool.name)
    url, revealed = expand_vars(url, os.environ, where=f"the URL of tool {tool.name!r}")
    ctx.secrets.update(revealed)
    headers = _headers(spec, ctx, tool.name)
    query: list[tuple[str, str | int | float | bool | None]] = []
    for key, template in spec.query.items():
        value, revealed = expand_vars(template, os.environ, where=f"query {key!r} of {tool.name!r}")
        ctx.secrets.update(revealed)
        if value and is_secret_name(key):
            ctx.secrets.add(value)
        query.append((key, value))
    content = None
    if spec.method in QUERY_METHODS:
        query.extend(_to_query(rest))
    else:
        content = _to_json(rest, tool.name)
        headers.setdefault("Content-Type", "application/json")
    timeout_s = ctx.timeout_s if spec.timeout is None else min(ctx.timeout_s, spec.timeout / 1000)
    shown = mask_text(url.split("?", 1)[0], ctx.secrets)
    return Call(
        tool.name, spec.method, url, shown, query, headers, content, timeout_s,
        start + timeout_s, spec.max_response_bytes, spec.follow_redirects, ctx.secrets,
    )  # fmt: skip


def _spec(tool: Tool) -> HttpSpec:
    spec = tool.cache.get(_CACHE_KEY)
    if isinstance(spec, HttpSpec):
        return spec
    try:
        spec = HttpSpec.model_validate(tool.target)
    except ValidationError as exc:
        raise ExecutionError(
            f"tool {tool.name!r} has an invalid `http` entry: {exc.error_count()} problem(s)",
            details=[{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()],
            permanent=True,
        ) from exc
    tool.cache[_CACHE_KEY] = spec
    return spec


def _fill_template(url: str, params: JSONObject, tool_name: str) -> str:
    """Put the params named by `{name}` into the URL, percent-encoded, and take them out."""
    names = list(dict.fromkeys(_TEMPLATE.findall(url)))
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
    return _TEMPLATE.sub(lambda m: values[m.group(1)], url)


def _scalar_text(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)  # true/false, 3, 2.5: as JSON writes them


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


def _headers(spec: HttpSpec, ctx: AttemptContext, tool_name: str) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, template in spec.headers.items():
        where = f"header {name!r} of {tool_name!r}"
        value, revealed = expand_vars(template, os.environ, where=where)
        ctx.secrets.update(revealed)
        if value and is_secret_name(name):
            ctx.secrets.add(value)
            scheme, _, credentials = value.partition(" ")
            if credentials.strip() and scheme.isalpha():  # "Bearer abc": abc alone is secret too
                ctx.secrets.add(credentials.strip())
        headers[name] = value
    return headers
