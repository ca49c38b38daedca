"""Replies to a model's tool calls, in its provider's own message shape.

| provider           | replies                                                          |
|--------------------|------------------------------------------------------------------|
| `openai-chat`      | one `{"role": "tool", "tool_call_id", "content"}` per call       |
| `openai-responses` | one `{"type": "function_call_output", "call_id", "output"}` per call |
| `anthropic`        | ONE `{"role": "user", "content": [{"type": "tool_result", …}]}`  |
| `gemini`           | ONE `{"role": "user", "parts": [{"functionResponse": …}]}`       |

A success replies with the result (text as it is, anything else as JSON text; Gemini gets the
value itself as `{"output": result}`). A failure replies with the envelope's code and redacted
message, and what the model can do about it: `INVALID_PARAMS: … ; fix the arguments and call
again`, flagged as each provider expects: `is_error: true` (Anthropic), `{"error": text}`
(Gemini), text starting `Error:` (OpenAI, which has no flag). Names in the text are the ones
the model knows (`math_add`, not `math.add`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.envelope import Envelope
from toolcaller.errors import (
    ErrorCode,
    ExecutionError,
    InvalidParamsError,
    ParseError,
    RetryExhaustedError,
    ToolCallError,
    ToolNotFoundError,
    ToolTimeoutError,
)
from toolcaller.llm.calls import Provider, ToolCall

__all__ = ["ADVICE", "ToolReplies", "error_text", "reply_messages"]

ADVICE: dict[ErrorCode, str] = {
    ErrorCode.TOOL_NOT_FOUND: "call one of the tools you were given",
    ErrorCode.INVALID_PARAMS: "fix the arguments and call again",
    ErrorCode.TIMEOUT: "the tool did not answer in time; call it again only if it is worth "
                       "the wait",
    ErrorCode.RETRY_EXHAUSTED: "the tool failed on every attempt; do not assume it did anything",
    ErrorCode.EXECUTION_ERROR: "the tool failed; do not assume it did anything",
    ErrorCode.PARSE_ERROR: "the tool's answer could not be read; do not assume it did anything",
}
"""What a model can do about each error code, appended to the error's text."""

_EXCEPTIONS: dict[ErrorCode, type[ToolCallError]] = {
    ErrorCode.TIMEOUT: ToolTimeoutError, ErrorCode.RETRY_EXHAUSTED: RetryExhaustedError,
    ErrorCode.TOOL_NOT_FOUND: ToolNotFoundError, ErrorCode.INVALID_PARAMS: InvalidParamsError,
    ErrorCode.EXECUTION_ERROR: ExecutionError, ErrorCode.PARSE_ERROR: ParseError,
}


@dataclass(frozen=True, slots=True)
class ToolReplies:
    """What `run_tool_calls` returns: the replies to send back, and one envelope per call."""

    provider: Provider
    """The provider whose shape the response had (and the messages have)."""
    calls: list[ToolCall]
    """The response's tool calls, in the order the model wrote them."""
    envelopes: list[Envelope]
    """One envelope per call, in call order (each also in the caller's history)."""
    messages: list[JSONObject]
    """Append these to the conversation: the provider's own reply messages."""

    @property
    def ok(self) -> bool:
        """Say whether every call succeeded."""
        return all(envelope.success for envelope in self.envelopes)

    def raise_for_error(self) -> None:
        """Raise the first failed call's error (its code's exception), if any call failed.

        The exception carries `.replies` (these replies: the model still needs them) and
        `.envelope` (the failed call's).
        """
        for call, envelope in zip(self.calls, self.envelopes, strict=True):
            info = envelope.error
            if info is not None:
                error = _EXCEPTIONS[info.code](
                    f"tool call {call.id!r} of {call.name!r} failed: {info.code.value}: "
                    f"{info.message}", details=info.details)
                error.replies = self  # type: ignore[attr-defined]
                error.envelope = envelope  # type: ignore[attr-defined]
                raise error


def error_text(envelope: Envelope, names: Mapping[str, str] | None = None) -> str:
    """The text a model reads for a failed call: code, redacted message, what to do."""
    info = envelope.error
    if info is None:
        raise ValueError("error_text needs a failure envelope")
    message = info.message
    for tool_name, model_name in (names or {}).items():
        if tool_name != model_name:  # the model knows the exported names
            message = message.replace(repr(tool_name), repr(model_name))
    message, advice = message.rstrip(". "), ADVICE[info.code]
    if message.endswith(("?", "!")):  # "did you mean 'math_add'?" ends a sentence
        return f"{info.code.value}: {message} {advice[0].upper()}{advice[1:]}"
    return f"{info.code.value}: {message}; {advice}"


def reply_messages(provider: Provider, calls: list[ToolCall], envelopes: list[Envelope],
                   names: Sequence[Mapping[str, str]]) -> list[JSONObject]:
    """Build the provider's reply messages: exactly one reply per call, in call order."""
    texts = [_text(e) if e.success else error_text(e, n)
             for e, n in zip(envelopes, names, strict=True)]
    pairs = list(zip(calls, envelopes, texts, strict=True))
    if provider == "openai-chat":
        return [{"role": "tool", "tool_call_id": c.id or "",
                 "content": text if e.success else f"Error: {text}"} for c, e, text in pairs]
    if provider == "openai-responses":
        return [{"type": "custom_tool_call_output" if c.custom else "function_call_output",
                 "call_id": c.id or "", "output": text if e.success else f"Error: {text}"}
                for c, e, text in pairs]
    if not pairs:
        return []  # an empty user message would be refused
    if provider == "anthropic":
        return [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": c.id or "", "content": text,
             "is_error": not e.success} for c, e, text in pairs]}]
    parts = []
    for c, e, text in pairs:
        answer: JSONObject = {"name": c.name, "response": {"output": _value(e.result)}
                              if e.success else {"error": text}}
        parts.append({"functionResponse": {"id": c.id, **answer} if c.id else answer})
    return [{"role": "user", "parts": parts}]


def _text(envelope: Envelope) -> str:
    result = envelope.result
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # raw output: bytes and the like, as the envelope dumps it
        return json.dumps(envelope.to_dict()["result"], ensure_ascii=False)


def _value(result: Any) -> Any:
    try:
        json.dumps(result, allow_nan=False)
    except (TypeError, ValueError):
        from pydantic_core import to_jsonable_python

        return to_jsonable_python(result, bytes_mode="base64", inf_nan_mode="null")
    return result
