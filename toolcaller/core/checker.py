"""Compile a JSON Schema into a fast predicate that answers exactly as jsonschema's `is_valid`.

jsonschema stays the reference and still lists the violations; schemas using anything compiled
here inexactly give no predicate at all, so the engine then always uses jsonschema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import unquote

from toolcaller._types import Schema
from toolcaller.core._checker_keywords import (
    BOUNDS,
    GROUP_TYPES,
    GROUPS,
    MEMBER_KEYWORDS,
    TYPES,
    Compiler,
    Keyword,
    Predicate,
    Unsupported,
    accept,
    conjoin,
    disjoin,
    members,
    number,
    property_names,
    reject,
    schema_list,
    type_names,
)
from toolcaller.core._json_equality import (
    DRAFT7,
    DRAFT7_KEYWORDS,
    DRAFT202012_KEYWORDS,
    draft_of,
    equal,
    uniq,
)

__all__ = ["compile_checker", "schema_draft"]

_COMPILE_ERRORS = (
    Unsupported,
    ImportError,  # jsonschema moved its private `equal`/`uniq`: no fast path, still correct
    Warning,
    re.error,
    RecursionError,
    LookupError,
    TypeError,
    ValueError,
)
"""What compiling a malformed schema can raise; all of them mean "leave it to jsonschema"."""
_INSTANCE_ERRORS = (RecursionError, ArithmeticError, TypeError, ValueError)
"""What jsonschema itself raises on some instances (a float multipleOf of NaN or of a huge int,
too deep a nesting); the predicate answers False there so the caller runs jsonschema."""


def schema_draft(schema: Schema) -> type:
    """Return the jsonschema validator class for `schema`: its `$schema`, else draft 2020-12."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for

    validator: type = validator_for(schema, default=Draft202012Validator)
    return validator


def compile_checker(schema: Schema) -> Callable[[object], bool] | None:
    """Compile a schema into a fast predicate, or None if it uses a keyword not compiled here.

    The predicate is exact: True means jsonschema (the validator class `schema_draft` picks,
    without format checking) finds the instance valid, False that it does not, or that
    jsonschema would raise on it. The predicate never raises; it reads the schema as it was
    when compiled. Draft 7 and draft 2020-12 schemas are compiled; `$ref` must be local.

    Args:
        schema: a JSON Schema; anything malformed gives None rather than an error.
    """
    try:
        check = _SchemaCompiler.for_root(schema).compile_root()
    except _COMPILE_ERRORS:
        return None

    def is_valid(instance: object) -> bool:
        try:
            return check(instance)
        except _INSTANCE_ERRORS:
            return False

    return is_valid


class _SchemaCompiler:
    """Compiles one root schema, each `$ref` target once, so recursive schemas work."""

    def __init__(self, root: object, draft: str) -> None:
        self.root = root
        self.draft7 = draft == DRAFT7
        self.validators = DRAFT7_KEYWORDS if self.draft7 else DRAFT202012_KEYWORDS
        self.equal: Callable[[Any, Any], bool] = equal
        self.uniq: Callable[[Any], bool] = uniq
        self._targets: dict[int, Predicate] = {}
        self._inplace_refs: dict[int, set[int]] = {}
        """For each `$ref` target, the targets it reaches without descending into the instance."""
        self._owner: int | None = None
        self.may_raise = False
        self._branches = False

    @classmethod
    def for_root(cls, root: object) -> _SchemaCompiler:
        """Check the draft and base URIs of `root`, and start a compiler for it."""
        if not isinstance(root, dict | bool):
            raise Unsupported(f"schema {root!r}")
        draft = draft_of(root)
        if draft is None:
            raise Unsupported(f"$schema {root.get('$schema')!r}")  # type: ignore[union-attr]
        if isinstance(root, dict):
            if not isinstance(root.get("$id", ""), str):
                raise Unsupported(f"$id {root['$id']!r}")
            _reject_ids_below(root)
        return cls(root, draft)

    def compile_root(self) -> Predicate:
        """Compile the root schema."""
        check = self._target(self.root)
        if _has_cycle(self._inplace_refs):
            # jsonschema could recurse forever on the same instance; leave that to it.
            raise Unsupported("a $ref cycle that never descends into the instance")
        if self.may_raise and self._branches:
            # anyOf/oneOf collect every error of a failing branch, so jsonschema can raise on a
            # keyword this predicate skips after the branch's first failure.
            raise Unsupported("anyOf or oneOf next to a multipleOf jsonschema may raise on")
        return check

    def branches(self, schemas: object) -> list[Predicate]:
        """Compile the branches of anyOf or oneOf."""
        self._branches = True
        return [self.inplace(schema) for schema in schema_list(schemas)]

    def inplace(self, schema: object) -> Predicate:
        """Compile a subschema applied to the same instance (allOf, not, if, ...)."""
        if schema is True or schema is False:
            return accept if schema else reject
        if not isinstance(schema, dict):
            raise Unsupported(f"schema {schema!r}")
        if self.draft7 and schema.get("$ref") is not None:
            return self.ref(schema["$ref"])  # draft 7: `$ref` overrides its siblings
        return _compile_keywords(self, schema)

    def descend(self, schema: object) -> Predicate:
        """Compile a subschema applied to a part of the instance (an item, a property)."""
        owner, self._owner = self._owner, None
        try:
            return self.inplace(schema)
        finally:
            self._owner = owner

    def ref(self, ref: object) -> Predicate:
        """Compile the target of a `$ref`."""
        target = _resolve(self.root, ref)
        if self._owner is not None:
            self._inplace_refs[self._owner].add(id(target))
        return self._target(target)

    def _target(self, target: object) -> Predicate:
        key = id(target)  # targets live inside root, so their ids stay unique while compiling
        known = self._targets.get(key)
        if known is not None:
            return known
        cell: list[Predicate] = []
        self._targets[key] = lambda x: cell[0](x)  # what recursive refs call until compiled
        self._inplace_refs[key] = set()
        owner, self._owner = self._owner, key
        try:
            check = self.inplace(target)
        finally:
            self._owner = owner
        cell.append(check)
        self._targets[key] = check
        return check


