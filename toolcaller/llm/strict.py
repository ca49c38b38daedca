"""Strict-mode schemas for models, and the nulls a strict model sends for absent params.

OpenAI's strict mode (and Anthropic's `strict: true`) decodes arguments under a subset of JSON
Schema: every object lists its properties and says `additionalProperties: false`, every
property is required, and an optional one is written as nullable. `strict_schema` makes that
copy of a params schema, or says why the schema cannot be strict:

- a value of any type (no `type`), an object whose keys are free (no `properties`, or
  `additionalProperties`/`patternProperties` that take more), an array without `items`, a
  tuple (`prefixItems`), `allOf`, or a `$ref` outside the schema cannot be written strictly;
- `oneOf` is written `anyOf`; a `default` moves into the description (strict mode has none);
  constraints strict mode lacks (`minLength`, `maxLength`, `uniqueItems`, `not`, `if`, formats
  other than the ones it knows…) are left out. The exported schema only guides the model: the
  engine still validates each call against the tool's own schema, so a value those left-out
  constraints refuse is answered INVALID_PARAMS like any other.

A strict model sends `null` for an optional property it leaves out. `drop_absent_nulls` turns
those back into absent keys (where the tool's own schema does not take `null`), so that the
tool sees its defaults; `run_tool_calls` applies it to every call.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.core.pointer import to_pointer

__all__ = ["drop_absent_nulls", "strict_schema"]

MAX_DEPTH = 32
"""Deeper schemas are refused (OpenAI allows 10 levels of objects; this guards recursion)."""
_NOT_STRICT = ("allOf", "prefixItems", "patternProperties", "unevaluatedProperties",
               "unevaluatedItems", "additionalItems", "$dynamicRef", "$recursiveRef")
_LEFT_OUT = ("minLength", "maxLength", "uniqueItems", "not", "if", "then", "else",
             "dependentRequired", "dependentSchemas", "dependencies", "minProperties",
             "maxProperties", "propertyNames", "contains", "minContains", "maxContains",
             "default", "examples", "$schema", "$id", "$comment", "readOnly", "writeOnly")
_FORMATS = frozenset(["date-time", "time", "date", "duration", "email", "hostname", "ipv4",
                      "ipv6", "uuid"])
"""The string formats OpenAI's strict mode knows; others are left out."""


class _NotStrict(Exception):
    def __init__(self, at: list[str], why: str) -> None:
        super().__init__(f"{to_pointer(at) or '/'}: {why}")


def strict_schema(schema: Any) -> tuple[JSONObject | None, str | None]:
    """Return `(strict copy, None)`, or `(None, why)` when the schema cannot be strict."""
    if schema is True or schema is None:
        return None, "/: the tool takes any params; strict mode needs them listed"
    if schema is False:
        return {"type": "object", "properties": {}, "required": [],
                "additionalProperties": False}, None
    if not isinstance(schema, dict):
        return None, f"/: the params schema is a {type(schema).__name__}, not an object"
    if schema.get("type") != "object" and "properties" not in schema:
        return None, "/: the params schema is not an object schema"
    try:
        fixed = _strict(copy.deepcopy(schema), [], schema, 0)
    except _NotStrict as why:
        return None, str(why)
    return fixed, None


def _strict(node: Any, at: list[str], root: JSONObject, depth: int) -> JSONObject:
    if depth > MAX_DEPTH:
        raise _NotStrict(at, f"nested deeper than {MAX_DEPTH} levels")
    if not isinstance(node, dict) or not node:
        raise _NotStrict(at, "a value of any type; strict mode needs a type")
    found = [key for key in _NOT_STRICT if key in node]
    if found:
        raise _NotStrict(at, f"{found[0]!r} has no strict form")
    if "$ref" in node:
        return _strict_ref(node, at, root, depth)
    _leave_out(node)
    _strict_members(node, at, root, depth)
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if kinds is None and not any(k in node for k in ("anyOf", "enum", "const")):
        raise _NotStrict(at, "a value of any type; strict mode needs a type")
    if (isinstance(kinds, list) and "object" in kinds) or "properties" in node:
        _strict_object(node, at, root, depth)
    if isinstance(kinds, list) and "array" in kinds:
        if not isinstance(node.get("items"), dict):
            raise _NotStrict(at, "an array of items of any type")
        node["items"] = _strict(node["items"], [*at, "items"], root, depth + 1)
    return node


