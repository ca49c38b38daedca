"""Turns what a tool produced into the envelope's result (SPEC rule 7): strict JSON only."""

from __future__ import annotations

import base64
import contextlib
import json
import math
import numbers
from dataclasses import dataclass
from typing import Any, Literal

from toolcaller.core.pointer import to_pointer
from toolcaller.errors import ParseError

__all__ = ["PREVIEW_CHARS", "TextOutput", "to_json_result", "to_result"]

PREVIEW_CHARS = 200
MAX_DEPTH = 500
_SCALARS = (str, int, bool, type(None))


@dataclass(slots=True)
class TextOutput:
    """Output that is text on the wire (stdout, an HTTP body, MCP text content).

    With `format: json` the engine parses it as JSON (PARSE_ERROR if it does not parse);
    with `format: raw` it is returned untouched (`bytes` travel base64-encoded in JSON).
    """

    data: str | bytes
    media_type: str | None = None


def to_result(output: object, fmt: Literal["json", "raw"]) -> Any:
    """Return the result for an attempt's output in the requested format."""
    if isinstance(output, TextOutput):
        return _parse_text(output) if fmt == "json" else output.data
    if fmt == "raw":
        _check_raw(output)
        return output
    return to_json_result(output)


def _check_raw(value: object) -> None:
    """Raw output is returned untouched, but the envelope must still dump to JSON."""
    if type(value) in _SCALARS or isinstance(value, bytes):
        return
    from pydantic_core import PydanticSerializationError, to_json

    try:
        to_json(value, bytes_mode="base64", inf_nan_mode="null")
    except (PydanticSerializationError, ValueError, TypeError, RecursionError) as exc:
        raise ParseError(
            f"the tool's raw output (a {type(value).__qualname__}) cannot be put in a JSON "
            "envelope", details={"type": type(value).__qualname__},
        ) from exc


def to_json_result(value: object) -> Any:
    """Convert a Python value to strict JSON data; `ParseError` if that cannot be done."""
    if type(value) in _SCALARS:
        return value
    try:
        return _convert(value, 0)
    except _BadValue as bad:
        pointer = to_pointer(reversed(bad.path))
        shown = pointer if len(pointer) <= 80 else pointer[:80] + "…"
        raise ParseError(
            f"the tool's result holds {bad.what} at {shown or '/'!r}, which is not valid JSON",
            details={"pointer": pointer[:1000]},
        ) from bad.__cause__
    except RecursionError:
        raise ParseError(
            "the tool's result is nested too deeply (or refers to itself) to become JSON",
        ) from None


class _BadValue(Exception):
    """A value that cannot become JSON; `path` grows (innermost first) as it unwinds."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        self.path: list[Any] = []


def _convert(value: Any, depth: int) -> Any:
    # Paths are only built when something fails: the happy path stays a plain walk.
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        raise _BadValue(repr(value))
    if depth > MAX_DEPTH:
        raise _BadValue("a structure nested too deeply (or referring to itself)")
    if kind is dict:
        out = {}
        for k, v in value.items():
            try:
                out[_key(k)] = _convert(v, depth + 1)
            except _BadValue as bad:
                bad.path.append(k)
                raise
        return out
    if kind is list or kind is tuple:
        items = []
        for i, v in enumerate(value):
            try:
                items.append(_convert(v, depth + 1))
            except _BadValue as bad:
                bad.path.append(i)
                raise
        return items
    return _convert(_jsonable(value), depth + 1)


def _jsonable(value: Any) -> Any:
    """Convert one non-JSON value (model, dataclass, datetime, set, bytes…) one level down."""
    if isinstance(value, numbers.Integral):  # numpy's and others' ints
        return int(value)
    if isinstance(value, numbers.Real):  # an mpmath.mpf, a Fraction, a numpy float: a float
        return float(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, set | frozenset):
        items = list(value)
        with contextlib.suppress(TypeError):  # mixed types keep their iteration order
            items.sort()
        return items
    from pydantic_core import PydanticSerializationError, to_jsonable_python

    try:
        converted = to_jsonable_python(value, inf_nan_mode="constants", bytes_mode="base64")
    except (PydanticSerializationError, ValueError, TypeError) as exc:
        raise _BadValue(f"a {type(value).__qualname__}") from exc
    if type(converted) is type(value):  # no progress: would loop forever
        raise _BadValue(f"a {type(value).__qualname__}")
    return converted


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, int | float):
        return str(key)
    raise _BadValue(f"a {type(key).__qualname__} key (JSON keys are strings)")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_text(output: TextOutput) -> Any:
    data = output.data
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise ParseError(
            f"the tool's output is not valid JSON: {_reason(exc)}",
            details={"start": _preview(data), "mediaType": output.media_type},
        ) from exc


def _reason(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "it is not UTF-8 text"
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    return str(exc).split(":")[0] if isinstance(exc, json.JSONDecodeError) else str(exc)


def _preview(data: str | bytes) -> str:
    if isinstance(data, bytes):
        return data[:PREVIEW_CHARS].decode("utf-8", errors="replace")
    return data[:PREVIEW_CHARS]
