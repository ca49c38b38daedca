"""A fast, sufficient test that a schema compiles: its meta-schema unrolled, one Rust call.

`check_schema` runs it on every tool of a registry and compiles only what it cannot vouch
for. Passing means: valid for its meta-schema (2020-12 or draft 7); subschemas nested at most
`QUICK_DEPTH` deep, and data (`const`, `enum`, `default`, `examples`, unknown keywords) as
deep; no `$id`, anchor, dynamic reference or nested `$schema`; every `$ref` is `#`,
`#/$defs/NAME` or `#/definitions/NAME` naming an entry that exists. Failing proves nothing:
jsonschema-rs then compiles the schema and decides, so this never refuses a valid schema.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["DRAFT7", "DRAFT2020", "QUICK_DEPTH", "is_quickly_usable"]

DRAFT7 = "http://json-schema.org/draft-07/schema#"
DRAFT2020 = "https://json-schema.org/draft/2020-12/schema"
QUICK_DEPTH = 12
"""Subschemas (and data) nested deeper are left to the compiler (jsonschema-rs reads 255)."""

_FLAT_META = Path(__file__).resolve().parent.parent / "schemas" / "meta-2020-12-flat.schema.json"
_DIALECTS = {None: DRAFT2020, DRAFT2020: DRAFT2020, DRAFT2020 + "#": DRAFT2020,
             DRAFT7: DRAFT7, DRAFT7.rstrip("#"): DRAFT7}
_BANNED = ("$dynamicRef", "$recursiveRef", "$id", "$anchor", "$dynamicAnchor",
           "$recursiveAnchor")
_LOCAL_REFS = {DRAFT2020: r"^#(/(\$defs|definitions)/[A-Za-z0-9_.\-]+)?$",
               DRAFT7: r"^#(/definitions/[A-Za-z0-9_.\-]+)?$"}
"""Where a quick `$ref` may point: an entry the draft's meta-schema checks as a schema."""
_LOCAL_PATTERNS = {draft: re.compile(pattern) for draft, pattern in _LOCAL_REFS.items()}
_SCALARS = ["string", "number", "boolean", "null"]


def is_quickly_usable(schema: dict[str, Any]) -> bool:
    """Say whether a schema object certainly compiles (False: compile it to know)."""
    dialect = schema.get("$schema")
    if not (dialect is None or (type(dialect) is str and dialect in _DIALECTS)):
        return False
    draft = _DIALECTS[dialect]
    # A schema with definitions most likely refers to them: check its references at once.
    refs = "$defs" in schema or "definitions" in schema
    try:
        if _checker(draft, refs).is_valid(schema):
            return not refs or _local_refs_exist(schema, draft)
        return not refs and _checker(draft, True).is_valid(schema) \
            and _local_refs_exist(schema, draft)
    except ValueError:  # not JSON data, or too deep to convert: compiling explains
        return False


def _local_refs_exist(schema: dict[str, Any], draft: str) -> bool:
    """Say whether every `$ref` anywhere is a local one naming an entry of `$defs`/`definitions`.

    Only called once the meta-schema check saw no other kind of reference in a schema position
    (and bounded the nesting); a `$ref` key in data or a property named `$ref` just sends the
    schema to the compiler.
    """
    refs: set[Any] = set()
    _collect_refs(schema, refs)
    return all(type(ref) is str and _names_entry(schema, ref, draft) for ref in refs)


def _collect_refs(node: dict[str, Any], refs: set[Any]) -> None:
    # Recursion is the fastest walk here, and the meta-schema check bounded the depth.
    if "$ref" in node:
        ref = node["$ref"]
        refs.add(ref if type(ref) is str else None)
    for value in node.values():
        kind = type(value)
        if kind is dict:
            _collect_refs(value, refs)
        elif kind is list:
            for item in value:
                if type(item) is dict:
                    _collect_refs(item, refs)


def _names_entry(schema: dict[str, Any], ref: str, draft: str) -> bool:
    if ref == "#":
        return True
    if _LOCAL_PATTERNS[draft].match(ref) is None:
        return False
    _, section, name = ref.split("/", 2)
    entries = schema.get(section)
    return isinstance(entries, dict) and isinstance(entries.get(name), dict | bool)


@lru_cache(maxsize=4)
def _checker(meta_uri: str, local_refs: bool) -> Any:
    """Compile the meta-schema check for one draft, with or without local `$ref`s allowed."""
    refs = {"$ref": {"type": "string", "pattern": _LOCAL_REFS[meta_uri]} if local_refs else False}
    banned = {**dict.fromkeys(_BANNED, False), **refs}
    if meta_uri == DRAFT2020:
        flat = json.loads(_FLAT_META.read_text("utf-8"))
        return _compile({"$schema": meta_uri, "$defs": _leveled(flat["$defs"], banned),
                         "$ref": "#/$defs/meta1"})
    # Draft 7 (rarer): its own meta-schema, and a depth-bounded walk refusing the same words.
    levels: dict[str, Any] = {
        f"level{n}": {"properties": {**banned, "$schema": False},
                      "additionalProperties": {"$ref": f"#/definitions/level{n + 1}"},
                      "items": {"$ref": f"#/definitions/level{n + 1}"}}
        for n in range(1, 2 * QUICK_DEPTH)}
    levels[f"level{2 * QUICK_DEPTH}"] = {"type": _SCALARS}
    root = {"properties": banned, "additionalProperties": {"$ref": "#/definitions/level1"}}
    return _compile({"$schema": meta_uri, "definitions": levels,
                     "allOf": [{"$ref": meta_uri}, root]})


def _compile(schema: dict[str, Any]) -> Any:
    import jsonschema_rs

    # As validation compiles params schemas: formats asserted (`format: regex` included).
    return jsonschema_rs.validator_for(schema, validate_formats=True, offline=True)


def _leveled(defs: dict[str, Any], banned: dict[str, Any]) -> dict[str, Any]:
    """Unroll the flat 2020-12 meta-schema into `QUICK_DEPTH` levels with `banned` keywords.

    Level n's subschemas are checked by level n+1; past the last level nothing passes.
    """
    data: dict[str, Any] = {f"data{n}": {"additionalProperties": {"$ref": f"#/$defs/data{n + 1}"},
                                         "items": {"$ref": f"#/$defs/data{n + 1}"}}
                            for n in range(QUICK_DEPTH)}
    data[f"data{QUICK_DEPTH}"] = {"type": _SCALARS}
    out = {**defs, **data, f"meta{QUICK_DEPTH + 1}": False}
    text = json.dumps({"meta": defs["meta"], "schemaArray": defs["schemaArray"]})
    for n in range(1, QUICK_DEPTH + 1):
        level = json.loads(text.replace('"#/$defs/meta"', f'"#/$defs/meta{n + 1}"')
                           .replace('"#/$defs/schemaArray"', f'"#/$defs/schemaArray{n}"'))
        meta = level["meta"]
        meta["properties"].update(banned if n == 1 else {**banned, "$schema": False})
        meta["additionalProperties"] = {"$ref": "#/$defs/data1"}  # unknown keywords: data
        for keyword in ("const", "default"):
            meta["properties"][keyword] = {"$ref": "#/$defs/data1"}
        for keyword in ("enum", "examples"):
            meta["properties"][keyword] = {"type": "array", "items": {"$ref": "#/$defs/data2"}}
        out[f"meta{n}"], out[f"schemaArray{n}"] = meta, level["schemaArray"]
    return out
