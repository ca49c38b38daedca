"""JSON Schema's notion of equality (`enum`, `const`, `uniqueItems`) and each draft's keywords.

Copied from jsonschema's `_utils` (MIT licence) so that the fast checker answers exactly as
jsonschema does without importing it: importing jsonschema can cost seconds where optional
format checkers (rfc3987-syntax builds a grammar at import) are installed.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DRAFT7", "DRAFT7_KEYWORDS", "DRAFT202012", "DRAFT202012_KEYWORDS", "draft_of",
           "equal", "uniq"]

DRAFT7 = "draft7"
DRAFT202012 = "draft2020-12"

DRAFT7_KEYWORDS = frozenset({
    "$ref", "additionalItems", "additionalProperties", "allOf", "anyOf", "const", "contains",
    "dependencies", "enum", "exclusiveMaximum", "exclusiveMinimum", "format", "if", "items",
    "maxItems", "maxLength", "maxProperties", "maximum", "minItems", "minLength",
    "minProperties", "minimum", "multipleOf", "not", "oneOf", "pattern", "patternProperties",
    "properties", "propertyNames", "required", "type", "uniqueItems",
})
DRAFT202012_KEYWORDS = frozenset({
    "$dynamicRef", "$ref", "additionalProperties", "allOf", "anyOf", "const", "contains",
    "dependentRequired", "dependentSchemas", "enum", "exclusiveMaximum", "exclusiveMinimum",
    "format", "if", "items", "maxItems", "maxLength", "maxProperties", "maximum", "minItems",
    "minLength", "minProperties", "minimum", "multipleOf", "not", "oneOf", "pattern",
    "patternProperties", "prefixItems", "properties", "propertyNames", "required", "type",
    "unevaluatedItems", "unevaluatedProperties", "uniqueItems",
})

_DRAFTS = {
    "http://json-schema.org/draft-07/schema": DRAFT7,
    "https://json-schema.org/draft/2020-12/schema": DRAFT202012,
}


def draft_of(schema: Any) -> str | None:
    """Return the draft a schema's `$schema` names (2020-12 when absent), or None if another."""
    if not isinstance(schema, dict) or "$schema" not in schema:
        return DRAFT202012
    name = schema["$schema"]
    if not isinstance(name, str):
        return None
    return _DRAFTS.get(name.rstrip("#"))


def unbool(element: Any, true: object = object(), false: object = object()) -> Any:
    """Make True/1 and False/0 distinct, as JSON Schema wants."""
    if element is True:
        return true
    if element is False:
        return false
    return element


def equal(one: Any, two: Any) -> bool:
    """Say whether two JSON values are equal the JSON Schema way (`True != 1`, `1 == 1.0`)."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(equal(i, j) for i, j in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return len(one) == len(two) and all(
            key in two and equal(value, two[key]) for key, value in one.items()
        )
    return bool(unbool(one) == unbool(two))


def uniq(container: Any) -> bool:
    """Say whether a container's elements are unique the JSON Schema way."""
    try:
        ordered = sorted(unbool(i) for i in container)
        for i, j in zip(ordered, itertools.islice(ordered, 1, None), strict=False):
            if equal(i, j):
                return False
    except (NotImplementedError, TypeError):
        seen: list[Any] = []
        for element in container:
            element = unbool(element)
            if any(equal(i, element) for i in seen):
                return False
            seen.append(element)
    return True
