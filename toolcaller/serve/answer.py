"""An envelope as an MCP `tools/call` result: what a model reads, what a program reads.

Success: `structuredContent` is the result when it is a JSON object; any other value (a
number, a list, a string…) is wrapped as `{"result": value}` and `_meta` says so
(`"toolcaller/wrapped": "result"`). The same JSON goes in one text block, for clients that
read only text. Failure: `isError: true`, one text block `CODE: message` (the message
already redacted by the engine), and `_meta["toolcaller/error"]` with the code, message,
`retryable` and the details. Every result's `_meta["toolcaller/call"]` holds the call id, the
attempts made, the duration in milliseconds and the arrival timestamp.

A toolcaller client of a toolcaller server reads these keys back (`toolcaller.adapters.mcp`),
so its envelope has the served call's code and result.
"""

from __future__ import annotations

import json
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.envelope import CallMetadata, Envelope, format_timestamp

__all__ = ["CALL_KEY", "ERROR_KEY", "WRAPPED_KEY", "WRAPPER", "to_call_result"]

CALL_KEY = "toolcaller/call"
"""`_meta` key of the call's id, attempts, duration (ms) and timestamp."""
ERROR_KEY = "toolcaller/error"
"""`_meta` key of a failure's code, message, retryable flag and details."""
WRAPPED_KEY = "toolcaller/wrapped"
"""`_meta` key present when `structuredContent` wraps a value that is not an object."""
WRAPPER = "result"
"""The key a wrapped value sits under in `structuredContent`."""


def to_call_result(envelope: Envelope) -> JSONObject:
    """Return the `tools/call` result of a call's envelope (camelCase, as on the wire)."""
    meta: JSONObject = {CALL_KEY: _call_meta(envelope.metadata)}
    error = envelope.error
    if error is not None:
        meta[ERROR_KEY] = {"code": error.code.value, "message": error.message,
                           "retryable": error.retryable, "details": error.details}
        return {"content": [{"type": "text", "text": f"{error.code.value}: {error.message}"}],
                "isError": True, "_meta": meta, "resultType": "complete"}
    value = envelope.result
    structured: Any = value
    if not isinstance(value, dict):
        structured = {WRAPPER: value}
        meta[WRAPPED_KEY] = WRAPPER
    text = json.dumps(structured, ensure_ascii=False, allow_nan=False)
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured,
            "isError": False, "_meta": meta, "resultType": "complete"}


def _call_meta(metadata: Any) -> JSONObject:
    if not isinstance(metadata, CallMetadata):  # pragma: no cover - calls have call metadata
        return {}
    return {"callId": metadata.call_id, "attempts": metadata.attempts,
            "duration": metadata.duration, "timestamp": format_timestamp(metadata.timestamp)}