_NAME_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_DATA_KEYWORDS = ("enum", "const", "default", "examples")


def _reject_nested_ids(node: object) -> None:
    """Refuse `$id` and `$schema` below the root: they would move where `$ref`s point.

    Only schema positions count: a property *named* `$schema` is a name, and `enum`,
    `const`, `default` and `examples` hold data, not schemas.
    """
    if isinstance(node, dict):
        if "$id" in node or "$schema" in node:
            raise Unsupported("$id or $schema below the root")
        _reject_ids_below(node)
    elif isinstance(node, list):
        for value in node:
            _reject_nested_ids(value)


def _reject_ids_below(node: dict[str, Any]) -> None:
    for key, value in node.items():
        if key in _DATA_KEYWORDS:
            continue
        if key in _NAME_MAPS and isinstance(value, dict):
            for sub in value.values():
                _reject_nested_ids(sub)
        else:
            _reject_nested_ids(value)


def _resolve(root: object, ref: object) -> object:
    """Follow a local `$ref` the way the `referencing` library does."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise Unsupported(f"$ref {ref!r}")  # remote references are left to jsonschema
    pointer = ref[1:]
    if not pointer:
        return root
    if not pointer.startswith("/"):
        raise Unsupported(f"$ref {ref!r}")  # an anchor
    node: Any = root
    for segment in unquote(pointer[1:]).split("/"):
        if isinstance(node, Sequence):
            node = node[int(segment)]
        else:
            node = node[segment.replace("~1", "/").replace("~0", "~")]
    return node


def _has_cycle(edges: dict[int, set[int]]) -> bool:
    done: set[int] = set()

    def visit(node: int, path: set[int]) -> bool:
        if node in path:
            return True
        if node in done:
            return False
        path.add(node)
        found = any(visit(after, path) for after in edges.get(node, ()))
        path.discard(node)
        done.add(node)
        return found

    return any(visit(node, set()) for node in list(edges))


def _compile_keywords(c: _SchemaCompiler, schema: dict[str, Any]) -> Predicate:
    """Compile the keywords of one schema object into a single predicate."""
    check = _compile_all(c, schema)
    keywords = {key for key in schema if key in c.validators} - {"format"}
    values = schema.get("enum")
    if keywords != {"type", "enum"} or schema["type"] != "string" or not isinstance(values, list):
        return check
    if not all(type(value) is str for value in values):
        return check
    # Literal[...] and Enum params: one set lookup settles a str, as type + enum would.
    strings = frozenset(values)
    return lambda x: x in strings if type(x) is str else check(x)


def _compile_all(c: _SchemaCompiler, schema: dict[str, Any]) -> Predicate:
    missing = [key for key in schema if key in c.validators and key not in _HANDLED]
    if missing:
        raise Unsupported(f"keywords {missing!r}")
    types = type_names(schema["type"]) if "type" in schema else None
    type_check = disjoin([TYPES[name] for name in types]) if types is not None else None
    checks: list[Predicate] = []
    for group, group_types in GROUP_TYPES.items():
        if types is None:
            checks += _compile_group(c, schema, group, None)
        elif types & group_types:  # else `type` already rejects what this group looks at
            typed = type_check if types <= group_types else None
            checks += _compile_group(c, schema, group, typed)
            type_check = None if typed else type_check  # the group checks the type itself
    head = [type_check] if type_check is not None else []
    return conjoin(head + checks + _keyword_checks(c, schema, _ANY))


def _bounds_head(group: str, typed: Predicate | None, bounds: list[tuple[Any, Any]]) -> Predicate:
    """Check the type (when `typed`) and the bounds in one closure: tool params are full of them."""
    is_type = typed or TYPES[group]
    if typed is not None and len(bounds) <= 2:
        (low, a), (high, b) = (bounds * 2)[:2]  # a single bound is simply checked twice
        if group == "string":
            return lambda x: is_type(x) and not low(len(x), a) and not high(len(x), b)
        # An int is a number and an integer: skip the type check call for the commonest case.
        return lambda x: (type(x) is int or is_type(x)) and not low(x, a) and not high(x, b)
    sized, on_other = group == "string", typed is None

    def check_bounds(x: Any) -> bool:
        if not is_type(x):
            return on_other
        value = len(x) if sized else x
        for fails, bound in bounds:  # noqa: SIM110 - a plain loop beats all() over a generator
            if fails(value, bound):
                return False
        return True

    return check_bounds


def _group_checks(
    c: Compiler, s: dict[str, Any], group: str, typed: Predicate | None
) -> list[Predicate]:
    checks = _keyword_checks(c, s, GROUPS[group])
    if typed is not None:
        return [typed, *checks]
    return [_guarded(TYPES[group], conjoin(checks))] if checks else []


def _guarded(guard: Predicate, body: Predicate) -> Predicate:
    return lambda x: not guard(x) or body(x)


def _compile_group(
    c: Compiler, s: dict[str, Any], group: str, typed: Predicate | None
) -> list[Predicate]:
    """Compile the keywords of one group ("object", "array", "string" or "number").

    Args:
        c: the schema compiler.
        s: the schema object.
        group: the group name, a key of `GROUPS`.
        typed: the schema's type check when `type` names only this group's types: the checks
            then include it. Without it, instances of other types pass.
    """
    if group == "object" and any(key in s for key in (*MEMBER_KEYWORDS, "required")):
        required = property_names(s["required"]) if "required" in s else frozenset()
        head = members(c, s, required, on_other=typed is None)
        if head is not None:
            others = _group_checks(c, s, group, None)  # each already lets non-objects through
            return [head, *others]
    if group in BOUNDS:
        bounds = [(fails, number(s[key])) for key, fails in BOUNDS[group].items() if key in s]
        if bounds:
            return [_bounds_head(group, typed, bounds), *_group_checks(c, s, group, None)]
    return _group_checks(c, s, group, typed)


def _keyword_checks(c: Compiler, s: dict[str, Any], table: dict[str, Keyword]) -> list[Predicate]:
    """Compile the keywords of `s` found in `table` and in the draft's vocabulary."""
    checks = []
    for key, value in s.items():
        # Only the draft's own keywords: draft 7 ignores prefixItems, 2020-12 dependencies.
        if key in table and key in c.validators:
            check = table[key](c, value, s)
            if check is not None:
                checks.append(check)
    return checks


