"""Tests for toolcaller.core.checker: the compiled predicate agrees with jsonschema exactly."""

from __future__ import annotations

import math
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.validators import validator_for

from toolcaller.core.checker import compile_checker, schema_draft

DRAFT7 = "http://json-schema.org/draft-07/schema#"
DRAFT2020 = "https://json-schema.org/draft/2020-12/schema"
SLOW = [HealthCheck.too_slow]
DRAFTS = pytest.mark.parametrize("draft", [DRAFT2020, DRAFT7], ids=["2020-12", "draft-07"])


def jsonschema_is_valid(schema: Any, instance: Any) -> bool | None:
    """jsonschema's verdict, None when it raises instead (the predicate then says False)."""
    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        return bool(cls(schema).is_valid(instance))
    except Exception:  # malformed schemas and odd instances make jsonschema raise anything
        return None


def with_draft(schema: Any, draft: str) -> Any:
    return {"$schema": draft, **schema} if isinstance(schema, dict) else schema


def assert_agrees(schema: Any, instance: Any) -> bool:
    check = compile_checker(schema)
    assert check is not None, schema
    expected = jsonschema_is_valid(schema, instance)
    assert check(instance) is (expected is True), (schema, instance)
    return check(instance)


# (id, schema, valid instances, invalid instances): each runs under both drafts.
TABLE: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("true", True, [1, None, {"a": []}], []),
    ("false", False, [], [1, None, {}]),
    ("empty", {}, [1, "x", [], {}], []),
    ("type-string", {"type": "string"}, ["", "é"], [1, None, b"x", ["a"]]),
    ("type-integer", {"type": "integer"}, [1, -3, 1.0, 10**40], [1.5, True, "1", math.nan]),
    ("type-number", {"type": "number"}, [1, 1.5, math.inf, math.nan], [True, False, "1", None]),
    ("type-boolean", {"type": "boolean"}, [True, False], [0, 1, None]),
    ("type-null", {"type": "null"}, [None], [0, False, ""]),
    ("type-array", {"type": "array"}, [[], [1]], [(), {}, "ab"]),
    ("type-object", {"type": "object"}, [{}, {"a": 1}], [[], None]),
    ("type-list", {"type": ["string", "null"]}, ["a", None], [1, []]),
    ("type-empty-list", {"type": []}, [], [1, None]),
    (
        "properties",
        {"properties": {"a": {"type": "integer"}}},
        [{}, {"a": 1}, {"b": "x"}, 3],
        [{"a": "x"}],
    ),
    ("required", {"required": ["a", "b"]}, [{"a": 1, "b": 2}, "x", []], [{"a": 1}, {}]),
    (
        "additional-false",
        {"properties": {"a": {}}, "additionalProperties": False},
        [{"a": 1}, {}],
        [{"b": 1}, {"a": 1, "b": 2}],
    ),
    (
        "additional-schema",
        {"properties": {"a": {}}, "additionalProperties": {"type": "string"}},
        [{"a": 1, "b": "x"}],
        [{"b": 1}],
    ),
    (
        "pattern-properties",
        {"patternProperties": {"^x": {"type": "integer"}}},
        [{"x1": 1, "y": "s"}],
        [{"x1": "s"}],
    ),
    (
        "pattern-and-additional",
        {"patternProperties": {"^x": {}, "y$": {}}, "additionalProperties": False},
        [{"x1": 1, "ay": 2}],
        [{"z": 1}],
    ),
    (
        "joined-patterns-differ",
        {"patternProperties": {"(a)\\1": {}, "(b)\\1": {}}, "additionalProperties": False},
        [{"aa": 1}],
        [{"bb": 1}],
    ),
    (
        "empty-pattern-is-no-pattern",
        {"patternProperties": {"": {}}, "additionalProperties": False},
        [{}],
        [{"a": 1}],
    ),
    ("property-names", {"propertyNames": {"maxLength": 2}}, [{"ab": 1}], [{"abc": 1}]),
    (
        "min-max-properties",
        {"minProperties": 1, "maxProperties": 2},
        [{"a": 1}, []],
        [{}, {"a": 1, "b": 2, "c": 3}],
    ),
    (
        "enum",
        {"enum": [1, "a", None, [1, 2], {"k": True}]},
        [1, 1.0, "a", None, [1, 2], [1.0, 2], {"k": True}],
        [True, "b", [2, 1], {"k": 1}],
    ),
    ("enum-bools", {"enum": [True, 0]}, [True, 0, 0.0], [1, False]),
    ("string-enum", {"type": "string", "enum": ["a", "b"]}, ["a", "b"], ["c", 1, None, ["a"]]),
    ("const", {"const": False}, [False], [0, 0.0, None]),
    ("const-list", {"const": [True]}, [[True]], [[1], [1.0]]),
    ("minimum", {"minimum": 2}, [2, 2.5, "x"], [1, 1.99, -math.inf]),
    ("maximum", {"maximum": 2.5}, [2, 2.5, math.nan], [3, math.inf]),
    ("exclusive-minimum", {"exclusiveMinimum": 2}, [2.01, 3], [2, 1]),
    ("exclusive-maximum", {"exclusiveMaximum": 2}, [1.99], [2, 10**30]),
    ("range", {"type": "integer", "minimum": 1, "maximum": 3}, [1, 3, 2.0], [0, 4, 2.5, "2"]),
    ("multiple-of-int", {"multipleOf": 3}, [0, 9, 9.0, -3], [1, 9.5, math.inf]),
    ("multiple-of-float", {"multipleOf": 0.1}, [0.5, 1, 0.2], [0.35, 0.3]),
    ("multiple-of-float-huge", {"multipleOf": 0.5}, [10**20, 1e300], [10**400, math.nan]),
    ("multiple-of-huge-int", {"multipleOf": 10**400}, [0, 10**401], [1, 0.5]),
    ("min-length", {"minLength": 2}, ["ab", "éé", 1], ["a", ""]),
    ("max-length", {"maxLength": 1}, ["é", "", 12], ["ab"]),
    ("pattern", {"pattern": "b+"}, ["abbc", 5], ["ac"]),
    ("pattern-anchored", {"pattern": "^a$"}, ["a"], ["ba", "a\nb"]),
    ("items-schema", {"items": {"type": "integer"}}, [[], [1, 2], "x"], [[1, "a"]]),
    ("items-false", {"items": False}, [[], {}], [[1]]),
    ("min-max-items", {"minItems": 1, "maxItems": 2}, [[1], [1, 2]], [[], [1, 2, 3]]),
    (
        "unique-items",
        {"uniqueItems": True},
        [[1, 2], [1, True], [0, False], [[1], [True]]],
        [[1, 1.0], [{"a": 1}, {"a": 1.0}], [[1], [1]]],
    ),
    ("unique-items-false", {"uniqueItems": False}, [[1, 1]], []),
    ("contains", {"contains": {"type": "string"}}, [["a"], [1, "b"], 3], [[], [1]]),
    ("all-of", {"allOf": [{"minimum": 1}, {"maximum": 2}]}, [1, 2], [0, 3]),
    ("any-of", {"anyOf": [{"type": "string"}, {"minimum": 5}]}, ["a", 6], [1]),
    ("any-of-empty", {"anyOf": []}, [], [1]),
    ("one-of", {"oneOf": [{"minimum": 1}, {"maximum": 3}]}, [0, 5], [2]),
    ("not", {"not": {"type": "string"}}, [1], ["a"]),
    (
        "if-then-else",
        {"if": {"type": "integer"}, "then": {"minimum": 1}, "else": {"type": "string"}},
        [1, "a"],
        [0, None],
    ),
    ("then-without-if", {"then": False}, [1], []),
    (
        "ref-defs",
        {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
        [{"a": 1}],
        [{"a": "x"}],
    ),
    (
        "ref-definitions",
        {"definitions": {"n": {"type": "integer"}}, "items": {"$ref": "#/definitions/n"}},
        [[1]],
        [["x"]],
    ),
    (
        "ref-escaped",
        {"$defs": {"a/b~c d": {"type": "null"}}, "items": {"$ref": "#/$defs/a~1b~0c%20d"}},
        [[None]],
        [[1]],
    ),
    (
        "ref-recursive",
        {
            "type": "object",
            "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}},
            "additionalProperties": False,
        },
        [{}, {"kids": [{"kids": []}]}],
        [{"kids": [{"x": 1}]}],
    ),
    (
        "ref-into-list",
        {"anyOf": [{"type": "null"}, {"items": {"$ref": "#/anyOf/0"}}]},
        [None, [None]],
        [[1]],
    ),
    (
        "root-id",
        {
            "$id": "https://example.com/s.json",
            "$defs": {"s": {"type": "string"}},
            "items": {"$ref": "#/$defs/s"},
        },
        [["a"]],
        [[1]],
    ),
    ("format-is-annotation", {"format": "email", "title": "t", "x-custom": 1}, ["nope"], []),
]


