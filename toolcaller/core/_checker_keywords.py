"""Keyword compilers for `checker`: each JSON Schema keyword becomes a small exact predicate."""

from __future__ import annotations

import operator
import re
import sys
import warnings
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from itertools import islice
from numbers import Number
from typing import Any, Protocol

__all__ = [
    "BOUNDS",
    "GROUPS",
    "GROUP_TYPES",
    "MEMBER_KEYWORDS",
    "TYPES",
    "Compiler",
    "Keyword",
    "Predicate",
    "Unsupported",
    "accept",
    "conjoin",
    "disjoin",
    "members",
    "number",
    "property_names",
    "reject",
    "schema_list",
    "type_names",
]

Predicate = Callable[[Any], bool]
Keyword = Callable[["Compiler", Any, dict[str, Any]], Predicate | None]


class Unsupported(Exception):
    """The schema uses something this module cannot check exactly as jsonschema does."""


class Compiler(Protocol):
    """What keyword compilers need from the schema compiler in `checker`."""

    draft7: bool
    validators: frozenset[str]
    equal: Callable[[Any, Any], bool]
    uniq: Callable[[Any], bool]
    may_raise: bool
    """Set when a keyword makes jsonschema raise on some instances (see `checker`)."""

    def inplace(self, schema: object) -> Predicate:
        """Compile a subschema applied to the same instance (allOf, not, if, ...)."""

    def descend(self, schema: object) -> Predicate:
        """Compile a subschema applied to a part of the instance (an item, a property)."""

    def ref(self, ref: object) -> Predicate:
        """Compile the target of a `$ref`."""

    def branches(self, schemas: object) -> list[Predicate]:
        """Compile the branches of anyOf or oneOf."""


def accept(_instance: Any) -> bool:
    """Accept everything (the `true` schema)."""
    return True


def reject(_instance: Any) -> bool:
    """Reject everything (the `false` schema)."""
    return False


def conjoin(checks: list[Predicate]) -> Predicate:
    """Combine predicates with `and`, with the common short lengths unrolled for speed."""
    checks = [check for check in checks if check is not accept]
    if reject in checks:
        return reject
    if len(checks) <= 1:
        return checks[0] if checks else accept
    if len(checks) == 2:
        first, second = checks
        return lambda x: first(x) and second(x)
    group = tuple(checks)

    def check_all(x: Any) -> bool:
        for check in group:  # noqa: SIM110 - a plain loop beats all() over a generator
            if not check(x):
                return False
        return True

    return check_all


def _is_number(x: Any) -> bool:
    kind = type(x)  # exact-type fast path; the ABC check covers Decimal, Fraction, subclasses
    return kind is int or kind is float or (kind is not bool and isinstance(x, Number))


def _is_integer(x: Any) -> bool:
    kind = type(x)
    if kind is int:
        return True
    if kind is float:
        return bool(x.is_integer())
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


TYPES: dict[str, Predicate] = {
    "array": list.__instancecheck__,
    "boolean": bool.__instancecheck__,
    "integer": _is_integer,
    "null": partial(operator.is_, None),
    "number": _is_number,
    "object": dict.__instancecheck__,
    "string": str.__instancecheck__,
}
"""jsonschema's draft 6+ type checker: bool is never a number, 1.0 is an integer."""
GROUP_TYPES = {
    "object": {"object"},
    "array": {"array"},
    "string": {"string"},
    "number": {"number", "integer"},
}
"""The types each keyword group looks at; other instances pass that group untouched."""


def type_names(value: object) -> frozenset[str]:
    """Return the names a `type` keyword allows."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(name in TYPES for name in names):
        raise Unsupported(f"type {value!r}")  # jsonschema raises UnknownType on use
    return frozenset(names)


def disjoin(checks: list[Predicate]) -> Predicate:
    """Combine predicates with `or` (none: reject everything)."""
    if not checks:
        return reject
    if len(checks) == 1:
        return checks[0]
    group = tuple(checks)
    return lambda x: any(check(x) for check in group)


def number(value: object) -> int | float:
    """Return `value` if it is a number: bools and strings are not, as everywhere in JSON."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Unsupported(f"expected a number, got {value!r}")
    return value


def schema_list(value: object) -> list[Any]:
    """Return `value` if it is a list (of schemas, or of enum values)."""
    if not isinstance(value, list):
        raise Unsupported(f"expected a list of schemas, got {value!r}")
    return value


def _regex(pattern: object) -> Callable[[str], object]:
    if not isinstance(pattern, str):
        raise Unsupported(f"pattern {pattern!r}")
    # A pattern Python warns about is left to jsonschema (warnings.catch_warnings is
    # process-wide, acceptable here: compiling happens once per tool).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return re.compile(pattern).search  # jsonschema uses re.search: same cache, same flags


