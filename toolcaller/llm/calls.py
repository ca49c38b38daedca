"""Reading a model's response: which provider wrote it and which tools it calls.

A response is what a provider's SDK returns or its JSON as a dict:

| provider           | the calls are in                                              |
|--------------------|---------------------------------------------------------------|
| `openai-chat`      | `choices[0].message.tool_calls[]` (or that message alone)     |
| `openai-responses` | `output[]` items of type `function_call` / `custom_tool_call` |
| `anthropic`        | `content[]` blocks of type `tool_use`                         |
| `gemini`           | `candidates[0].content.parts[].functionCall` (or that content)|

The provider is told from the shape; `provider=` forces it. Arguments that arrive as text
(OpenAI's, or unparsed text from a stream) are parsed here: text that is not a JSON object
leaves the call with a `problem`, which becomes its INVALID_PARAMS reply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from toolcaller.errors import UsageError

__all__ = ["PROVIDERS", "Provider", "ToolCall", "detect_provider", "read_tool_calls"]

Provider = Literal["openai-chat", "openai-responses", "anthropic", "gemini"]
PROVIDERS: tuple[Provider, ...] = ("openai-chat", "openai-responses", "anthropic", "gemini")
ACCEPTED = (
    "an OpenAI ChatCompletion (choices[0].message.tool_calls) or its message, an OpenAI "
    "Responses Response (output[] function_call items), an Anthropic Message (content[] "
    "tool_use blocks), a Gemini GenerateContentResponse (candidates[0].content.parts[]"
    ".functionCall) or its content — the SDK's object or its JSON as a dict"
)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of a response, as the model wrote it."""

    id: str | None
    """The model's id of the call (`tool_call_id`, `call_id`, `tool_use_id`; Gemini's may be
    absent)."""
    name: str
    """The tool name the model used (an exported name such as `math_add`)."""
    arguments: Any
    """The params: a dict, or `None` when they could not be read (`problem` says why)."""
    raw_arguments: str | None = None
    """The arguments as text, when they came as text."""
    problem: str | None = None
    """Why the arguments cannot be used (not JSON, not an object), or None."""
    custom: bool = False
    """An OpenAI custom tool call: free text in (given to the tool as `{"input": text}`)."""


def _get(obj: Any, *keys: str) -> Any:
    """A field of an SDK object (attribute) or of its JSON (key), first of `keys` present."""
    if type(obj) is dict or isinstance(obj, Mapping):  # the exact type first: ABCs are slow
        for key in keys:
            if key in obj:
                return obj[key]
        return None
    for key in keys:
        value = getattr(obj, key, None)
        if value is not None:
            return value
    return None


def _first(items: Any) -> Any:
    return items[0] if isinstance(items, list | tuple) and items else None


def detect_provider(response: Any) -> Provider:
    """Tell which provider's shape a response has (`UsageError` if none)."""
    role, content = _get(response, "role"), _get(response, "content")
    if _get(response, "choices") is not None or (role == "assistant" and (
            _get(response, "tool_calls") is not None or not isinstance(content, list | tuple))):
        return "openai-chat"
    if _get(response, "candidates") is not None or (
            _get(response, "role") == "model" and _get(response, "parts") is not None):
        return "gemini"
    if isinstance(_get(response, "output"), list | tuple):
        return "openai-responses"
    if isinstance(content, list | tuple) and (
            role == "assistant" or _get(response, "type") == "message"):
        return "anthropic"
    raise UsageError(f"cannot tell which provider wrote this {type(response).__name__}; "
                     f"expected {ACCEPTED}, or pass provider= (one of {', '.join(PROVIDERS)})")


def read_tool_calls(response: Any, provider: str | None = None) -> tuple[Provider, list[ToolCall]]:
    """Return the provider and the tool calls of a response, in the order the model wrote them."""
    if provider is None:
        provider = detect_provider(response)
    elif provider not in PROVIDERS:
        raise UsageError(f"provider must be one of {', '.join(PROVIDERS)}, got {provider!r}")
    return provider, _calls(response, provider)


def _calls(response: Any, provider: str) -> list[ToolCall]:
    if provider == "openai-chat":
        message = _get(_first(_get(response, "choices")), "message") or response
        return [_chat_call(c) for c in _get(message, "tool_calls") or ()]
    if provider == "openai-responses":
        items = [i for i in _get(response, "output") or ()
                 if _get(i, "type") in ("function_call", "custom_tool_call")]
        return [_responses_call(i) for i in items]
    if provider == "anthropic":
        blocks = [b for b in _get(response, "content") or () if _get(b, "type") == "tool_use"]
        return [_call(_get(b, "id"), _get(b, "name"), _get(b, "input")) for b in blocks]
    content = _get(_first(_get(response, "candidates")), "content") or response  # gemini
    found = [_get(p, "functionCall", "function_call") for p in _get(content, "parts") or ()]
    return [_call(_get(f, "id"), _get(f, "name"), _get(f, "args"), empty={})
            for f in found if f is not None]


def _chat_call(item: Any) -> ToolCall:
    if _get(item, "type") == "custom":
        custom = _get(item, "custom")
        return _custom(_get(item, "id"), _get(custom, "name"), _get(custom, "input"))
    function = _get(item, "function")
    return _call(_get(item, "id"), _get(function, "name"), _get(function, "arguments"))


def _responses_call(item: Any) -> ToolCall:
    if _get(item, "type") == "custom_tool_call":
        return _custom(_get(item, "call_id"), _get(item, "name"), _get(item, "input"))
    return _call(_get(item, "call_id"), _get(item, "name"), _get(item, "arguments"))


def _custom(call_id: Any, name: Any, text: Any) -> ToolCall:
    return ToolCall(_text_or_none(call_id), name if isinstance(name, str) else "",
                    {"input": text if isinstance(text, str) else ""}, custom=True)


def _call(call_id: Any, name: Any, arguments: Any, empty: Any = None) -> ToolCall:
    """A call whose arguments are a dict, or text to parse (OpenAI's, or left unparsed)."""
    ident, tool = _text_or_none(call_id), name if isinstance(name, str) else ""
    if arguments is None and empty is not None:
        arguments = empty  # a Gemini call of a function without params has no args
    if isinstance(arguments, str):
        return _parsed(ident, tool, arguments)
    if isinstance(arguments, Mapping):
        return ToolCall(ident, tool, dict(arguments))
    return ToolCall(ident, tool, None, problem=f"the arguments must be a JSON object, got "
                                               f"{_kind(arguments)}")


def _parsed(ident: str | None, tool: str, text: str) -> ToolCall:
    if not text.strip():
        return ToolCall(ident, tool, {}, raw_arguments=text)  # a call without arguments
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        reason = (f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
                  if isinstance(exc, json.JSONDecodeError) else str(exc) or type(exc).__name__)
        return ToolCall(ident, tool, None, raw_arguments=text,
                        problem=f"the arguments are not valid JSON: {reason}")
    if not isinstance(value, dict):
        return ToolCall(ident, tool, None, raw_arguments=text,
                        problem=f"the arguments must be a JSON object, got {_kind(value)}")
    return ToolCall(ident, tool, value, raw_arguments=text)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _kind(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), f"a {type(value).__name__}")
