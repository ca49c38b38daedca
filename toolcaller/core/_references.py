"""Say which `$ref` of a schema cannot be followed, and where it is, with `referencing`.

jsonschema-rs refuses such a schema with the resolved target only ("Pointer '/$defs/x' does not
exist"); this walks the schema the way jsonschema does (its subschemas, `$id` scopes, anchors)
to name the reference as written and its location. It runs only when a schema was refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from toolcaller.core.pointer import to_pointer

__all__ = ["meta_schemas", "unresolvable_reference"]

MAX_WALK_DEPTH = 200
"""Deeper subschemas are not walked (the schema is then refused for its nesting anyway)."""


@lru_cache(maxsize=1)
def meta_schemas() -> list[tuple[str, Any]]:
    """Return the standard meta-schemas (drafts 3 to 2020-12) as `(uri, contents)` pairs."""
    from jsonschema_specifications import REGISTRY

    return [(uri, REGISTRY.contents(uri)) for uri in sorted(REGISTRY)]


def unresolvable_reference(schema: Any) -> str | None:
    """Return why the first unresolvable reference fails, or None if every one resolves.

    The answer reads `$ref '…' <why> (at /pointer)`; nothing is fetched.
    """
    from jsonschema_specifications import REGISTRY
    from referencing.jsonschema import DRAFT202012

    if not isinstance(schema, dict):
        return None
    try:
        spec = DRAFT202012.detect(schema)
        # The root (its subresources are crawled on demand) and the meta-schemas; no retrieval.
        resolver = REGISTRY.resolver_with_root(spec.create_resource(schema))
        for keyword, ref, where in _references(schema, spec, resolver, (), 0):
            why = _follow(keyword, ref, where)
            if why is not None:
                return why
    except Exception:  # noqa: BLE001 - a schema referencing cannot read: no better explanation
        return None
    return None


def _references(contents: Any, spec: Any, resolver: Any, path: tuple[str | int, ...],
                depth: int) -> Iterator[tuple[str, Any, tuple[Any, ...]]]:
    """Yield `(keyword, reference, (resolver, path))` for every reference in a schema."""
    if not isinstance(contents, dict) or depth > MAX_WALK_DEPTH:
        return
    spec = spec.detect(contents)  # a nested `$schema` switches the draft below it
    resolver = resolver.in_subresource(spec.create_resource(contents))
    for keyword in ("$ref", "$dynamicRef"):
        ref = contents.get(keyword)
        if isinstance(ref, str):
            yield keyword, ref, (resolver, path)
    for where, child in _children(contents, spec):
        yield from _references(child, spec, resolver, (*path, *where), depth + 1)


def _children(contents: dict[str, Any], spec: Any) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Yield each subschema of a schema object with its path below it."""
    subschemas = {id(sub) for sub in spec.subresources_of(contents) if isinstance(sub, dict)}
    for key, value in contents.items():
        if id(value) in subschemas:
            yield (key,), value
        elif isinstance(value, list):
            yield from (((key, i), v) for i, v in enumerate(value) if id(v) in subschemas)
        elif isinstance(value, dict):
            yield from (((key, k), v) for k, v in value.items() if id(v) in subschemas)


def _follow(keyword: str, ref: str, where: tuple[Any, tuple[Any, ...]]) -> str | None:
    from referencing.exceptions import (
        NoSuchAnchor,
        NoSuchResource,
        PointerToNowhere,
        Unresolvable,
        Unretrievable,
    )

    resolver, path = where
    try:
        resolver.lookup(ref)
    except PointerToNowhere:
        why = "points to nothing in the schema"
    except NoSuchAnchor:
        why = "names an anchor the schema does not define"
    except (NoSuchResource, Unretrievable, Unresolvable):
        # lookup() turns a missing resource into a bare Unresolvable: the URI is elsewhere.
        why = "is not part of the schema, and remote references are not fetched"
    else:
        return None
    return f"{keyword} {ref!r} {why} (at {to_pointer(path) or '/'})"
