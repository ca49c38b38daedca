"""How params are written on the wire: query styles, form-urlencoded and multipart bodies.

Query params follow OpenAPI's `style`/`explode` when the entry's `styles` names them:

| style          | explode | `[3, 4]`            | `{"a": 1, "b": "x"}`         |
|----------------|---------|---------------------|------------------------------|
| form (default) | true    | `id=3&id=4`         | `a=1&b=x`                    |
| form           | false   | `id=3,4`            | `id=a,1,b,x`                 |
| spaceDelimited | false   | `id=3%204`          | —                            |
| pipeDelimited  | false   | `id=3|4`            | —                            |
| deepObject     | true    | `id[0]=3&id[1]=4`   | `id[a]=1&id[b]=x` (nested)   |

A param no style names keeps the plain rule: arrays as repeated keys, objects as JSON text.

Form bodies (`application/x-www-form-urlencoded`) write each field the same way, except that a
field no style names is a `deepObject` when it is an object or an array of objects (Stripe's,
Rails' and PHP's `a[b][0][c]=…`) and repeated keys when it is an array of scalars.

Multipart bodies (`multipart/form-data`) send a part per field: scalars as text, arrays as
repeated parts, `{"base64": "…", "mediaType": "…", "filename": "…"}` as a file (the shape bytes
take in results), other objects as JSON parts.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolcaller._types import JSONObject
from toolcaller.errors import InvalidParamsError

__all__ = ["FORM", "MULTIPART", "ParamStyle", "form_body", "multipart_body", "query_pairs",
           "scalar_text"]

FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
Pair = tuple[str, str]


class ParamStyle(BaseModel):
    """How one query param or form field is written (OpenAPI's `style` and `explode`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    style: Literal["form", "spaceDelimited", "pipeDelimited", "deepObject"] = Field(
        "form", description="OpenAPI serialisation style.")
    explode: bool | None = Field(
        None, description="Separate entries per item (default: true for form and deepObject).")


_DELIMITERS = {"form": ",", "spaceDelimited": " ", "pipeDelimited": "|"}


def scalar_text(value: object) -> str:
    """Write a scalar as the URL shows it: strings as they are, booleans as true/false."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value)  # 2.5, 1e+100: as JSON writes them


def query_pairs(params: JSONObject, styles: Mapping[str, ParamStyle]) -> Iterator[Pair]:
    """Write params as query entries, each by its style (or the plain rule)."""
    for key, value in params.items():
        style = styles.get(key)
        if style is None:
            yield from _plain(key, value)
        else:
            yield from styled(key, value, style)


def _plain(key: str, value: Any) -> Iterator[Pair]:
    for item in value if isinstance(value, list) else [value]:
        if item is None:
            continue
        if isinstance(item, dict | list):
            yield key, json.dumps(item, separators=(",", ":"))
        else:
            yield key, scalar_text(item)


def styled(key: str, value: Any, style: ParamStyle) -> Iterator[Pair]:
    """Write one value by an OpenAPI style (see the module docstring)."""
    if value is None:
        return
    explode = style.explode if style.explode is not None else style.style in ("form",
                                                                              "deepObject")
    if style.style == "deepObject":
        yield from _deep(key, value)
    elif isinstance(value, dict):
        items = [(k, v) for k, v in value.items() if v is not None]
        if explode:
            yield from ((k, _text(v)) for k, v in items)
        else:
            yield key, _DELIMITERS[style.style].join(p for kv in items for p in
                                                      (kv[0], _text(kv[1])))
    elif isinstance(value, list):
        texts = [_text(v) for v in value if v is not None]
        if explode:
            yield from ((key, t) for t in texts)
        else:
            yield key, _DELIMITERS[style.style].join(texts)
    else:
        yield key, scalar_text(value)


def _deep(key: str, value: Any) -> Iterator[Pair]:
    """`a[b][0][c]=v`: nested objects and arrays in brackets (arrays by index)."""
    if value is None:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _deep(f"{key}[{k}]", v)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _deep(f"{key}[{i}]", v)
    else:
        yield key, scalar_text(value)


def _text(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return scalar_text(value)


def form_body(params: JSONObject, styles: Mapping[str, ParamStyle]) -> bytes:
    """Encode params as an `application/x-www-form-urlencoded` body."""
    pairs: list[Pair] = []
    for key, value in params.items():
        style = styles.get(key)
        if style is not None:
            pairs.extend(styled(key, value, style))
        elif isinstance(value, dict) or (
                isinstance(value, list) and any(isinstance(v, dict | list) for v in value)):
            pairs.extend(_deep(key, value))
        else:
            pairs.extend(_plain(key, value))
    return urllib.parse.urlencode(pairs).encode("ascii")


FilePart = tuple[str | None, bytes, str | None]
"""A multipart part: its file name (None for a plain field), content and media type."""


def multipart_body(params: JSONObject, tool_name: str) -> tuple[bytes, str]:
    """Encode params as a `multipart/form-data` body; return it and its Content-Type."""
    parts: list[tuple[str, FilePart]] = []
    for key, value in params.items():
        for item in value if isinstance(value, list) else [value]:
            if item is None:
                continue
            if isinstance(item, dict) and "base64" in item:
                parts.append((key, _file(key, item, tool_name)))
            elif isinstance(item, dict | list):
                content = json.dumps(item, separators=(",", ":")).encode()
                parts.append((key, (None, content, "application/json")))
            else:
                parts.append((key, (None, scalar_text(item).encode("utf-8"), None)))
    boundary = secrets.token_hex(16)
    chunks = []
    for name, (filename, content, media) in parts:
        disposition = f'form-data; name="{_quoted(name)}"'
        if filename is not None:
            disposition += f'; filename="{_quoted(filename)}"'
        head = f"--{boundary}\r\nContent-Disposition: {disposition}\r\n"
        if media is not None:
            head += f"Content-Type: {media}\r\n"
        chunks.append(head.encode("utf-8") + b"\r\n" + content + b"\r\n")
    body = b"".join(chunks) + f"--{boundary}--\r\n".encode("ascii")
    return body, f"{MULTIPART}; boundary={boundary}"


def _quoted(text: str) -> str:
    """A name in a Content-Disposition header (HTML's rule: escape quotes and line breaks)."""
    return text.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace(
        "\n", "%0A")


def _file(key: str, item: Mapping[str, Any], tool_name: str) -> FilePart:
    try:
        content = base64.b64decode(str(item["base64"]), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidParamsError(
            f"tool {tool_name!r}: param {key!r} is a file whose 'base64' is not standard base64",
            details=[{"path": f"/{key}/base64", "message": "not base64"}],
        ) from None
    filename = item.get("filename")
    media = item.get("mediaType") or "application/octet-stream"
    return (str(filename) if filename is not None else key, content, str(media))


def raw_body(value: Any, tool_name: str) -> bytes:
    """The body of a non-JSON, non-form media type: a string as UTF-8, or base64 bytes."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, dict) and "base64" in value:
        return _file("body", value, tool_name)[1]
    raise InvalidParamsError(
        f"tool {tool_name!r}: its body is neither JSON nor a form, so it must be a string or "
        "{\"base64\": …}",
        details=[{"path": "/", "message": "not a string or base64 object"}],
    )
