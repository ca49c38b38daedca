"""OpenAPI schemas as JSON Schema 2020-12: local `$ref`s resolved, the OpenAPI dialect fixed.

`Refs` inlines local `$ref`s (recursive ones become `$defs`); `normalise` turns OpenAPI 3.0 and
Swagger 2.0 schema keywords (`nullable`, boolean `exclusiveMinimum`, `"type": "int"`, `example`)
into JSON Schema 2020-12, tolerantly: invalid documents are read as well as they can be.
"""

from __future__ import annotations

import re
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.core.pointer import split_pointer

__all__ = ["Refs", "normalise"]

_TYPE_FIXES = {"int": "integer", "long": "integer", "float": "number", "double": "number",
               "bool": "boolean", "str": "string", "dict": "object", "list": "array"}
_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


class Refs:
    """Resolves local `$ref`s: inlined once, recursive ones kept in `$defs`."""

    def __init__(self, doc: JSONObject) -> None:
        self.doc = doc
        self._defs: dict[str, str] = {}  # $defs name -> pointer

    def deref(self, node: Any, depth: int = 0) -> Any:
        """Follow a `$ref` chain (parameters, path items, request bodies)."""
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and depth < 20:
            target = self._target(node["$ref"])
            if target is None:
                return {}
            node, depth = target, depth + 1
        return node

    def schema(self, node: Any) -> Any:
        """Return a JSON Schema 2020-12 copy of an OpenAPI schema, refs resolved."""
        return normalise(self._inline(node, ()))

    def take_defs(self) -> JSONObject:
        """Return the `$defs` the last schemas needed (recursive refs), and forget them."""
        defs: JSONObject = {}
        while len(defs) < len(self._defs):
            for name, pointer in list(self._defs.items()):
                if name not in defs:
                    defs[name] = normalise(self._inline(self._target(pointer), (pointer,)))
        self._defs = {}
        return defs

    def _inline(self, node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [self._inline(v, stack) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            siblings = {k: self._inline(v, stack) for k, v in node.items() if k != "$ref"}
            if not ref.startswith("#"):
                return {**siblings, "description": f"unresolved external $ref {ref!r}"}
            if ref in stack:
                return {**siblings, "$ref": f"#/$defs/{self._def_name(ref)}"}
            target = self._target(ref)
            if target is None:
                return siblings
            return {**self._inline(target, (*stack, ref)), **siblings}
        return {k: self._inline(v, stack) for k, v in node.items()}

    def _def_name(self, pointer: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", pointer.rsplit("/", 1)[-1]) or "def"
        name = base
        for count in range(2, 1000):
            if self._defs.get(name, pointer) == pointer:
                break
            name = f"{base}_{count}"
        self._defs[name] = pointer
        return name

    def _target(self, ref: str) -> Any:
        node: Any = self.doc
        for key in split_pointer(ref.lstrip("#")):
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return None
        return node  # shared: read only (`_inline` and `normalise` build new objects)


_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                          "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_ONE = frozenset({"items", "additionalProperties", "not", "if", "then", "else",
                         "contains", "propertyNames", "unevaluatedProperties",
                         "unevaluatedItems", "additionalItems"})


def normalise(schema: Any) -> Any:
    """Turn OpenAPI 3.0/2.0 schema dialect into JSON Schema 2020-12, tolerantly."""
    if not isinstance(schema, dict):
        return schema
    out: JSONObject = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: normalise(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [normalise(sub) for sub in value]
        elif key in _SCHEMA_ONE:
            out[key] = normalise(value)
        elif key not in ("nullable", "discriminator", "xml", "externalDocs", "collectionFormat"):
            out[key] = value
    _fix_dialect(out, nullable=schema.get("nullable") is True)
    return out


def _fix_dialect(out: JSONObject, *, nullable: bool) -> None:
    """Fix one schema object's own keywords: types, nullable, boolean exclusive bounds."""
    if key_type := out.get("type"):
        kinds = [key_type] if isinstance(key_type, str) else list(key_type)
        fixed = [_TYPE_FIXES.get(str(k).lower(), str(k).lower()) for k in kinds]
        fixed = [k for k in fixed if k in _JSON_TYPES]  # "file" and inventions: unconstrained
        if nullable and fixed and "null" not in fixed:
            fixed.append("null")
        if not fixed:
            del out["type"]
        else:
            out["type"] = fixed[0] if len(fixed) == 1 else fixed
    for bound, limit in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if not isinstance(out.get(bound), bool):
            continue
        exclusive = out.pop(bound)  # draft-4 style, as OpenAPI 3.0 writes it
        if exclusive and limit in out:
            out[bound] = out.pop(limit)
    if "example" in out and "examples" not in out:
        out["examples"] = [out.pop("example")]
