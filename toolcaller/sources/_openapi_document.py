"""Reading an OpenAPI document: a dict, JSON or YAML text, a file, or an `http(s)://` URL.

YAML is read with libyaml (`yaml.CSafeLoader`, in PyYAML's wheels) when present, with a faster
resolver and constructor for big documents (`yaml_loader`, `_construct`): GitHub's 10 MB
description reads about 15 times faster than with `yaml.safe_load`. Timestamps stay strings,
so that every document is JSON data. A big YAML file (over `CACHE_MIN_BYTES`) is kept, once parsed,
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
        loader = yaml_loader()(text)
    except ImportError:
        raise UsageError(
            f"{where}: not JSON ({json_error}); install PyYAML to read YAML documents"
        ) from None
    yaml: Any = importlib.import_module("yaml")
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            return _construct(node, {}, loader)
        except (_Unusual, TypeError, RecursionError):  # SafeConstructor explains, or copes
            return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise UsageError(f"{where}: neither JSON nor YAML: {exc}") from exc
    finally:
        loader.dispose()


_LOADER: Any = None
_STR, _SEQ, _MAP = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:seq",
                    "tag:yaml.org,2002:map")


def yaml_loader() -> Any:
    """Return PyYAML's safe loader, libyaml's when built in, made faster for big documents.

    Same results as `yaml.safe_load` but for timestamps, which stay strings (OpenAPI is JSON
    data: `2024-01-01` in an example is a string). Faster: a plain scalar whose first character
    no implicit type can start with is a string at once (the stock resolver looks it up in
    Python for each of a document's million scalars), and path resolvers, which safe loading
    never has, are not consulted per node.
    """
    global _LOADER
    if _LOADER is None:
        yaml: Any = importlib.import_module("yaml")
        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        implicit = base.yaml_implicit_resolvers
        starts = frozenset(k for k in implicit if k)
        scalar, sequence = yaml.ScalarNode, yaml.SequenceNode

        def resolve(self: Any, kind: Any, value: str, flags: tuple[bool, bool]) -> str:
            if kind is scalar:
                if flags[0]:
                    first = value[:1]
                    if first and first not in starts:
                        return _STR
                    for tag, pattern in implicit.get(first, ()):
                        if pattern.match(value):
                            return str(tag)
                return _STR
            return _SEQ if kind is sequence else _MAP

        loader: Any = type("OpenApiLoader", (base,), {
            "resolve": resolve, "descend_resolver": _no_path, "ascend_resolver": _no_path})
        loader.add_constructor("tag:yaml.org,2002:timestamp", base.construct_yaml_str)
        _LOADER = loader
    return _LOADER


def _no_path(*_: Any) -> None:
    """Path resolvers: safe loading has none."""


class _Unusual(Exception):
    """A node `_construct` leaves to PyYAML's constructor (merge keys, sets, ordered maps)."""


def _construct(node: Any, memo: dict[int, Any], loader: Any) -> Any:
    """Build the Python value of a node: what `construct_document` gives, five times faster.

    Strings, lists and dicts are built directly (shared anchors stay shared); other scalars
    go through the loader's own constructors; anything else raises `_Unusual`.
    """
    tag = node.tag
    if tag == _STR:
        return node.value
    done = memo.get(id(node))
    if done is not None:
        return done
    if tag == _MAP:
        mapping: dict[Any, Any] = {}
        memo[id(node)] = mapping
        for key, value in node.value:
            if key.tag not in (_STR, "tag:yaml.org,2002:int", "tag:yaml.org,2002:bool",
                               "tag:yaml.org,2002:null", "tag:yaml.org,2002:float"):
                raise _Unusual(key.tag)  # merge keys (<<), complex keys
            mapping[_construct(key, memo, loader)] = _construct(value, memo, loader)
        return mapping
    if tag == _SEQ:
        items: list[Any] = []
        memo[id(node)] = items
        items.extend(_construct(item, memo, loader) for item in node.value)
        return items
    if node.id != "scalar":
        raise _Unusual(tag)
    return loader.construct_object(node, deep=True)


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