class TestKeywords:
    @DRAFTS
    @pytest.mark.parametrize(
        ("schema", "valid", "invalid"), [row[1:] for row in TABLE], ids=[row[0] for row in TABLE]
    )
    def test_table(self, draft: str, schema: Any, valid: list[Any], invalid: list[Any]) -> None:
        """Each keyword accepts and rejects exactly what jsonschema does, under both drafts."""
        schema = with_draft(schema, draft)
        for instance in valid:
            assert assert_agrees(schema, instance) is True, instance
        for instance in invalid:
            assert assert_agrees(schema, instance) is False, instance


# (id, schema, valid, invalid): the keywords whose meaning depends on the draft.
DRAFT_TABLE: list[tuple[str, Any, list[Any], list[Any]]] = [
    (
        "2020-prefix-items",
        {"prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
        [["a", 1], [], ["a"]],
        [[1], ["a", "b"]],
    ),
    ("2020-prefix-items-false", {"prefixItems": [{}], "items": False}, [[1]], [[1, 2]]),
    (
        "2020-min-max-contains",
        {"contains": {"type": "string"}, "minContains": 2, "maxContains": 3},
        [["a", "b"], ["a", 1, "b"]],
        [["a"], ["a", "b", "c", "d"]],
    ),
    ("2020-min-contains-zero", {"contains": {"type": "string"}, "minContains": 0}, [[], [1]], []),
    (
        "2020-ref-siblings-apply",
        {"$defs": {"i": {"type": "integer"}}, "$ref": "#/$defs/i", "minimum": 3},
        [3],
        [2, "x"],
    ),
    (
        "2020-dependent-required",
        {"dependentRequired": {"a": ["b"]}},
        [{"b": 1}, {"a": 1, "b": 2}],
        [{"a": 1}],
    ),
    (
        "2020-dependent-schemas",
        {"dependentSchemas": {"a": {"required": ["b"]}}},
        [{"b": 1}],
        [{"a": 1}],
    ),
    (
        "2020-ignores-draft7-words",
        {"additionalItems": False, "dependencies": {"a": ["b"]}},
        [[1, 2], {"a": 1}],
        [],
    ),
    (
        "07-items-tuple",
        {"$schema": DRAFT7, "items": [{"type": "string"}], "additionalItems": {"type": "integer"}},
        [["a", 1], []],
        [[1], ["a", "b"]],
    ),
    (
        "07-additional-items-false",
        {"$schema": DRAFT7, "items": [{}], "additionalItems": False},
        [[1]],
        [[1, 2]],
    ),
    ("07-additional-items-ignored", {"$schema": DRAFT7, "additionalItems": False}, [[1, 2]], []),
    (
        "07-ref-overrides-siblings",
        {
            "$schema": DRAFT7,
            "definitions": {"i": {"type": "integer"}},
            "$ref": "#/definitions/i",
            "minimum": 3,
        },
        [2],
        ["x"],
    ),
    (
        "07-dependencies",
        {"$schema": DRAFT7, "dependencies": {"a": ["b"], "c": {"minProperties": 3}}},
        [{"a": 1, "b": 1}, {"c": 1, "d": 2, "e": 3}],
        [{"a": 1}, {"c": 1}],
    ),
    (
        "07-ignores-2020-words",
        {
            "$schema": DRAFT7,
            "prefixItems": [False],
            "dependentRequired": {"a": ["b"]},
            "minContains": 5,
        },
        [[1], {"a": 1}],
        [],
    ),
    ("07-contains", {"$schema": DRAFT7, "contains": {"const": 1}}, [[1], [2, 1]], [[], [2]]),
    (
        "07-draft-without-hash",
        {
            "$schema": DRAFT7.rstrip("#"),
            "$ref": "#/definitions/n",
            "definitions": {"n": {"type": "null"}},
            "type": "string",
        },
        [None],
        ["a"],
    ),
]


class TestDrafts:
    @pytest.mark.parametrize(
        ("schema", "valid", "invalid"),
        [r[1:] for r in DRAFT_TABLE],
        ids=[r[0] for r in DRAFT_TABLE],
    )
    def test_draft_specific(self, schema: Any, valid: list[Any], invalid: list[Any]) -> None:
        """Keywords that differ between draft 7 and 2020-12 follow the schema's own draft."""
        for instance in valid:
            assert assert_agrees(schema, instance) is True, instance
        for instance in invalid:
            assert assert_agrees(schema, instance) is False, instance


UNSUPPORTED: list[tuple[str, Any]] = [
    ("unevaluated-properties", {"unevaluatedProperties": False}),
    ("unevaluated-items", {"unevaluatedItems": False}),
    ("dynamic-ref", {"$dynamicRef": "#"}),
    ("remote-ref", {"$ref": "https://json-schema.org/draft/2020-12/schema"}),
    ("anchor-ref", {"$defs": {"a": {"$anchor": "x"}}, "$ref": "#x"}),
    ("missing-ref", {"$ref": "#/$defs/nope"}),
    ("nested-id", {"$defs": {"a": {"$id": "https://example.com/a"}}, "$ref": "#/$defs/a"}),
    ("nested-schema", {"items": {"$schema": DRAFT7}}),
    ("draft-04", {"$schema": "http://json-schema.org/draft-04/schema#"}),
    (
        "inplace-ref-cycle",
        {"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"},
    ),
    ("self-ref", {"anyOf": [{"$ref": "#"}]}),
    ("bad-pattern", {"pattern": "("}),
    ("warned-pattern", {"pattern": "[[a]"}),
    (
        "unjoinable-patterns",
        {"patternProperties": {"a": {}, "(?i)b": {}}, "additionalProperties": True},
    ),
    ("float-multiple-of-in-any-of", {"anyOf": [{"maximum": 3, "multipleOf": 0.5}, True]}),
    ("zero-multiple-of-in-one-of", {"oneOf": [{"multipleOf": 0}]}),
    ("huge-multiple-of-in-any-of", {"properties": {"a": {"multipleOf": 10**400}}, "anyOf": [{}]}),
    ("unknown-type", {"type": "float"}),
    ("type-not-list", {"type": {"string": 1}}),
    ("required-not-list", {"required": "a"}),
    ("bool-bound", {"minimum": True}),
    ("string-bound", {"maxLength": "3"}),
    ("non-schema", {"items": 3}),
    ("enum-not-list", {"enum": "abc"}),
    ("07-items-bool-with-additional", {"$schema": DRAFT7, "items": True, "additionalItems": False}),
    ("null-max-contains", {"contains": {}, "maxContains": None}),
    ("non-str-id", {"$id": 3}),
    ("unhashable-schema-uri", {"$schema": []}),
    ("list-schema", [{"type": "string"}]),
    ("number-schema", 3),
    ("none-schema", None),
]


class TestUnsupported:
    @pytest.mark.parametrize("schema", [r[1] for r in UNSUPPORTED], ids=[r[0] for r in UNSUPPORTED])
    def test_gives_none(self, schema: Any) -> None:
        """Schemas the checker cannot mirror exactly, or malformed ones, compile to None."""
        assert compile_checker(schema) is None


class TestEdges:
    def test_instances_jsonschema_raises_on_are_false(self) -> None:
        """Where jsonschema raises (a float multipleOf of a huge int), the predicate says False."""
        check = compile_checker({"multipleOf": 0.5})
        assert check is not None
        assert check(10**400) is False
        assert jsonschema_is_valid({"multipleOf": 0.5}, 10**400) is None

    def test_deep_instance_does_not_raise(self) -> None:
        """An instance nested past the recursion limit gives False rather than an error."""
        check = compile_checker({"items": {"$ref": "#"}})
        assert check is not None
        deep: list[Any] = []
        for _ in range(5000):
            deep = [deep]
        assert check(deep) is False

    def test_recursive_schema_checks_every_level(self) -> None:
        """A schema that refers to itself is checked lazily down a deep instance."""
        tree = {"type": "object", "properties": {"kid": {"$ref": "#"}, "n": {"type": "integer"}}}
        instance: dict[str, Any] = {"n": 0}
        for depth in range(1, 60):
            instance = {"n": depth, "kid": instance}
        assert assert_agrees(tree, instance) is True
        instance["kid"]["kid"]["n"] = "deep"
        assert assert_agrees(tree, instance) is False

    def test_nan_enum_member_matches_only_itself(self) -> None:
        """A NaN in enum equals the very same object only, as in jsonschema."""
        nan = float("nan")
        assert assert_agrees({"enum": [nan]}, nan) is True
        assert assert_agrees({"enum": [nan]}, float("nan")) is False

    def test_schema_draft(self) -> None:
        """schema_draft picks draft 7 from $schema, and 2020-12 by default."""
        assert schema_draft({"$schema": DRAFT7}) is jsonschema.Draft7Validator
        assert schema_draft(True) is jsonschema.Draft202012Validator

    def test_import_does_not_load_jsonschema(self) -> None:
        """Importing the checker module does not import jsonschema."""
        import subprocess
        import sys

        code = "import sys, toolcaller.core.checker; print('jsonschema' in sys.modules)"
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == "False"


# --- differential testing against jsonschema ---------------------------------------------------

NAMES = ["a", "b", "c"]
PATTERNS = ["^a", "b", "^$", "[ab]c", "(x)\\1", "(?i)A"]
REFS = ["#", "#/$defs/a", "#/$defs/b", "#/definitions/a"]
NUMBERS = st.sampled_from([0, 1, 2, 3, -1, 0.5, 1.5, 2.0, 0.1, 10**20])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-4, 4),
    st.sampled_from([1.0, 0.5, -2.5, 0.3, 1e300, math.inf, math.nan, 10**30, 10**400]),
    st.sampled_from(["", "a", "b", "ab", "bc", "xx", "A", "é"]),
)


