"""Reading JSON Schemas for forms: `$ref` lookup, `allOf` merging, JSON pointers, validation."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from toolcaller.widgets._field import FieldContext, JSONValue

MAX_REF_HOPS = 32
ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean", "null"})
_LOWER_BOUNDS = frozenset(
    {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
)
_UPPER_BOUNDS = frozenset(
    {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)


def escape_token(token: str) -> str:
    """Escape one JSON pointer token (RFC 6901: `~` is `~0`, `/` is `~1`)."""
    return token.replace("~", "~0").replace("/", "~1")


def to_pointer(path: Iterable[str | int]) -> str:
    """Return the JSON pointer of a path of keys and indexes."""
    return "".join("/" + escape_token(str(part)) for part in path)


def split_pointer(pointer: str) -> list[str]:
    """Return the unescaped tokens of a JSON pointer (a missing leading `/` is forgiven)."""
    if not pointer:
        return []
    body = pointer[1:] if pointer.startswith("/") else pointer
    return [token.replace("~1", "/").replace("~0", "~") for token in body.split("/")]


def root_tools(schema: Any) -> tuple[Any, Any]:
    """Return `(resolver, specification)` for a root schema's dialect (`referencing` only).

    Not jsonschema: importing it loads its format checkers, which took 3.4 s here with
    rfc3987-syntax installed (as JupyterLab installs it) — the first tool picked waited for it.
    """
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012, specification_with

    dialect = schema.get("$schema") if isinstance(schema, dict) else None
    try:
        spec = (
            specification_with(dialect, default=DRAFT202012)
            if isinstance(dialect, str)
            else DRAFT202012
        )
        resolver = Registry().resolver_with_root(spec.create_resource(schema))
    except Exception:  # noqa: BLE001 - a malformed root still gets a form (raw JSON)
        spec = DRAFT202012
        resolver = Registry().resolver_with_root(spec.create_resource({}))
    return resolver, spec


def resolve(schema: Any, ctx: FieldContext) -> tuple[Any, FieldContext] | None:
    """Follow `$ref` (merging its siblings) and `$id`; return None for a loop or a dead end."""
    seen: set[int] = set()
    for _ in range(MAX_REF_HOPS):
        if not isinstance(schema, dict):
            return schema, ctx
        if "$id" in schema and isinstance(schema["$id"], str):
            resource = ctx.spec.create_resource(schema)
            ctx = replace(ctx, resolver=ctx.resolver.in_subresource(resource))
        ref = schema.get("$ref", schema.get("$dynamicRef"))
        if ref is None:
            return schema, ctx
        if not isinstance(ref, str):
            return None
        resolved = ctx.resolver.lookup(ref)
        key = id(resolved.contents)
        if key in seen or key in ctx.refs:
            return None
        seen.add(key)
        ctx = replace(ctx, resolver=resolved.resolver, refs=(*ctx.refs, key))
        schema = _with_siblings(resolved.contents, schema)
    return None


def _with_siblings(target: Any, referrer: dict[str, Any]) -> Any:
    siblings = {k: v for k, v in referrer.items() if k not in ("$ref", "$dynamicRef", "$id")}
    if not siblings or not isinstance(target, dict):
        return target
    merged = merge_schemas([target, siblings])
    if merged is not None:
        return merged
    return {**target, **{k: v for k, v in siblings.items() if k in ANNOTATIONS}}


def merge_all_of(schema: dict[str, Any], ctx: FieldContext) -> dict[str, Any] | None:
    """Fold `allOf` into one schema when its parts do not conflict; None when they do."""
    parts: list[Any] = [{k: v for k, v in schema.items() if k != "allOf"}]
    items = schema["allOf"]
    if not isinstance(items, list):
        return None
    for item in items:
        found = resolve(item, ctx)
        if found is None:
            return None
        part = found[0]
        if isinstance(part, dict) and "allOf" in part:
            part = merge_all_of(part, found[1])
        if part is False or part is None:
            return None
        if isinstance(part, dict):
            parts.append(part)
    return merge_schemas(parts)


def merge_schemas(parts: list[Any]) -> dict[str, Any] | None:
    """Merge schemas that all must hold, keyword by keyword; None on a conflict."""
    merged: dict[str, Any] = {}
    for part in parts:
        if part is True:
            continue
        if not isinstance(part, dict):
            return None
        for key, value in part.items():
            if key not in merged:
                merged[key] = value
                continue
            combined = _merge_keyword(key, merged[key], value)
            if combined is _CONFLICT:
                return None
            merged[key] = combined
    return merged


_CONFLICT = object()


def _merge_keyword(key: str, old: Any, new: Any) -> Any:
    if old == new or key in ANNOTATIONS:
        return old
    if key == "required" and isinstance(old, list) and isinstance(new, list):
        return old + [name for name in new if name not in old]
    if key == "properties" and isinstance(old, dict) and isinstance(new, dict):
        both = {**old, **new}
        return {
            k: ({"allOf": [old[k], new[k]]} if k in old and k in new else v)
            for k, v in both.items()
        }
    if key == "type":
        kinds = _types(old) & _types(new)
        return (sorted(kinds)[0] if len(kinds) == 1 else sorted(kinds)) if kinds else _CONFLICT
    numbers = isinstance(old, int | float) and isinstance(new, int | float)
    if numbers and key in _LOWER_BOUNDS:
        return max(old, new)
    if numbers and key in _UPPER_BOUNDS:
        return min(old, new)
    return _CONFLICT


def _types(value: Any) -> set[str]:
    kinds = {value} if isinstance(value, str) else set(value)
    if "number" in kinds:
        kinds.add("integer")
    return kinds


def is_null_schema(schema: Any) -> bool:
    """Return whether a schema admits only `null`."""
    if not isinstance(schema, dict):
        return False
    return (
        schema.get("type") == "null"
        or schema.get("const", ...) is None
        or schema.get("enum") == [None]
    )


def non_null_part(schema: dict[str, Any]) -> dict[str, Any] | None:
    """Return the schema without its `null` option when it is nullable, else None."""
    if "enum" in schema or "const" in schema:
        return None
    kinds = schema.get("type")
    if isinstance(kinds, list) and "null" in kinds and len(kinds) > 1:
        rest = [kind for kind in kinds if kind != "null"]
        return {**schema, "type": rest[0] if len(rest) == 1 else rest}
    for key in ("anyOf", "oneOf"):
        variants = schema.get(key)
        if not isinstance(variants, list) or len(variants) < 2:
            continue
        rest = [v for v in variants if not is_null_schema(v)]
        if len(rest) != len(variants) - 1:
            continue
        base = {k: v for k, v in schema.items() if k != key}
        if len(rest) > 1:
            return {**base, key: rest}
        merged = merge_schemas([{k: v for k, v in base.items() if k not in ANNOTATIONS}, rest[0]])
        if isinstance(rest[0], dict) and merged is not None:
            return {**merged, **{k: v for k, v in base.items() if k in ANNOTATIONS}}
        return {**base, key: rest}
    return None


def type_union(schema: dict[str, Any]) -> dict[str, Any] | None:
    """Turn `type: [a, b]` into `anyOf` one variant per type; None when there is no list."""
    kinds = schema.get("type")
    if not isinstance(kinds, list):
        return None
    if len(kinds) == 1:
        return {**schema, "type": kinds[0]}
    rest = {k: v for k, v in schema.items() if k not in ANNOTATIONS and k != "type"}
    notes = {k: v for k, v in schema.items() if k in ANNOTATIONS}
    return {**notes, "anyOf": [{**rest, "type": kind} for kind in kinds]}


def is_simple(schema: Any, ctx: FieldContext) -> bool:
    """Return whether a schema makes a one-widget field (cheap to build, cannot recurse)."""
    try:
        found = resolve(schema, ctx)
    except Exception:  # noqa: BLE001 - an unreadable schema is simply not simple
        return False
    if found is None or not isinstance(found[0], dict):
        return False
    target = found[0]
    if any(key in target for key in ("anyOf", "oneOf", "allOf")):
        return False
    if "enum" in target or "const" in target:
        return True
    kinds = target.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return isinstance(kinds, list) and bool(kinds) and set(kinds) <= SCALAR_TYPES


_ROOT_KEYS = ("$schema", "$id", "$defs", "definitions")


def is_valid(schema: Any, value: JSONValue, ctx: FieldContext) -> bool:
    """Return whether `value` is valid against a sub-schema, its `$ref`s read from the root.

    The engine's validator checks it, the sub-schema placed in a schema that carries the root's
    dialect and definitions.
    """
    from toolcaller.core.validation import ParamsValidator

    root = ctx.root if isinstance(ctx.root, dict) else {}
    wrapper = {key: root[key] for key in _ROOT_KEYS if key in root}
    validator = ParamsValidator({**wrapper, "allOf": [schema]} if wrapper else schema)
    if validator.problem is not None:  # a schema that cannot be checked validates nothing
        return False
    return validator.is_valid(value)


def json_type(value: JSONValue) -> str:
    """Return the JSON Schema type name of a Python value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list | tuple) else "object"
