"""Results that are media, not data: MCP content blocks and raw bytes, drawn as a person reads them.

An MCP tool's result under `format: raw` (or one that answered images or resources) is its list
of content blocks; raw bytes are `{"mediaType", "base64"}` (`toolcaller.core.results`). Both are
shown as what they are — text as text, an image as the image, audio as a player — instead of
pages of base64 in a JSON dump. Every text is HTML-escaped; only data URLs of image and audio
media types are put in `src` attributes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["content_html", "is_bytes", "is_content_blocks"]

BLOCK_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})
MAX_INLINE_BASE64 = 2_000_000  # a bigger image or clip is described, not drawn
# A media type as it may go into a data URL: no quotes, spaces or parameters.
Pre = Callable[[str], str]  # draws a block of text, as the view does
_MEDIA_TYPE = re.compile(r"^(image|audio)/[A-Za-z0-9.+-]+$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


def is_content_blocks(value: Any) -> bool:
    """Say whether a result is a list of MCP content blocks (each a dict with a known `type`)."""
    return (isinstance(value, list) and bool(value)
            and all(isinstance(b, Mapping) and b.get("type") in BLOCK_TYPES for b in value))


def is_bytes(value: Any) -> bool:
    """Say whether a result is raw bytes in their documented shape `{"mediaType", "base64"}`."""
    return (isinstance(value, Mapping) and set(value) == {"mediaType", "base64"}
            and isinstance(value["base64"], str))


def content_html(value: Any, pre: Pre) -> str:
    """Draw content blocks or raw bytes; `pre(text)` draws a block of text as the view does."""
    if is_bytes(value):
        return _heading("result", "bytes") + _media(value["mediaType"], value["base64"], pre)
    blocks = [_block(b, pre) for b in value]
    count = f"{len(blocks)} content block" + ("" if len(blocks) == 1 else "s")
    return _heading("result", count) + "".join(blocks)


def _heading(title: str, note: str) -> str:
    return (f'<div><b>{title}</b> <span class="tc-muted" style="font-size:0.9em">'
            f"{html.escape(note)}</span></div>")


def _block(block: Mapping[str, Any], pre: Pre) -> str:
    kind = block.get("type")
    label = f'<div class="tc-muted" style="font-size:0.9em">{html.escape(str(kind))}'
    if kind == "text":
        return f"{label}</div>{pre(str(block.get('text', '')))}"
    if kind in ("image", "audio"):
        media = str(block.get("mimeType", ""))
        return f"{label} · {html.escape(media)}</div>{_media(media, block.get('data'), pre)}"
    if kind == "resource_link":
        return f"{label}</div>{_resource_line(block)}"
    resource = block.get("resource")
    resource = resource if isinstance(resource, Mapping) else {}
    body = (pre(str(resource["text"])) if "text" in resource
            else _media(str(resource.get("mimeType", "")), resource.get("blob"), pre))
    return f"{label}</div>{_resource_line(resource)}{body}"


def _resource_line(item: Mapping[str, Any]) -> str:
    parts = [str(item[k]) for k in ("name", "uri", "mimeType") if item.get(k)]
    return f"<div><code>{html.escape(' · '.join(parts) or 'resource')}</code></div>"


def _media(media_type: str, data: Any, pre: Pre) -> str:
    if not isinstance(data, str):
        return pre("(no data)")
    size = len(data) * 3 // 4 - data[-2:].count("=")  # base64's padding is not data
    if (_MEDIA_TYPE.match(media_type) and len(data) <= MAX_INLINE_BASE64
            and _BASE64.match(data)):
        url = f"data:{media_type};base64,{data}"
        if media_type.startswith("image/"):
            return (f'<img src="{url}" alt="{html.escape(media_type)} result" '
                    'style="max-width:100%;max-height:24em">')
        return f'<audio controls src="{url}"></audio>'
    return pre(f"{media_type or 'bytes'}, {size:,} bytes (base64 in the envelope)")