_SCALARS = (str, int, float, type(None))  # exact types; bools are kept apart (True != 1 here)
_JSON_TYPES = (*_SCALARS, bool, list, dict)


def _one_of_values(c: Compiler, values: list[Any]) -> Predicate:
    """Match jsonschema's `equal` against each value, with hash lookups for scalars."""
    equal, options = c.equal, tuple(values)
    if not all(type(value) in _JSON_TYPES for value in values):
        return lambda x: any(equal(value, x) for value in options)
    # Hashing agrees with `equal` here: 1 == 1.0, a NaN only equals itself, and bools are
    # looked up among bools only, so True never matches 1.
    scalars = frozenset(value for value in values if type(value) in _SCALARS)
    bools = frozenset(value for value in values if type(value) is bool)

    def check_value(x: Any) -> bool:
        kind = type(x)
        if kind in _SCALARS:
            return x in scalars
        if kind is bool:
            return x in bools
        return any(equal(value, x) for value in options)

    return check_value


def _enum(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
    return _one_of_values(c, schema_list(value))


def _const(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
    return _one_of_values(c, [value])


def _all_of(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
    return conjoin([c.inplace(schema) for schema in schema_list(value)])


def _any_of(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
    return disjoin(c.branches(value))


def _one_of(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
    checks = tuple(c.branches(value))

    def check_one(x: Any) -> bool:
        found = False
        for check in checks:
            if check(x):
                if found:
                    return False
                found = True
        return found

    return check_one


def _not(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
    check = c.inplace(value)
    return lambda x: not check(x)


def _if(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
    condition = c.inplace(value)
    then = c.inplace(s["then"]) if "then" in s else accept
    otherwise = c.inplace(s["else"]) if "else" in s else accept
    return lambda x: then(x) if condition(x) else otherwise(x)


def _ref(c: Compiler, value: Any, s: dict[str, Any]) -> Predicate:
    return c.ref(value)


def _annotation(c: Compiler, value: Any, s: dict[str, Any]) -> None:
    return None  # `format` only annotates unless a format checker is given


_ANY: dict[str, Keyword] = {
    "enum": _enum,
    "const": _const,
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "not": _not,
    "if": _if,
    "$ref": _ref,
    "format": _annotation,
}
"""Keywords that look at any instance."""
_HANDLED = frozenset(
    [*_ANY, *MEMBER_KEYWORDS, "required", "type"]
    + [key for table in GROUPS.values() for key in table]
    + [key for table in BOUNDS.values() for key in table]
)
"""Every keyword compiled here; a draft's other keywords make `compile_checker` give None."""