def _strict_members(node: JSONObject, at: list[str], root: JSONObject, depth: int) -> None:
    """Make a union's branches and the `$defs` strict (`oneOf` is written `anyOf`)."""
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    if isinstance(node.get("anyOf"), list):
        if not at:
            raise _NotStrict(at, "the params are a union (anyOf); strict mode needs an object")
        node["anyOf"] = [_strict(b, [*at, "anyOf", str(i)], root, depth + 1)
                         for i, b in enumerate(node["anyOf"])]
    for key in ("$defs", "definitions"):
        if isinstance(node.get(key), dict):
            node[key] = {name: _strict(sub, [*at, key, name], root, depth + 1)
                         for name, sub in node[key].items()}


def _strict_object(node: JSONObject, at: list[str], root: JSONObject, depth: int) -> None:
    properties = node.get("properties")
    extra = node.get("additionalProperties", False)
    if not isinstance(properties, dict) or (not properties and at):
        raise _NotStrict(at, "an object whose keys are not listed")
    if extra is not False:
        raise _NotStrict(at, "an object that takes keys beyond its properties")
    required: list[Any] = node["required"] if isinstance(node.get("required"), list) else []
    strict: JSONObject = {}
    for name, prop in properties.items():
        sub = _strict(prop, [*at, "properties", name], root, depth + 1)
        strict[name] = sub if name in required else _nullable(sub)
    node["properties"] = strict
    node["required"] = list(properties)
    node["additionalProperties"] = False


def _strict_ref(node: JSONObject, at: list[str], root: JSONObject, depth: int) -> JSONObject:
    ref = node["$ref"]
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise _NotStrict(at, f"a $ref outside the schema ({ref!r})")
    if set(node) <= {"$ref"}:
        return node
    target: Any = root  # a $ref beside other keys: inlined, as OpenAI wants it alone
    for part in [p for p in ref[1:].split("/") if p]:
        target = target.get(part.replace("~1", "/").replace("~0", "~")) \
            if isinstance(target, dict) else None
    if not isinstance(target, dict):
        raise _NotStrict(at, f"a $ref to nowhere ({ref!r})")
    merged = {**copy.deepcopy(target), **{k: v for k, v in node.items() if k != "$ref"}}
    return _strict(merged, at, root, depth + 1)


def _leave_out(node: JSONObject) -> None:
    if "default" in node and node["default"] is not None:
        shown = json.dumps(node["default"], ensure_ascii=False)
        text = node.get("description")
        node["description"] = (f"{text.rstrip()} " if isinstance(text, str) and text else "") \
            + f"Default: {shown}."
    for key in _LEFT_OUT:
        node.pop(key, None)
    if node.get("format") not in _FORMATS:
        node.pop("format", None)


def _nullable(node: JSONObject) -> JSONObject:
    """The same schema, taking `null` too (how strict mode writes an optional property)."""
    if _takes_null(node):
        return node
    kinds = node.get("type")
    if isinstance(kinds, str | list) and "anyOf" not in node:
        node["type"] = [*([kinds] if isinstance(kinds, str) else kinds), "null"]
        if isinstance(node.get("enum"), list):
            node["enum"] = [*node["enum"], None]
        return node
    description = node.pop("description", None)
    wrapped: JSONObject = {"anyOf": [node, {"type": "null"}]}
    if description is not None:
        wrapped["description"] = description
    return wrapped


def _takes_null(node: Any) -> bool:
    if node is True or not isinstance(node, dict):
        return node is True
    kinds = node.get("type")
    if "enum" in node:
        return isinstance(node["enum"], list) and None in node["enum"]
    if "const" in node:
        return node["const"] is None
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    branches = node.get("anyOf", node.get("oneOf"))
    return isinstance(branches, list) and any(_takes_null(b) for b in branches)


def drop_absent_nulls(params: Any, schema: Any, depth: int = 0) -> Any:
    """Remove `null` values of optional properties whose schema does not take `null`."""
    if not isinstance(params, dict) or not isinstance(schema, dict) or depth > MAX_DEPTH:
        return params
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return params
    required: list[Any] = schema["required"] if isinstance(schema.get("required"), list) else []
    out = {}
    for key, value in params.items():
        sub = properties.get(key)
        if value is None and key not in required and isinstance(sub, dict) \
                and sub and not _takes_null(sub) and "$ref" not in sub:
            continue
        out[key] = drop_absent_nulls(value, sub, depth + 1) if isinstance(value, dict) \
            else value
    return out
