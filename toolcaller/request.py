"""The JSON request of the contract: read one, or say exactly what is wrong with it (rule 1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from toolcaller.errors import InvalidParamsError

__all__ = ["REQUEST_KEYS", "Request", "describe_kind", "parse_request", "with_request_id"]

REQUEST_KEYS = ("toolName", "params", "options", "action", "id")


@dataclass(frozen=True, slots=True)
class Request:
    """A request that reads well: a call (name, params, options) or a discovery (filter)."""

    action: Literal["call", "discover"]
    tool_name: Any = None
    params: Any = None
    options: Any = None
    filter: str | None = None


def parse_request(request: Any) -> Request:
    """Read a request object; `InvalidParamsError` says what is wrong with it."""
    if not isinstance(request, dict):
        raise InvalidParamsError(f"a request must be a JSON object, got {describe_kind(request)}")
    request_id = request.get("id")
    if request_id is not None and not isinstance(request_id, str | int | float):
        raise InvalidParamsError(f"id must be a string or a number, got "
                                 f"{describe_kind(request_id)}")
    unknown = [k for k in request if k not in REQUEST_KEYS]
    if unknown:
        raise InvalidParamsError(f"unknown request key {unknown[0]!r}; a request has "
                                 "toolName, params, options (or action: 'discover')")
    action = request.get("action")
    if action == "discover":
        options = request.get("options")
        options = {} if options is None else options
        if not isinstance(options, dict) or set(options) - {"filter"}:
            raise InvalidParamsError("discover options take only 'filter' (a string)")
        flt = options.get("filter")
        if flt is not None and not isinstance(flt, str):
            raise InvalidParamsError(f"options.filter must be a string, got {describe_kind(flt)}")
        return Request("discover", filter=flt)
    if action not in (None, "call", "execute"):
        raise InvalidParamsError(f"unknown action {action!r}; use 'discover', or give a toolName")
    return Request("call", request.get("toolName"), request.get("params"), request.get("options"))


def describe_kind(value: Any) -> str:
    """Name a value's JSON kind for a message (`an object`, `a string`, `null`)."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def with_request_id(answer: dict[str, Any], request: Any) -> dict[str, Any]:
    """Copy a request's `id` (a string, number or null) into its answer's `metadata.requestId`."""
    if isinstance(request, dict) and "id" in request:
        request_id = request["id"]
        if request_id is None or isinstance(request_id, str | int | float):
            answer["metadata"]["requestId"] = request_id
    return answer
