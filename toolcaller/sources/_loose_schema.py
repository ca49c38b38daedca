"""Loose parameter schemas made into JSON Schema, each change reported.

Function definitions written for models are often not valid JSON Schema: BFCL's function docs
use Python and Java type names (`dict`, `float`, `tuple`, `any`, `String`, `HashMap`, `long`…),
Gemini and OpenAPI 3.0 write `STRING` and `nullable: true`. The rules, applied everywhere a
subschema can be:

1. a type name that is not JSON Schema's becomes the one it means (`dict` → `object`,
   `float` → `number`, `tuple` → `array`, `STRING` → `string`); `any`, `""` or an unknown
   name leaves the type open;
2. `nullable: true` (OpenAPI 3.0, Gemini) adds `null` to the type;
3. `optional: true` (BFCL) is dropped and the property leaves `required`;
4. a `default` is a value the author accepts: `default: null` adds `null` to the type and the
   enum; any other default the schema refuses joins the enum, and its JSON type the type
   (`{"type": "integer", "default": "dontcare"}` also takes strings);
5. an `enum` written on an array of scalars is moved to its `items`;
6. `items` given as a list (draft 4–7 tuples) becomes `prefixItems`.

Each change is reported as `{"at": JSON pointer, "change": what was done}`.
"""

from __future__ import annotations

import copy
from typing import Any

from toolcaller.core.pointer import to_pointer

__all__ = ["normalize_schema"]

Changes = list[dict[str, str]]

MAX_DEPTH = 64
"""Subschemas deeper than this are left as they are (no real schema nests so deep)."""

_TYPES = {
    **dict.fromkeys(["object", "dict", "hashmap", "hashtable", "map", "struct"], "object"),
    **dict.fromkeys(["number", "float", "double", "decimal", "bigdecimal"], "number"),
    **dict.fromkeys(["integer", "int", "long", "bigint", "biginteger", "short", "byte"],
                    "integer"),
    **dict.fromkeys(["string", "str", "char", "character", "text"], "string"),
    **dict.fromkeys(["boolean", "bool"], "boolean"),
    **dict.fromkeys(["array", "list", "tuple", "arraylist", "linkedlist", "queue", "stack",
                     "set"], "array"),
    **dict.fromkeys(["null", "none", "nonetype"], "null"),
}
"""Type names people write, lowercased, and the JSON Schema type each means."""
_OPEN = frozenset(["any", "", "type_unspecified", "object?", "mixed"])
"""Type names that mean "any value"."""
_TRUE = (True, "true", "True", "yes", "Yes")

_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains",
        "propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems")
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def normalize_schema(schema: Any) -> tuple[Any, Changes]:
    """Return a corrected copy of a params schema and the list of changes made."""
    if schema is None:
        return {"type": "object", "properties": {}}, []
    fixed = copy.deepcopy(schema)
    changes: Changes = []
    _fix(fixed, [], changes, 0)
    return fixed, changes


def _note(changes: Changes, at: list[str], change: str) -> None:
    changes.append({"at": to_pointer(at), "change": change})


def _fix(node: Any, at: list[str], changes: Changes, depth: int) -> None:
    if not isinstance(node, dict) or depth > MAX_DEPTH:
        return
    _fix_type(node, at, changes)
    _fix_nullable(node, at, changes)
    _fix_items_list(node, at, changes)
    _fix_array_enum(node, at, changes)
    _fix_default(node, at, changes)
    properties = node.get("properties")
    if isinstance(properties, dict):
        _fix_optional(node, properties, at, changes)
    for key in _ONE:
        _fix(node.get(key), [*at, key], changes, depth + 1)
    for key in _LISTS:
        items = node.get(key)
        if isinstance(items, list):
            for index, item in enumerate(items):
                _fix(item, [*at, key, str(index)], changes, depth + 1)
    for key in _MAPS:
        members = node.get(key)
        if isinstance(members, dict):
            for name, item in members.items():
                _fix(item, [*at, key, name], changes, depth + 1)


def _fix_type(node: dict[str, Any], at: list[str], changes: Changes) -> None:
    if "type" not in node:
        return
    written = node["type"]
    names = written if isinstance(written, list) else [written]
    meant: list[str] = []
    for name in names:
        if not isinstance(name, str) or name.strip().lower() in _OPEN:
            node.pop("type")
            _note(changes, [*at, "type"], f"type {written!r} accepts any value: type removed")
            return
        mapped = _TYPES.get(name.strip().lower())
        if mapped is None:
            node.pop("type")
            _note(changes, [*at, "type"],
                  f"unknown type {name!r}: type removed, any value is accepted")
            return
        if mapped not in meant:
            meant.append(mapped)
    fixed: str | list[str] = meant[0] if len(meant) == 1 and not isinstance(written, list) \
        else meant
    if fixed != written:
        node["type"] = fixed
        _note(changes, [*at, "type"], f"type {written!r} → {fixed!r}")


