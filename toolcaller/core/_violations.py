"""Turn jsonschema-rs errors into violations: the pointer of the field to fix, a short message.

Messages name the value in JSON (cut to `MAX_SHOWN` characters), never a whole object, array or
schema, and never a raw regex: a person reads them, and a secret may sit in a value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from toolcaller.core.pointer import to_pointer
from toolcaller.core.redact import is_secret_name

__all__ = ["MAX_SHOWN", "describe", "show", "violations_of"]

MAX_SHOWN = 40
"""Longest rendering of a value inside a message."""
MAX_OPTIONS = 5
"""How many enum members a message lists."""

Violation = tuple[str, str]
_PLAIN = re.compile(r"[ !#-\[\]-~]*")
"""Printable ASCII without `"` or a backslash: such a string is its own JSON body."""
_TYPE_NAMES = {"array": "an array", "boolean": "a boolean", "integer": "an integer",
               "null": "null", "number": "a number", "object": "an object", "string": "a string"}
_FORMAT_HINTS = {
    "date": " (YYYY-MM-DD)",
    "date-time": " (RFC 3339, e.g. 2026-03-10T12:00:00Z)",
    "time": " (RFC 3339, e.g. 12:00:00Z)",
    "duration": " (ISO 8601, e.g. P3DT4H)",
    "uri": " (an absolute URI, e.g. https://example.com/x)",
}


def violations_of(errors: Iterable[Any], limit: int,
                  schema: Any = None) -> list[dict[str, str]]:
    """Describe jsonschema-rs errors: at most `limit` distinct violations, sorted by pointer.

    `schema` (the one validated against) lets an `anyOf`/`oneOf` message name its variants by
    their `title`.
    """
    found: dict[Violation, None] = {}
    for error in errors:
        for violation in describe(error, schema):
            found[violation] = None
        if len(found) >= limit:
            break
    ordered = sorted(found, key=lambda v: v[0])  # stable: same-pointer messages keep their order
    return [{"pointer": pointer, "message": message} for pointer, message in ordered[:limit]]


def describe(error: Any, schema: Any = None) -> list[Violation]:
    """Return the violations one jsonschema-rs error stands for, pointing at what to fix."""
    path = list(error.instance_path)
    kind = error.kind
    many = _PER_MEMBER.get(type(kind).__name__)
    if many is not None:
        return many(kind, path, error)
    one = _MESSAGES.get(type(kind).__name__)
    try:
        if type(kind).__name__ in _UNIONS:
            message = _union(kind, error, schema)
        else:
            message = one(kind, error) if one is not None else _cut(str(error.message), 120)
        if path and isinstance(path[-1], str) and is_secret_name(path[-1]):
            # The engine masks secrets of 4+ characters in messages; a shorter one too.
            message = message.replace(show(error.instance), "the value")
    except ValueError:  # the instance is too deep to bring back from Rust
        message = _cut(str(error.message), 120)
    return [(to_pointer(path), message)]


def show(value: Any) -> str:
    """Render a value for a message: JSON for scalars, a noun for objects and arrays."""
    kind = type(value)
    if kind is str and len(value) <= MAX_SHOWN - 2 and _PLAIN.fullmatch(value):
        return f'"{value}"'  # the common case, without json.dumps
    if kind is int and -(10**15) < value < 10**15:
        return str(value)
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = type(value).__name__
    return _cut(text, MAX_SHOWN)


def _cut(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plural(count: int, noun: str) -> str:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{count} {noun if count == 1 else plural}"


def _types(types: list[str]) -> str:
    names = [_TYPE_NAMES.get(t, t) for t in types]
    return " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 2 else names)


def _options(options: list[Any]) -> str:
    shown = [show(option) for option in options[:MAX_OPTIONS]]
    rest = len(options) - len(shown)
    if rest:
        return f"one of {', '.join(shown)} (or {rest} more)"
    if len(shown) > 1:
        return "one of " + " or ".join([", ".join(shown[:-1]), shown[-1]])
    return shown[0] if shown else "nothing (the enum is empty)"


def _size(kind: Any, error: Any, least: bool, noun: str) -> str:
    count = len(error.instance)
    return f"expected {'at least' if least else 'at most'} {_plural(kind.limit, noun)}, got {count}"


def _contains(kind: Any, error: Any) -> str:
    keyword = error.schema_path[-1] if error.schema_path else "contains"
    if keyword == "maxContains":
        return "too many items match what the array may contain"
    if keyword == "minContains":
        return "too few items match what the array must contain"
    return "no item matches what the array must contain"


def _false_schema(kind: Any, error: Any) -> str:
    where = list(error.schema_path)
    if len(where) >= 2 and where[-2] == "properties":
        return f"{where[-1]!r} is not allowed"
    return "no value is allowed here"


def _property_names(kind: Any, path: list[Any], error: Any) -> list[Violation]:
    inner = kind.error
    name = inner.instance
    reason = describe(inner)[0][1]
    return [(to_pointer([*path, name]), f"the property name {show(name)} is not allowed: {reason}")]


_MESSAGES: dict[str, Callable[[Any, Any], str]] = {
    "Type": lambda k, e: f"expected {_types(k.types)}, got {show(e.instance)}",
    "Enum": lambda k, e: f"expected {_options(k.options)}, got {show(e.instance)}",
    "Constant": lambda k, e: f"expected {show(k.expected_value)}, got {show(e.instance)}",
    "Minimum": lambda k, e: f"{show(e.instance)} is less than the minimum of {show(k.limit)}",
    "Maximum": lambda k, e: f"{show(e.instance)} is greater than the maximum of {show(k.limit)}",
    "ExclusiveMinimum": lambda k, e: f"{show(e.instance)} must be greater than {show(k.limit)}",
    "ExclusiveMaximum": lambda k, e: f"{show(e.instance)} must be less than {show(k.limit)}",
    "MultipleOf": lambda k, e: f"{show(e.instance)} is not a multiple of {show(k.multiple_of)}",
    "MinLength": lambda k, e: _size(k, e, True, "character"),
    "MaxLength": lambda k, e: _size(k, e, False, "character"),
    "MinItems": lambda k, e: _size(k, e, True, "item"),
    "MaxItems": lambda k, e: _size(k, e, False, "item"),
    "AdditionalItems": lambda k, e: _size(k, e, False, "item"),
    "MinProperties": lambda k, e: _size(k, e, True, "property"),
    "MaxProperties": lambda k, e: _size(k, e, False, "property"),
    "Pattern": lambda k, e: f"{show(e.instance)} does not match the required pattern",
    "Format": lambda k, e: (f"{show(e.instance)} is not a valid {k.format}"
                            f"{_FORMAT_HINTS.get(k.format, '')}"),
    "UniqueItems": lambda k, e: "expected unique items, but some repeat",
    "Contains": _contains,
    "OneOfMultipleValid": lambda k, e: (f"{show(e.instance)} matches more than one alternative; "
                                        "exactly one is allowed"),
    "Not": lambda k, e: f"{show(e.instance)} is not allowed here",
    "FalseSchema": _false_schema,
    "BacktrackLimitExceeded": lambda k, e: "the value is too complex to check against its pattern",
    "RegexEngineFailure": lambda k, e: "the value could not be checked against its pattern",
}
"""One message per error kind (the class name of jsonschema-rs's `ValidationErrorKind`)."""

_UNIONS = frozenset({"AnyOf", "OneOfNotValid"})


def _union(kind: Any, error: Any, schema: Any) -> str:
    """Say that no alternative fits, naming the closest one and what fails in it.

    The closest alternative is the one whose failures look least like "another shape": no type
    or `const` mismatch where the union sits (a discriminator), then the fewest violations,
    then the deepest (it got furthest). Its first violation is named, below the union's place.
    """
    head = f"{show(error.instance)} matches none of the allowed alternatives"
    variants = list(getattr(kind, "context", None) or [])
    if not variants:
        return head
    base = len(error.instance_path)
    ranked = sorted(range(len(variants)), key=lambda i: _distance(variants[i], base))
    best = ranked[0]
    found = [v for sub in variants[best] for v in describe(sub, schema)]
    if not found:
        return head
    name = _variant_name(schema, [*error.schema_path, best]) or f"alternative {best + 1}"
    pointer, message = found[0]
    where = pointer[len(to_pointer(list(error.instance_path))):]
    more = f" (and {_plural(len(found) - 1, 'other problem')})" if len(found) > 1 else ""
    at = f" at {where}" if where else ""
    return f"{head}; the closest, {name}, fails{at}: {message}{more}"


def _distance(errors: list[Any], base: int) -> tuple[int, int, int]:
    shape = sum(1 for e in errors if type(e.kind).__name__ in ("Type", "Constant", "Enum")
                and len(e.instance_path) <= base + 1)
    depth = max((len(e.instance_path) for e in errors), default=base)
    return (shape, len(errors), -depth)  # ties: the first alternative (sorting is stable)


def _variant_name(schema: Any, schema_path: list[Any]) -> str | None:
    """Return a variant's `title` (quoted) when its schema path can be walked without `$ref`."""
    node = schema
    for token in schema_path:
        in_object = isinstance(node, dict) and token in node
        in_array = isinstance(node, list) and isinstance(token, int) and 0 <= token < len(node)
        if not (in_object or in_array):
            return None
        node = node[token]
    title = node.get("title") if isinstance(node, dict) else None
    return f'"{_cut(title, MAX_SHOWN)}"' if isinstance(title, str) and title else None


_PER_MEMBER: dict[str, Callable[[Any, list[Any], Any], list[Violation]]] = {
    "Required": lambda k, p, e: [(to_pointer([*p, k.property]), f"{k.property!r} is required")],
    "AdditionalProperties": lambda k, p, e: [
        (to_pointer([*p, name]), f"{name!r} is not an allowed property") for name in k.unexpected],
    "UnevaluatedProperties": lambda k, p, e: [
        (to_pointer([*p, name]), f"{name!r} is not an allowed property") for name in k.unexpected],
    "UnevaluatedItems": lambda k, p, e: [
        (to_pointer(p), f"expected at most {_plural(len(e.instance) - len(k.unexpected), 'item')}"
                        f", got {len(e.instance)}")],
    "PropertyNames": _property_names,
}
"""Kinds that point below the instance: at the missing property, at each extra one."""