def _length_bound(fails: Callable[[Any, Any], bool]) -> Keyword:
    """Make a keyword that rejects when `fails(len(instance), bound)`, as jsonschema does."""

    def keyword(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
        bound = number(value)
        return lambda x: not fails(len(x), bound)

    return keyword


# --- numbers, strings, arrays, objects: each runs only on instances of its JSON type -----

_FLOAT_MAX = int(sys.float_info.max)  # a larger int step makes `float % step` overflow


def _multiple_of(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
    step = number(value)
    if isinstance(step, int) and step and abs(step) <= _FLOAT_MAX:
        return lambda x: not x % step
    c.may_raise = True  # jsonschema raises on NaN, inf or huge ints (or on all, for a 0 step)
    if isinstance(step, int):
        return lambda x: not x % step
    return partial(_is_float_multiple, step=step)


def _is_float_multiple(x: Any, step: float) -> bool:
    quotient = x / step  # same steps as jsonschema's multipleOf, so the same float rounding
    try:
        failed = int(quotient) != quotient
    except OverflowError:
        failed = (Fraction(x) / Fraction(step)).denominator != 1
    return not failed


def _pattern(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
    search = _regex(value)
    return lambda x: search(x) is not None


def _tail(check: Predicate, start: int) -> Predicate | None:
    """Check every item from index `start` on."""
    if check is accept:
        return None
    if check is reject:
        return lambda x: len(x) <= start
    if start == 0:
        return lambda x: all(map(check, x))
    return lambda x: all(map(check, islice(x, start, None)))


def _prefix(c: Compiler, schemas: Any) -> Predicate:
    checks = tuple(c.descend(schema) for schema in schema_list(schemas))

    def check_prefix(x: Any) -> bool:
        for check, item in zip(checks, x, strict=False):  # noqa: SIM110 - faster loop
            if not check(item):
                return False
        return True

    return check_prefix


def _items(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate | None:
    if c.draft7 and isinstance(value, list):
        return _prefix(c, value)
    start = 0 if c.draft7 else len(schema_list(s.get("prefixItems", [])))
    return _tail(c.descend(value), start)


def _prefix_items(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
    return _prefix(c, value)


def _additional_items(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate | None:
    items = s.get("items", {})
    if isinstance(items, dict):
        return None  # jsonschema ignores additionalItems unless items is a list
    if not isinstance(items, list):
        raise Unsupported("additionalItems next to a non-list items")  # jsonschema raises
    if value is True:
        return None
    return _tail(c.descend(value), len(items))


def _unique_items(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate | None:
    if not isinstance(value, bool):
        raise Unsupported(f"uniqueItems {value!r}")
    return c.uniq if value else None  # jsonschema's own uniq: its sort-based shortcut included


def _contains(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
    check = c.descend(value)
    if c.draft7:
        return lambda x: any(map(check, x))
    low = number(s.get("minContains", 1))
    high = number(s["maxContains"]) if "maxContains" in s else None

    def check_contains(x: Any) -> bool:
        top = len(x) if high is None else high
        matches = 0
        for item in x:  # counts past minContains like jsonschema, stops over maxContains
            if check(item):
                matches += 1
                if matches > top:
                    return False
        return not matches < low

    return check_contains


def property_names(value: object) -> frozenset[str]:
    """Return the names listed by `required` (or a dependency)."""
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise Unsupported(f"expected a list of property names, got {value!r}")
    return frozenset(value)


def _when_present(pairs: list[tuple[str, Predicate]]) -> Predicate | None:
    """Apply each predicate to the whole object when its property is present."""
    pairs = [(name, check) for name, check in pairs if check is not accept]
    if not pairs:
        return None
    group = tuple(pairs)
    return lambda x: all(check(x) for name, check in group if name in x)


def _has_all(names: frozenset[str]) -> Predicate:
    return lambda x: x.keys() >= names


def _dependent_required(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate | None:
    return _when_present(
        [(name, _has_all(property_names(v))) for name, v in _mapping(value).items()]
    )


def _dependent_schemas(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate | None:
    return _when_present([(name, c.inplace(v)) for name, v in _mapping(value).items()])


def _dependencies(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate | None:
    pairs = [
        (name, _has_all(property_names(v)) if isinstance(v, list) else c.inplace(v))
        for name, v in _mapping(value).items()
    ]
    return _when_present(pairs)


def _mapping(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Unsupported(f"expected an object, got {value!r}")
    return value


def _properties(c: Compiler, s: dict[str, Any]) -> dict[str, Predicate]:
    return {name: c.descend(v) for name, v in _mapping(s.get("properties", {})).items()}


def _pattern_properties(c: Compiler, s: dict[str, Any]) -> list[tuple[Any, Predicate]]:
    patterns = _mapping(s.get("patternProperties", {}))
    return [(_regex(pattern), c.descend(v)) for pattern, v in patterns.items()]


def _additional(c: Compiler, s: dict[str, Any]) -> tuple[Predicate | None, Any]:
    """Compile additionalProperties and the one regex jsonschema uses to find extra names."""
    if "additionalProperties" not in s:
        return None, None
    value = s["additionalProperties"]
    check = None if value is True else c.descend(value)
    # jsonschema joins the patterns into one regex, whose meaning can differ from each alone.
    joined = "|".join(_mapping(s.get("patternProperties", {})))
    return check, _regex(joined) if joined else None


def members(
    c: Compiler, s: dict[str, Any], required: frozenset[str], on_other: bool
) -> Predicate | None:
    """Compile required and the property keywords into one pass over an object.

    The predicate returns `on_other` for non-objects: False when `type` is "object".
    """
    props = _properties(c, s)
    patterns = tuple(pair for pair in _pattern_properties(c, s) if pair[1] is not accept)
    extra, joined = _additional(c, s)
    names = c.descend(s["propertyNames"]) if "propertyNames" in s else accept
    if patterns or names is not accept or joined is not None:
        return partial(
            _check_members, required=required, on_other=on_other, props=props,
            patterns=patterns, joined=joined, extra=extra, names=names,
        )  # fmt: skip
    if extra is None:
        props = {name: check for name, check in props.items() if check is not accept}
        if not props:
            return _has_required(required, on_other) if required or not on_other else None
        return _open_members(props, tuple(required), on_other)
    return _closed_members(props, extra, tuple(required), on_other)


def _has_required(required: frozenset[str], on_other: bool) -> Predicate:
    return lambda x: x.keys() >= required if isinstance(x, dict) else on_other


def _open_members(
    props: dict[str, Predicate], required: tuple[str, ...], on_other: bool
) -> Predicate:
    get = props.get

    def check_open(x: Any) -> bool:
        if not isinstance(x, dict):
            return on_other
        for name in required:  # a loop beats `x.keys() >= required` for a few names
            if name not in x:
                return False
        for name, item in x.items():
            check = get(name)
            if check is not None and not check(item):
                return False
        return True

    return check_open


def _closed_members(
    props: dict[str, Predicate], extra: Predicate, required: tuple[str, ...], on_other: bool
) -> Predicate:
    get = props.get

    def check_closed(x: Any) -> bool:
        if not isinstance(x, dict):
            return on_other
        for name in required:  # a loop beats `x.keys() >= required` for a few names
            if name not in x:
                return False
        for name, item in x.items():  # noqa: SIM110 - a plain loop beats all() over a generator
            if not get(name, extra)(item):
                return False
        return True

    return check_closed


def _check_members(
    x: Any,
    *,
    required: frozenset[str],
    on_other: bool,
    props: dict[str, Predicate],
    patterns: tuple[tuple[Any, Predicate], ...],
    joined: Any,
    extra: Predicate | None,
    names: Predicate,
) -> bool:
    if not isinstance(x, dict):
        return on_other
    if not x.keys() >= required:
        return False
    for name, item in x.items():
        if not names(name):
            return False
        check = props.get(name)
        if check is not None and not check(item):
            return False
        for search, pattern_check in patterns:
            if search(name) and not pattern_check(item):
                return False
        if extra is None or check is not None or (joined is not None and joined(name)):
            continue
        if not extra(item):
            return False
    return True


BOUNDS = {
    "number": {
        "minimum": operator.lt,
        "maximum": operator.gt,
        "exclusiveMinimum": operator.le,
        "exclusiveMaximum": operator.ge,
    },
    "string": {"minLength": operator.lt, "maxLength": operator.gt},
}
"""Bound keywords by group, each with the comparison by which jsonschema rejects a value (or
length); `checker` folds them into one closure with the type check."""

MEMBER_KEYWORDS = ("properties", "patternProperties", "additionalProperties", "propertyNames")
"""The object keywords `members` compiles together into one pass over the instance."""

GROUPS: dict[str, dict[str, Keyword]] = {
    "object": {
        "minProperties": _length_bound(operator.lt),
        "maxProperties": _length_bound(operator.gt),
        "dependentRequired": _dependent_required,
        "dependentSchemas": _dependent_schemas,
        "dependencies": _dependencies,
    },
    "array": {
        "items": _items,
        "prefixItems": _prefix_items,
        "additionalItems": _additional_items,
        "minItems": _length_bound(operator.lt),
        "maxItems": _length_bound(operator.gt),
        "uniqueItems": _unique_items,
        "contains": _contains,
    },
    "string": {"pattern": _pattern},
    "number": {"multipleOf": _multiple_of},
}
"""Keywords by the JSON type they look at, besides `members` and the `BOUNDS`."""