def _fix_nullable(node: dict[str, Any], at: list[str], changes: Changes) -> None:
    if "nullable" not in node:
        return
    nullable = node.pop("nullable")
    if nullable in _TRUE:
        _accept_null(node)
        _note(changes, [*at, "nullable"], "nullable: true → null added to the type")
    else:
        _note(changes, [*at, "nullable"], f"nullable: {nullable!r} removed")


def _fix_items_list(node: dict[str, Any], at: list[str], changes: Changes) -> None:
    items = node.get("items")
    if isinstance(items, list) and "prefixItems" not in node:
        node["prefixItems"] = node.pop("items")
        _note(changes, [*at, "items"], "items as a list (a tuple) → prefixItems")


def _fix_array_enum(node: dict[str, Any], at: list[str], changes: Changes) -> None:
    enum = node.get("enum")
    if node.get("type") != "array" or not isinstance(enum, list):
        return
    if any(isinstance(value, list) for value in enum):
        return  # an enum of whole arrays is meant as written
    items = node.get("items")
    if items is None or items is True:
        items = node["items"] = {}
    if isinstance(items, dict) and "enum" not in items:
        items["enum"] = node.pop("enum")
        _note(changes, [*at, "enum"], "enum of an array → moved to its items")


def _fix_default(node: dict[str, Any], at: list[str], changes: Changes) -> None:
    if "default" not in node:
        return
    default = node["default"]
    if default is None:
        if not _accepts_null(node):
            _accept_null(node)
            _note(changes, [*at, "default"], "default null → null accepted")
        return
    added = []
    enum = node.get("enum")
    if isinstance(enum, list) and not any(_same(default, value) for value in enum):
        node["enum"] = [*enum, default]
        added.append("the enum")
    kind, wanted = node.get("type"), _json_type(default)
    kinds = [kind] if isinstance(kind, str) else kind
    if wanted is not None and isinstance(kinds, list) and not _type_takes(kinds, default):
        node["type"] = [*kinds, wanted]
        added.append(f"type {wanted!r}")
    if added:
        _note(changes, [*at, "default"],
              f"default {default!r} refused by the schema → {' and '.join(added)} added")


def _fix_optional(node: dict[str, Any], properties: dict[str, Any], at: list[str],
                  changes: Changes) -> None:
    required = node.get("required")
    for name, sub in properties.items():
        if not isinstance(sub, dict) or "optional" not in sub:
            continue
        optional = sub.pop("optional")
        where = [*at, "properties", name, "optional"]
        if optional in _TRUE and isinstance(required, list) and name in required:
            required.remove(name)
            _note(changes, where, f"optional: {optional!r} → {name!r} removed from required")
        else:
            _note(changes, where, f"optional: {optional!r} removed (not a JSON Schema keyword)")


def _same(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not `1` (Python's `==` says it is)."""
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) \
        else a == b


def _json_type(value: Any) -> str | None:
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
                       (list, "array"), (dict, "object")):
        if isinstance(value, kind):
            return name
    return None


def _type_takes(kinds: list[Any], value: Any) -> bool:
    wanted = _json_type(value)
    if wanted in kinds:
        return True
    if wanted == "integer" and "number" in kinds:
        return True
    return wanted == "number" and "integer" in kinds and float(value).is_integer()


def _accepts_null(node: dict[str, Any]) -> bool:
    """Say whether a schema visibly accepts null (by type, enum, const or a union branch)."""
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "enum" in node:
        return isinstance(node["enum"], list) and None in node["enum"]
    if "const" in node:
        return node["const"] is None
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and any(
                b is True or (isinstance(b, dict) and _accepts_null(b)) for b in branches):
            return True
    return kind is None and not any(k in node for k in ("anyOf", "oneOf", "allOf", "$ref"))


def _accept_null(node: dict[str, Any]) -> None:
    kind = node.get("type")
    if isinstance(kind, str) and kind != "null":
        node["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        node["type"] = [*kind, "null"]
    enum = node.get("enum")
    if isinstance(enum, list) and None not in enum:
        node["enum"] = [*enum, None]
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and not any(
                isinstance(b, dict) and b.get("type") == "null" for b in branches):
            node[key] = [*branches, {"type": "null"}]
            break
