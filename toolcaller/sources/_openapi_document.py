"""Reading an OpenAPI document: a dict, JSON or YAML text, a file, or an `http(s)://` URL.

YAML is read with libyaml (`yaml.CSafeLoader`, in PyYAML's wheels) when present: 3–5 times
faster than the pure-Python loader on GitHub's 10 MB description. Timestamps stay strings, so
that every document is JSON data. A big YAML file (over `CACHE_MIN_BYTES`) is kept, once parsed,
as JSON in the user's cache folder (`$XDG_CACHE_HOME/toolcaller/openapi`, or the folder
`TOOLCALLER_CACHE_DIR` names; `TOOLCALLER_CACHE_DIR=""` turns the cache off), keyed by the
file's SHA-256: the next import of the same file reads JSON, about 50 times faster.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.errors import UsageError

__all__ = ["CACHE_MIN_BYTES", "cache_dir", "load_openapi", "yaml_loader"]

CACHE_MIN_BYTES = 1_000_000
"""YAML files at least this big are cached as JSON once parsed."""


def load_openapi(document: Mapping[str, Any] | str | Path) -> JSONObject:
    """Return the document as a dict: given, read from a file, parsed from text, or fetched."""
    if isinstance(document, Mapping):
        return dict(document)
    if isinstance(document, str) and document.lstrip().startswith(("{", "openapi:", "swagger:")):
        return _parse(document, "<text>")
    if isinstance(document, str) and re.match(r"https?://", document):
        import httpx

        try:
            response = httpx.get(document, timeout=30.0, follow_redirects=True)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise UsageError(f"cannot fetch the OpenAPI document {document!r}: {exc}") from exc
        return _parse(response.text, document)
    path = Path(document)
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the OpenAPI document {str(path)!r}: {exc}") from exc
    if len(raw) < CACHE_MIN_BYTES or text.lstrip().startswith("{"):
        return _parse(text, str(path))
    return _cached(raw, text, str(path))


def _parse(text: str, where: str) -> JSONObject:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as json_error:
        data = _parse_yaml(text, where, json_error)
    if not isinstance(data, dict):
        raise UsageError(f"{where}: an OpenAPI document is an object, got {type(data).__name__}")
    return data


def _parse_yaml(text: str, where: str, json_error: Exception) -> Any:
    try:
        loader = yaml_loader()
    except ImportError:
        raise UsageError(
            f"{where}: not JSON ({json_error}); install PyYAML to read YAML documents"
        ) from None
    yaml: Any = importlib.import_module("yaml")
    try:
        return yaml.load(text, Loader=loader)  # a safe loader: see yaml_loader
    except yaml.YAMLError as exc:
        raise UsageError(f"{where}: neither JSON nor YAML: {exc}") from exc


_LOADER: Any = None


def yaml_loader() -> Any:
    """Return PyYAML's safe loader, libyaml's when built in, with timestamps read as strings."""
    global _LOADER
    if _LOADER is None:
        yaml: Any = importlib.import_module("yaml")
        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        loader: Any = type("OpenApiLoader", (base,), {})
        # OpenAPI is JSON data: `2024-01-01` in an example is a string, never a datetime.
        loader.add_constructor("tag:yaml.org,2002:timestamp", base.construct_yaml_str)
        _LOADER = loader
    return _LOADER


def cache_dir() -> Path | None:
    """Return the folder parsed YAML documents are cached in, or None when caching is off."""
    chosen = os.environ.get("TOOLCALLER_CACHE_DIR")
    if chosen is not None:
        return Path(chosen).expanduser() / "openapi" if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolcaller" / "openapi"


def _cached(raw: bytes, text: str, where: str) -> JSONObject:
    folder = cache_dir()
    if folder is None:
        return _parse(text, where)
    entry = folder / (hashlib.sha256(raw).hexdigest() + ".json")
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(entry.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            return data
    data = _parse(text, where)
    with contextlib.suppress(OSError):  # a cache that fails is no cache
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder, delete=False,
                                         suffix=".tmp") as handle:
            try:
                json.dump(data, handle, separators=(",", ":"))
            except (TypeError, ValueError):
                handle.close()
                os.unlink(handle.name)
                return data
        os.replace(handle.name, entry)  # whole or absent: never half a file
    return data
