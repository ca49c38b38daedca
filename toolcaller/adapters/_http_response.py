"""What an HTTP answer becomes: a `TextOutput` that says whether it promises JSON, or an error.

2xx bodies (SPEC rule 7): a JSON media type (`application/json`, `*+json`, JSON Lines types)
promises JSON; `text/*` and other textual types (XML, JavaScript, YAML, form data) are text by
nature, a string; a body without a media type is JSON if it parses, else text (binary when it is
not UTF-8); any other type is binary (bytes: PARSE_ERROR saying "use raw" under `format: json`,
`{"mediaType", "base64"}` under `raw`). An empty body is `None` (JSON null) under `json`.
Other statuses raise `ExecutionError`: see `toolcaller.adapters.http`.
"""

from __future__ import annotations

import email.utils
import math
from datetime import UTC, datetime

import httpx

from toolcaller.adapters._http_request import Call
from toolcaller.adapters.base import TextOutput
from toolcaller.core.redact import mask_text
from toolcaller.errors import ExecutionError

__all__ = ["BODY_SNIPPET_CHARS", "outcome", "retry_after_s"]

BODY_SNIPPET_CHARS = 1000
_JSON_TYPES = frozenset({"application/json", "application/x-ndjson", "application/ndjson",
                         "application/jsonl", "application/x-jsonlines",
                         "application/jsonlines"})
_TEXT_TYPES = frozenset(
    {
        "application/xml",
        "application/javascript",
        "application/x-www-form-urlencoded",
        "application/yaml",
        "application/x-yaml",
        "application/graphql",
        "application/sql",
    }
)


def outcome(call: Call, response: httpx.Response, body: bytes, fmt: str) -> object:
    """Return a 2xx answer's output (see the module docstring), or raise the status's error."""
    status = response.status_code
    media, charset = _content_type(response)
    if 200 <= status < 300:
        if not body and fmt == "json":
            return None
        return _body_output(media, charset, body)
    snippet = _decode(body[: BODY_SNIPPET_CHARS * 4], charset)[:BODY_SNIPPET_CHARS]
    details = {"status": status, "body": mask_text(snippet, call.secrets)}
    message = mask_text(
        f"HTTP tool {call.tool_name!r}: {call.method} {call.shown_url} answered "
        f"{status} {response.reason_phrase}".rstrip(),
        call.secrets,
    )
    if status in (408, 429) or (status >= 500 and call.retry_safe):
        wait_s = retry_after_s(response.headers.get("Retry-After"))
        raise ExecutionError(message, details=details, retry_after_s=wait_s)
    if status >= 500:
        raise ExecutionError(message + not_retried(call), details=details, permanent=True)
    raise ExecutionError(message + _hint(status, call), details=details, permanent=True)


def not_retried(call: Call) -> str:
    """Say why a failure whose effect is unknown is not retried."""
    return (f"; not retried: {call.method} is not idempotent (mark the tool \"idempotent\": "
            "true to retry it)")


def _body_output(media: str | None, charset: str | None, body: bytes) -> TextOutput:
    if media is None:  # unlabelled: JSON if it parses, text if UTF-8, else binary
        try:
            return TextOutput(body.decode("utf-8"), None, promises_json=None)
        except UnicodeDecodeError:
            return TextOutput(body, None, promises_json=None)
    if media in _JSON_TYPES or media.endswith("+json"):
        return TextOutput(_decode(body, charset), media, promises_json=True)
    if media.startswith("text/") or media.endswith("+xml") or media in _TEXT_TYPES:
        return TextOutput(_decode(body, charset), media, promises_json=False)
    return TextOutput(body, media, promises_json=False)


def _hint(status: int, call: Call) -> str:
    if status in (401, 403) and call.auth_hint:
        return f"; no credentials were sent: it takes {call.auth_hint}, which is not set"
    if status in (401, 403):
        return "; check the credentials its headers send"
    if status in (404, 405, 410):
        return "; check its method, URL and URL params"
    if 300 <= status < 400:
        return "; a redirect was not followed"
    return ""


def _content_type(response: httpx.Response) -> tuple[str | None, str | None]:
    """Return the media type and charset of a response (httpx's own parse is slower)."""
    value = response.headers.get("Content-Type")
    if not value:
        return None, None
    media, *params = value.split(";")
    charset = None
    for param in params:
        key, _, text = param.partition("=")
        if key.strip().lower() == "charset":
            charset = text.strip().strip('"') or None
    return media.strip().lower() or None, charset


def _decode(body: bytes, charset: str | None) -> str:
    encoding = charset or "utf-8"
    try:
        return body.decode(encoding, errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def retry_after_s(value: str | None) -> float | None:
    """Read `Retry-After` as seconds or as an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max((when - datetime.now(UTC)).total_seconds(), 0.0)
    return max(seconds, 0.0) if math.isfinite(seconds) else None
