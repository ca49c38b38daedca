"""Turns what a tool produced into the envelope's result (SPEC rule 7): strict JSON only.

The text rules, for output that is text on the wire (`TextOutput`):

- output that **promises JSON** (`promises_json=True`: a script's stdout, an HTTP body whose
  media type is JSON, an MCP tool's text when it declares an output schema, a tool whose
  entry says `"output": "json"`) is parsed; when it does not parse the attempt is PARSE_ERROR.
  A body labelled JSON that holds one JSON text per line (JSON Lines, as httpbin's `/stream/{n}`
  sends, or an `application/x-ndjson` body) is the list of those values;
- output that is **text by nature** (`promises_json=False`: an HTTP `text/*` body, an MCP text
  block of a tool without an output schema, an entry that says `"output": "text"`) is a JSON
  string, and a success;
- output nothing is known about (`promises_json=None`: an HTTP body without a media type) is
  its JSON value when it parses as JSON, else a string;
- **binary** output (bytes that promise no JSON: an `image/png` body, or an unlabelled
  body that is not UTF-8) is PARSE_ERROR under `format: json`, whose message says to use `raw`.

With `format: raw` output is returned untouched; bytes become `{"mediaType": "image/png",
"base64": "<standard base64>"}` (`RAW_BYTES_KEYS`), the one shape bytes take in an envelope.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from toolcaller.core.pointer import to_pointer
from toolcaller.errors import ParseError

if TYPE_CHECKING:
    from toolcaller.core.context import CallContext

__all__ = ["PREVIEW_CHARS", "RAW_BYTES_KEYS", "TextOutput", "raw_bytes", "result_of",
           "to_json_result", "to_result"]

PREVIEW_CHARS = 200
MAX_DEPTH = 500
RAW_BYTES_KEYS = ("mediaType", "base64")
"""The keys of bytes under `format: raw`: the media type and the bytes in standard base64."""
DEFAULT_BYTES_TYPE = "application/octet-stream"
_SCALARS = (str, int, bool, type(None))
_JSON_LINES_TYPES = frozenset({"application/x-ndjson", "application/ndjson", "application/jsonl",
                               "application/x-jsonlines", "application/jsonlines"})

Declared = Literal["json", "text"] | None
"""What a tool's entry says its output is (`"output"`): overrides what its adapter said."""


@dataclass(slots=True)
class TextOutput:
    """Output that is text (or bytes) on the wire: stdout, an HTTP body, MCP text content.

    `promises_json` says how `format: json` reads it (see the module docstring): `True`, it
    promises JSON (parsed; PARSE_ERROR if it does not parse), `False`, text by nature (a
    string; bytes that are not UTF-8 are binary), `None`, unknown (JSON if it parses, else a
    string). Adapters set it; the default, `True`, is what a script's stdout promises.
    """

    data: str | bytes
    media_type: str | None = None
    promises_json: bool | None = True


def raw_bytes(data: bytes, media_type: str | None = None) -> dict[str, str]:
    """Return bytes in their documented raw shape: `{"mediaType", "base64"}` (standard)."""
    return {"mediaType": media_type or DEFAULT_BYTES_TYPE,
            "base64": base64.b64encode(data).decode("ascii")}


def to_result(output: object, fmt: Literal["json", "raw"], declared: Declared = None) -> Any:
    """Return the result for an attempt's output in the requested format.

    `declared` is what the tool's entry says its output is (`"json"` or `"text"`): it wins
    over what the adapter said of a `TextOutput`, and `"json"` makes a plain string JSON text.
    """
    if declared is not None and isinstance(output, str | TextOutput):
        data = output.data if isinstance(output, TextOutput) else output
        media = output.media_type if isinstance(output, TextOutput) else None
        output = TextOutput(data, media, promises_json=declared == "json")
    if isinstance(output, TextOutput):
        return _read_text(output) if fmt == "json" else _raw_text(output)
    if fmt == "raw":
        if isinstance(output, bytes | bytearray):
            return raw_bytes(bytes(output))
        _check_raw(output)
        return output
    return to_json_result(output)


def result_of(output: object, call: CallContext) -> Any:
    """Return a call's result: `to_result` by its format and its tool's `output`, masked if asked.

    Results are not redacted by default (a tool that echoes a password returns it); a tool
    whose entry says `"redactResult": true` has the call's secrets masked in its result too.
    """
    tool = call.tool
    result = to_result(output, call.options.format, tool.output)
    if not tool.redact_result:
        return result
    from toolcaller.core.redact import redact_value

    return redact_value(result, call.secrets)


def _raw_text(output: TextOutput) -> Any:
    data = output.data
    return data if isinstance(data, str) else raw_bytes(data, output.media_type)


def _check_raw(value: object) -> None:
    """Raw output is returned untouched, but the envelope must still dump to JSON."""
    if type(value) in _SCALARS:
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


def _read_text(output: TextOutput) -> Any:
    """Apply the text rules (module docstring) to text output under `format: json`."""
    data, promise = output.data, output.promises_json
    if promise is True:
        return _parse_text(output)
    if isinstance(data, bytes):  # bytes that promise no JSON: binary unless unlabelled text
        if promise is False:
            raise _binary(output)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise _binary(output) from None
    else:
        text = data
    if promise is None:
        with contextlib.suppress(ValueError, RecursionError):
            return json.loads(text, parse_constant=_reject_constant)
    return text


def _binary(output: TextOutput) -> ParseError:
    size = len(output.data)
    media = output.media_type or DEFAULT_BYTES_TYPE
    return ParseError(
        f"the tool's output is binary ({media}, {size:,} bytes), which format 'json' cannot "
        "hold: call it with format 'raw' to get it as base64",
        details={"mediaType": media, "bytes": size},
    )


def _parse_text(output: TextOutput) -> Any:
    data = output.data
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        if _media(output) in _JSON_LINES_TYPES:
            return _json_lines(text)
        try:
            return json.loads(text, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data" or not _labelled_json(output):
                raise
            return _json_lines(text, exc)
    except (ValueError, RecursionError) as exc:
        raise ParseError(
            f"the tool's output is not valid JSON: {_reason(exc)}",
            details={"start": _preview(data), "mediaType": output.media_type},
        ) from exc


def _media(output: TextOutput) -> str:
    return (output.media_type or "").split(";")[0].strip().lower()


def _labelled_json(output: TextOutput) -> bool:
    media = _media(output)
    return media == "application/json" or media.endswith("+json")


def _json_lines(text: str, first_error: Exception | None = None) -> list[Any]:
    """Read JSON Lines: one JSON text per non-blank line (the first error if one is not)."""
    values = []
    for line in text.splitlines():
        if line.strip():
            try:
                values.append(json.loads(line, parse_constant=_reject_constant))
            except ValueError:
                if first_error is not None:
                    raise first_error from None
                raise
    return values


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