def json_values(depth: int) -> st.SearchStrategy[Any]:
    """JSON values nested at most `depth` deep (cheaper to draw than st.recursive)."""
    if depth == 0:
        return SCALARS
    inner = json_values(depth - 1)
    keys = st.sampled_from([*NAMES, "x", "ab", "bc"])
    return SCALARS | st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3)


JSON = json_values(2)


def keywords(schemas: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    names = st.lists(st.sampled_from(NAMES), max_size=3)
    values: dict[str, st.SearchStrategy[Any]] = {
        "type": st.sampled_from(
            ["string", "integer", "number", "object", "array", "null", "boolean"]
        )
        | st.lists(st.sampled_from(["integer", "string", "null", "object"]), max_size=2),
        "enum": st.lists(JSON, max_size=3),
        "const": JSON,
        "minimum": NUMBERS,
        "maximum": NUMBERS,
        "exclusiveMinimum": NUMBERS,
        "exclusiveMaximum": NUMBERS,
        "multipleOf": st.sampled_from([1, 2, 3, 0.5, 0.1, 1.5]),
        "minLength": st.integers(0, 3),
        "maxLength": st.integers(0, 3),
        "pattern": st.sampled_from(PATTERNS),
        "properties": st.dictionaries(st.sampled_from(NAMES), schemas, max_size=3),
        "patternProperties": st.dictionaries(st.sampled_from(PATTERNS), schemas, max_size=2),
        "additionalProperties": schemas,
        "propertyNames": schemas,
        "required": names,
        "minProperties": st.integers(0, 3),
        "maxProperties": st.integers(0, 3),
        "dependentRequired": st.dictionaries(st.sampled_from(NAMES), names, max_size=2),
        "dependentSchemas": st.dictionaries(st.sampled_from(NAMES), schemas, max_size=2),
        "dependencies": st.dictionaries(st.sampled_from(NAMES), names | schemas, max_size=2),
        "items": schemas | st.lists(schemas, max_size=2),
        "prefixItems": st.lists(schemas, max_size=2),
        "additionalItems": schemas,
        "minItems": st.integers(0, 3),
        "maxItems": st.integers(0, 3),
        "uniqueItems": st.booleans(),
        "contains": schemas,
        "minContains": st.integers(0, 2),
        "maxContains": st.integers(0, 2),
        "allOf": st.lists(schemas, max_size=3),
        "anyOf": st.lists(schemas, max_size=3),
        "oneOf": st.lists(schemas, max_size=3),
        "not": schemas,
        "if": schemas,
        "then": schemas,
        "else": schemas,
        "$ref": st.sampled_from(REFS),
        "format": st.just("date"),
    }
    pairs = st.one_of([st.tuples(st.just(key), value) for key, value in values.items()])
    return st.lists(pairs, max_size=4).map(dict)


SCHEMAS = st.recursive(st.booleans(), keywords, max_leaves=5)
ROOTS = st.builds(
    lambda draft, defs, body: {**({"$schema": draft} if draft else {}), **defs, **body},
    st.sampled_from([None, DRAFT2020, DRAFT7]),
    st.fixed_dictionaries(
        {},
        optional={
            "$defs": st.fixed_dictionaries({"a": SCHEMAS, "b": SCHEMAS}),
            "definitions": st.fixed_dictionaries({"a": SCHEMAS}),
        },
    ),
    keywords(SCHEMAS),
)


WILD_KEYS = st.sampled_from(
    [
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "items",
        "prefixItems",
        "additionalItems",
        "additionalProperties",
        "patternProperties",
        "minimum",
        "multipleOf",
        "maxLength",
        "pattern",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "$ref",
        "$defs",
        "$id",
        "$schema",
        "contains",
        "maxContains",
        "uniqueItems",
        "dependencies",
        "propertyNames",
    ]
)
WILD_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=3) | WILD_KEYS, inner, max_size=3)
    ),
    max_leaves=10,
)
WILD_SCHEMAS = st.recursive(
    st.dictionaries(WILD_KEYS, WILD_VALUES, max_size=4),
    lambda inner: st.dictionaries(
        WILD_KEYS, inner | WILD_VALUES | st.lists(inner, max_size=2), max_size=4
    ),
    max_leaves=8,
)


class TestAgainstJsonschema:
    @settings(max_examples=3000, deadline=None, database=None, suppress_health_check=SLOW)
    @given(schema=ROOTS, instances=st.lists(JSON, min_size=1, max_size=4))
    def test_agrees_with_jsonschema(self, schema: dict[str, Any], instances: list[Any]) -> None:
        """Whenever a predicate is compiled, it answers exactly as jsonschema's is_valid."""
        check = compile_checker(schema)
        if check is None:
            return
        for instance in instances:
            expected = jsonschema_is_valid(schema, instance)
            assert check(instance) is (expected is True), instance

    @settings(max_examples=600, deadline=None, database=None, suppress_health_check=SLOW)
    @given(schema=WILD_SCHEMAS | WILD_VALUES, instances=st.lists(WILD_VALUES, max_size=4))
    def test_never_raises(self, schema: Any, instances: list[Any]) -> None:
        """Any JSON value as a schema compiles or gives None; predicates never raise and agree."""
        check = compile_checker(schema)
        if check is None:
            return
        for instance in instances:
            expected = jsonschema_is_valid(schema, instance)
            assert check(instance) is (expected is True), instance
