"""`toolcaller.core.validation`: violations with pointers; usable and unusable schemas."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcaller.core import _quick_check
from toolcaller.core.schema import MAX_VIOLATIONS, ParamsValidator, check_schema
from toolcaller.core.validation import MAX_DEPTH
from toolcaller.errors import ExecutionError

DRAFT7 = "http://json-schema.org/draft-07/schema#"
DRAFT2020 = "https://json-schema.org/draft/2020-12/schema"
DRAFTS = pytest.mark.parametrize("draft", [DRAFT2020, DRAFT7], ids=["2020-12", "draft-07"])


def verdict(schema: Any, params: Any) -> bool:
    """`is_valid`, checked against `violations` (they always agree)."""
    validator = ParamsValidator(schema)
    assert validator.problem is None, validator.problem
    ok = validator.is_valid(params)
    assert ok is (validator.violations(params) == []), (schema, params)
    return ok


def messages(schema: Any, params: Any) -> list[tuple[str, str]]:
    return [(v["pointer"], v["message"]) for v in ParamsValidator(schema).violations(params)]


def nested(depth: int, leaf: Any = None, key: str | None = None) -> Any:
    value = leaf if leaf is not None else []
    for _ in range(depth):
        value = {key: value} if key else [value]
    return value


class TestViolations:
    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object", "additionalProperties": False, "required": ["a", "b"],
        "properties": {"a": {"type": "integer", "minimum": 0},
                       "b": {"type": "array", "items": {"type": "string"}},
                       "c": {"type": "object", "properties": {
                           "d": {"type": "string", "maxLength": 2}}}}}

    def test_valid(self) -> None:
        """Valid params have no violations."""
        assert ParamsValidator(self.SCHEMA).violations({"a": 1, "b": ["x"]}) == []
        assert ParamsValidator(self.SCHEMA).is_valid({"a": 1, "b": ["x"]})

    @pytest.mark.parametrize(
        ("params", "pointers"), [
            ({}, ["/a", "/b"]),
            ({"a": -1, "b": ["x", 2]}, ["/a", "/b/1"]),
            ({"a": 1, "b": [], "x": 1, "y": 2}, ["/x", "/y"]),
            ({"a": 1, "b": [], "c": {"d": "long"}}, ["/c/d"]),
            ({"a": "1", "b": "x", "c": 3}, ["/a", "/b", "/c"]),
            ([], [""]),
        ],
        ids=["missing", "minimum-and-item", "extras", "nested", "types", "not-an-object"],
    )
    def test_every_violation_with_its_pointer(self, params: Any, pointers: list[str]) -> None:
        """Every violation is listed, sorted, with the pointer of the field to fix: a missing
        property's own pointer, each extra property's pointer."""
        found = ParamsValidator(self.SCHEMA).violations(params)
        assert [v["pointer"] for v in found] == pointers
        assert all(v["message"] for v in found)

    @pytest.mark.parametrize(
        ("schema", "params", "expected"), [
            ({"required": ["a"]}, {}, [("/a", "'a' is required")]),
            ({"properties": {"a": {}}, "additionalProperties": False}, {"a": 1, "a/b": 2},
             [("/a~1b", "'a/b' is not an allowed property")]),
            ({"unevaluatedProperties": False}, {"x": 1},
             [("/x", "'x' is not an allowed property")]),
            ({"dependentRequired": {"a": ["b"]}}, {"a": 1}, [("/b", "'b' is required")]),
            ({"properties": {"x": False}}, {"x": 1}, [("/x", "'x' is not allowed")]),
            ({"type": "integer"}, "1", [("", 'expected an integer, got "1"')]),
            ({"type": ["string", "null"]}, {"k": 1},
             [("", "expected null or a string, got an object")]),
            ({"enum": ["a", "b", "c"]}, "z", [("", 'expected one of "a", "b" or "c", got "z"')]),
            ({"enum": list("abcdefg")}, "z",
             [("", 'expected one of "a", "b", "c", "d", "e" (or 2 more), got "z"')]),
            ({"const": "x"}, "y", [("", 'expected "x", got "y"')]),
            ({"minimum": 0}, -1, [("", "-1 is less than the minimum of 0")]),
            ({"maximum": 5}, 9, [("", "9 is greater than the maximum of 5")]),
            ({"exclusiveMinimum": 0}, 0, [("", "0 must be greater than 0")]),
            ({"multipleOf": 3}, 7, [("", "7 is not a multiple of 3")]),
            ({"minLength": 3}, "ab", [("", "expected at least 3 characters, got 2")]),
            ({"maxItems": 1}, [1, 2], [("", "expected at most 1 item, got 2")]),
            ({"minProperties": 2}, {"a": 1}, [("", "expected at least 2 properties, got 1")]),
            ({"uniqueItems": True}, [1, 1.0], [("", "expected unique items, but some repeat")]),
            ({"pattern": "^[0-9]+$"}, "abc", [("", '"abc" does not match the required pattern')]),
            ({"contains": {"type": "string"}}, [1],
             [("", "no item matches what the array must contain")]),
            ({"anyOf": [{"type": "string"}, {"minimum": 5}]}, 1,
             [("", "1 matches none of the allowed alternatives; the closest, alternative 2, "
                   "fails: 1 is less than the minimum of 5")]),
            ({"oneOf": [{"minimum": 1}, {"maximum": 3}]}, 2,
             [("", "2 matches more than one alternative; exactly one is allowed")]),
            ({"not": {"type": "string"}}, "a", [("", '"a" is not allowed here')]),
            ({"propertyNames": {"maxLength": 2}}, {"abc": 1},
             [("/abc", 'the property name "abc" is not allowed: expected at most 2 characters, '
                       "got 3")]),
            ({"format": "email"}, "ada-at-example",
             [("", '"ada-at-example" is not a valid email')]),
        ],
        ids=lambda value: None,
    )
    def test_messages(self, schema: Any, params: Any, expected: list[tuple[str, str]]) -> None:
        """Each keyword has a short message that says what was expected and what arrived."""
        assert messages(schema, params) == expected

    def test_messages_show_no_whole_object_nor_regex(self) -> None:
        """Objects and arrays are named, not dumped; long values are cut; patterns are not shown."""
        found = messages({"properties": {"a": {"type": "string"}, "b": {"pattern": "^[a-z]{3}$"},
                                         "c": {"const": 1}}},
                         {"a": {"secret": "x" * 100}, "b": "y" * 100, "c": [1, 2, 3]})
        text = " ".join(message for _, message in found)
        assert "secret" not in text
        assert "[1, 2, 3]" not in text
        assert "{3}" not in text
        assert all(len(message) < 120 for _, message in found)

    def test_a_secret_value_is_not_shown(self) -> None:
        """The value of a secret-looking property stays out of the message, even a short one."""
        [(_, message)] = messages({"properties": {"pin_token": {"pattern": "^[0-9]+$"}}},
                                  {"pin_token": "ab"})
        assert message == "the value does not match the required pattern"

    def test_many_violations_are_capped(self) -> None:
        """At most MAX_VIOLATIONS violations are listed, unless the caller asks for more."""
        schema = {"type": "object", "additionalProperties": {"type": "integer"}}
        params = {f"k{i}": "x" for i in range(MAX_VIOLATIONS * 2)}
        assert len(ParamsValidator(schema).violations(params)) == MAX_VIOLATIONS
        assert len(ParamsValidator(schema).violations(params, limit=1000)) == MAX_VIOLATIONS * 2

    def test_params_that_are_not_json_are_a_violation(self) -> None:
        """A value JSON cannot hold (a date, bytes) is reported, not raised."""
        from datetime import date

        validator = ParamsValidator({"properties": {"a": {"type": "string"}}})
        assert validator.is_valid({"a": date(2026, 1, 1)}) is False
        [found] = validator.violations({"a": b"x"})
        assert "not JSON data" in found["message"]


# (id, schema, valid instances, invalid instances): each runs under both drafts.
TABLE: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("true", True, [1, None, {"a": []}], []),
    ("false", False, [], [1, None, {}]),
    ("type-string", {"type": "string"}, ["", "é"], [1, None, ["a"]]),
    ("type-integer", {"type": "integer"}, [1, -3, 1.0, 10**40], [1.5, True, "1"]),
    ("type-number", {"type": "number"}, [1, 1.5, 10**400], [True, "1", None]),
    ("type-array", {"type": "array"}, [[], [1], (1, 2)], [{}, "ab"]),
    ("type-list", {"type": ["string", "null"]}, ["a", None], [1, []]),
    ("properties", {"properties": {"a": {"type": "integer"}}}, [{}, {"a": 1}, 3], [{"a": "x"}]),
    ("required", {"required": ["a", "b"]}, [{"a": 1, "b": 2}, "x"], [{"a": 1}, {}]),
    ("additional-false", {"properties": {"a": {}}, "additionalProperties": False},
     [{"a": 1}, {}], [{"b": 1}]),
    ("pattern-properties", {"patternProperties": {"^x": {"type": "integer"}}},
     [{"x1": 1, "y": "s"}], [{"x1": "s"}]),
    ("enum", {"enum": [1, "a", None, [1, 2], {"k": True}]},
     [1, 1.0, "a", None, [1, 2], {"k": True}], [True, "b", [2, 1], {"k": 1}]),
    ("enum-bools", {"enum": [True, 0]}, [True, 0, 0.0], [1, False]),
    ("const", {"const": False}, [False], [0, 0.0, None]),
    ("range", {"type": "integer", "minimum": 1, "maximum": 3}, [1, 3, 2.0], [0, 4, 2.5, "2"]),
    ("exclusive", {"exclusiveMinimum": 2, "exclusiveMaximum": 4}, [3, 2.5], [2, 4, 10**30]),
    ("multiple-of-float", {"multipleOf": 0.1}, [0.5, 1, 0.2, 0.3], [0.35]),
    ("lengths", {"minLength": 2, "maxLength": 3}, ["ab", "éé", 1], ["a", "abcd"]),
    ("items", {"items": {"type": "integer"}}, [[], [1, 2], "x"], [[1, "a"]]),
    ("unique-items", {"uniqueItems": True}, [[1, 2], [1, True], [0, False]],
     [[1, 1.0], [{"a": 1}, {"a": 1.0}], [[1], [1]]]),
    ("contains", {"contains": {"type": "string"}}, [["a"], [1, "b"], 3], [[], [1]]),
    ("all-any-one-not", {"allOf": [{"minimum": 1}], "anyOf": [{"maximum": 5}, {"const": 9}],
                         "oneOf": [{"type": "integer"}, {"type": "string"}],
                         "not": {"const": 3}}, [1, 9], [0, 3, 6, 2.5]),
    ("if-then-else", {"if": {"type": "integer"}, "then": {"minimum": 1},
                      "else": {"type": "string"}}, [1, "a"], [0, None]),
    ("ref-recursive", {"type": "object", "additionalProperties": False,
                       "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}},
     [{}, {"kids": [{"kids": []}]}], [{"kids": [{"x": 1}]}]),
    ("ref-escaped", {"definitions": {"a/b~c d": {"type": "null"}},
                     "items": {"$ref": "#/definitions/a~1b~0c%20d"}}, [[None]], [[1]]),
]


class TestKeywords:
    @DRAFTS
    @pytest.mark.parametrize(("schema", "valid", "invalid"), [row[1:] for row in TABLE],
                             ids=[row[0] for row in TABLE])
    def test_table(self, draft: str, schema: Any, valid: list[Any], invalid: list[Any]) -> None:
        """Each keyword accepts and rejects what JSON Schema says, under both drafts."""
        schema = {"$schema": draft, **schema} if isinstance(schema, dict) else schema
        assert [verdict(schema, instance) for instance in valid] == [True] * len(valid)
        assert [verdict(schema, instance) for instance in invalid] == [False] * len(invalid)


class TestDialects:
    @pytest.mark.parametrize(
        ("schema", "params", "ok"), [
            ({"$schema": DRAFT7, "dependencies": {"a": ["b"]}}, {"a": 1}, False),
            ({"dependentRequired": {"a": ["b"]}}, {"a": 1}, False),
            ({"$schema": DRAFT7, "dependentRequired": {"a": ["b"]}}, {"a": 1}, True),
            ({"$schema": DRAFT7, "items": [{"type": "integer"}]}, ["x"], False),
            ({"$schema": DRAFT7, "items": [{}], "additionalItems": False}, [1, 2], False),
            ({"prefixItems": [{"type": "integer"}]}, ["x"], False),
            ({"$schema": DRAFT7, "prefixItems": [{"type": "integer"}]}, ["x"], True),
            ({"$schema": DRAFT7, "definitions": {"i": {"type": "integer"}},
              "$ref": "#/definitions/i", "minimum": 3}, 2, True),
            ({"$defs": {"i": {"type": "integer"}}, "$ref": "#/$defs/i", "minimum": 3}, 2, False),
            ({"$schema": DRAFT7.rstrip("#"), "type": "string"}, 1, False),
            ({"$schema": "http://json-schema.org/draft-04/schema#", "type": "string"}, 1, False),
        ],
        ids=["07-dependencies", "2020-dependentRequired", "07-ignores-dependentRequired",
             "07-items-array", "07-additionalItems", "2020-prefixItems", "07-ignores-prefixItems",
             "07-ref-overrides-siblings", "2020-ref-keeps-siblings", "07-without-hash",
             "draft-04"],
    )
    def test_schema_picks_the_draft(self, schema: Any, params: Any, ok: bool) -> None:
        """2020-12 is the default; `$schema` selects draft 7 (or 4, 6, 2019-09) keywords."""
        assert verdict(schema, params) is ok

    def test_unknown_dialect_is_a_problem(self) -> None:
        """An unknown `$schema` makes the schema unusable, and the problem names it."""
        problem = check_schema({"$schema": "https://example.com/my-dialect"})
        assert problem is not None
        assert "https://example.com/my-dialect" in problem


# Defect 5: valid JSON Schema that the hand-written `$ref` check refused.
USABLE: list[tuple[str, Any, Any, Any]] = [
    ("percent-encoded-pointer", {"$defs": {"a%b": {"type": "integer"}},
                                 "properties": {"x": {"$ref": "#/$defs/a%25b"}}},
     {"x": 1}, {"x": "a"}),
    ("id-relative", {"$id": "https://example.com/root.json",
                     "properties": {"x": {"$ref": "item.json"}},
                     "$defs": {"item": {"$id": "item.json", "type": "integer"}}},
     {"x": 1}, {"x": "a"}),
    ("id-relative-no-root-id", {"properties": {"x": {"$ref": "item.json"}},
                                "$defs": {"item": {"$id": "item.json", "type": "integer"}}},
     {"x": 1}, {"x": "a"}),
    ("urn-uuid", {"$id": "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed",
                  "properties": {"x": {"$ref": "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed"
                                               "#/$defs/i"}},
                  "$defs": {"i": {"type": "integer"}}}, {"x": 1}, {"x": "a"}),
    ("property-named-ref", {"properties": {"$ref": {"type": "string"}}, "required": ["$ref"]},
     {"$ref": "x"}, {"$ref": 1}),
    ("meta-schema-2020", {"properties": {"s": {"$ref": DRAFT2020}}},
     {"s": {"type": "string"}}, {"s": {"type": "nope"}}),
    ("meta-schema-07-from-2020", {"properties": {"s": {"$ref": DRAFT7}}},
     {"s": {"type": "string"}}, {"s": {"minimum": "zero"}}),
    ("meta-schema-2020-from-07", {"$schema": DRAFT7, "properties": {"s": {"$ref": DRAFT2020}}},
     {"s": {"prefixItems": [True]}}, {"s": {"prefixItems": 3}}),
    ("anchor", {"$defs": {"n": {"$anchor": "num", "type": "number"}},
                "properties": {"x": {"$ref": "#num"}}}, {"x": 1.5}, {"x": "a"}),
    ("dynamic-ref", {"$dynamicAnchor": "node", "type": "object",
                     "properties": {"kid": {"$dynamicRef": "#node"}, "n": {"type": "integer"}}},
     {"kid": {"n": 1}}, {"kid": {"n": "x"}}),
    ("pydantic-style", {"$defs": {"Point": {"type": "object", "required": ["x"],
                                            "properties": {"x": {"type": "number"}}}},
                        "properties": {"p": {"$ref": "#/$defs/Point"}}},
     {"p": {"x": 1}}, {"p": {}}),
]


class TestReferences:
    @pytest.mark.parametrize(("schema", "good", "bad"), [r[1:] for r in USABLE],
                             ids=[r[0] for r in USABLE])
    def test_valid_references_load_and_validate(self, schema: Any, good: Any, bad: Any) -> None:
        """Each reference form JSON Schema allows is followed: the schema is usable, good
        params pass and bad ones fail."""
        assert check_schema(schema) is None
        assert verdict(schema, good) is True
        assert verdict(schema, bad) is False

    @pytest.mark.parametrize(
        ("schema", "fragments"), [
            ({"properties": {"x": {"$ref": "#/$defs/nope"}}},
             ["$ref '#/$defs/nope'", "points to nothing", "(at /properties/x)"]),
            ({"properties": {"x": {"items": {"$ref": "https://example.com/other.json#/a"}}}},
             ["$ref 'https://example.com/other.json#/a'", "remote references are not fetched",
              "/properties/x/items"]),
            ({"$id": "https://example.com/root.json", "properties": {"x": {"$ref": "other.json"}}},
             ["$ref 'other.json'", "remote references are not fetched"]),
            ({"properties": {"x": {"$ref": "#missing"}}}, ["$ref '#missing'", "anchor"]),
            ({"$dynamicRef": "#missing"}, ["$dynamicRef '#missing'"]),
        ],
        ids=["dangling", "remote", "relative-remote", "missing-anchor", "dynamic-missing"],
    )
    def test_unusable_references_are_named(self, schema: Any, fragments: list[str]) -> None:
        """A reference that cannot be followed offline is named with where it is; the
        validator builds anyway, and every check is a permanent EXECUTION_ERROR saying why."""
        problem = check_schema(schema)
        assert problem is not None
        for fragment in fragments:
            assert fragment in problem
        validator = ParamsValidator(schema)
        assert validator.problem == problem
        for check in (validator.violations, validator.is_valid):
            with pytest.raises(ExecutionError) as caught:
                check({})
            assert problem in caught.value.message
            assert caught.value.retryable is False

    def test_remote_references_are_not_fetched(self) -> None:
        """A remote `$ref` is refused at once: nothing waits on a network."""
        started = time.perf_counter()
        assert check_schema({"$ref": "http://10.255.255.1/schema.json"}) is not None
        assert time.perf_counter() - started < 1


FORMATS = [
    ("email", "ada@example.com", "ada-at-example"),
    ("date-time", "2026-03-10T12:00:00Z", "2026-03-10 12:00"),
    ("date", "2026-03-10", "2026-13-10"),
    ("time", "12:00:00Z", "25:00:00Z"),
    ("uri", "https://example.com/a?b=c", "not a uri"),
    ("uuid", "2c6bc1b5-0f51-4e85-8a31-0f9c3a0c4d61", "2c6bc1b5"),
    ("ipv4", "192.168.0.1", "192.168.0.300"),
    ("ipv6", "::1", "::g"),
    ("hostname", "example.com", "-bad-.com"),
    ("regex", "^a+$", "("),
]


class TestFormats:
    @pytest.mark.parametrize(("name", "good", "bad"), FORMATS, ids=[f[0] for f in FORMATS])
    def test_common_formats_are_asserted(self, name: str, good: str, bad: str) -> None:
        """A declared format is checked: a tool that says `format: email` means it."""
        schema = {"type": "string", "format": name}
        assert (verdict(schema, good), verdict(schema, bad)) == (True, False)
        assert name in messages(schema, bad)[0][1]

    @pytest.mark.parametrize("name", ["password", "int32", "binary", "made-up"])
    def test_other_formats_are_annotations(self, name: str) -> None:
        """Formats nobody checks (`password` marks secrets; OpenAPI's `int32`) stay notes."""
        assert verdict({"format": name}, "anything at all") is True

    def test_formats_apply_to_strings_only(self) -> None:
        """A format says nothing about numbers, objects or arrays."""
        assert verdict({"format": "date"}, 12) is True

    def test_date_time_message_shows_the_form(self) -> None:
        """The message for a common format says what it looks like."""
        [(_, message)] = messages({"format": "date-time"}, "2026-03-10")
        assert message == ('"2026-03-10" is not a valid date-time '
                           "(RFC 3339, e.g. 2026-03-10T12:00:00Z)")


class TestNumbersAndRegexes:
    @pytest.mark.parametrize(
        ("schema", "instance", "ok"), [
            ({"type": "integer"}, 10**40, True),
            ({"maximum": 1e308}, 10**400, False),
            ({"minimum": -1e308}, -(10**400), False),
            ({"multipleOf": 0.5}, 10**400, True),
            ({"multipleOf": 3}, 10**40 + 1, False),
            ({"multipleOf": 10**30}, 10**31, True),
            ({"enum": [10**30]}, 10**30, True),
            ({"enum": [10**30]}, 10**30 + 1, False),
            ({"const": 10**30}, 1e30, False),
        ],
        ids=["integer", "above-max", "below-min", "multiple-of-half", "not-multiple",
             "huge-step", "enum", "enum-off-by-one", "float-is-not-exact"],
    )
    def test_big_numbers_compare_exactly(self, schema: Any, instance: Any, ok: bool) -> None:
        """Integers of any size compare exactly (jsonschema raises OverflowError on some)."""
        assert verdict(schema, instance) is ok

    def test_a_big_number_message_is_cut(self) -> None:
        """A 401-digit number is shown cut short."""
        [(_, message)] = messages({"maximum": 10}, 10**400)
        assert len(message) < 90
        assert message.endswith("is greater than the maximum of 10")

    @pytest.mark.parametrize(
        ("pattern", "instance", "ok"), [
            ("^\\d+$", "٣", False),
            ("^\\w+$", "é", False),
            ("^\\p{L}+$", "é", True),
            ("^a$", "a\n", False),
            ("^[a-z]+$", "abc", True),
        ],
        ids=["digit-is-ascii", "word-is-ascii", "unicode-property", "dollar-is-end",
             "plain"],
    )
    def test_patterns_are_ecma_262(self, pattern: str, instance: str, ok: bool) -> None:
        """Patterns follow ECMA-262 as JSON Schema says, not Python's `re`."""
        assert check_schema({"pattern": pattern}) is None
        assert verdict({"pattern": pattern}, instance) is ok


class TestDepth:
    def test_deep_params_against_a_recursive_schema(self) -> None:
        """Params nested past MAX_DEPTH against a recursive schema are one violation, however
        deep (a Rust stack cannot grow: 100,000 levels would crash the process)."""
        validator = ParamsValidator({"items": {"$ref": "#"}})
        assert validator.is_valid(nested(MAX_DEPTH - 1)) is True
        for depth in (MAX_DEPTH + 1, 100_000):
            assert validator.is_valid(nested(depth)) is False
            assert validator.violations(nested(depth)) == [
                {"pointer": "", "message": "the params are nested too deeply to check"}]

    def test_deep_params_without_recursion(self) -> None:
        """Deep params that jsonschema-rs cannot bring back into Python are reported, not raised."""
        validator = ParamsValidator({"uniqueItems": True})
        assert validator.is_valid([nested(300), nested(300)]) is False
        [found] = validator.violations([nested(300), nested(301)])
        assert "nested too deeply" in found["message"]

    @pytest.mark.parametrize(
        "schema", [nested(300, {"type": "integer"}, "items"),
                   nested(5000, {"type": "integer"}, "items"),
                   {"x-note": nested(300)}, {"default": nested(300)}],
        ids=["300", "5000", "unknown-keyword", "default"])
    def test_a_deep_schema_is_unusable(self, schema: Any) -> None:
        """A schema nested too deeply to compile is a problem, not a crash."""
        problem = check_schema(schema)
        assert problem is not None
        assert "nested too deeply" in problem
        assert ParamsValidator(schema).problem == problem

    def test_a_rust_panic_is_a_violation(self) -> None:
        """A panic inside jsonschema-rs (pyo3's PanicException, a BaseException) is reported."""

        class PanicException(BaseException):
            pass

        class Exploding:
            def is_valid(self, params: Any) -> bool:
                raise PanicException("stack")

        validator = ParamsValidator({"type": "object"})
        validator._validator = Exploding()
        assert validator.violations({}) == [
            {"pointer": "", "message": "the params are nested too deeply to check"}]

    def test_other_base_exceptions_go_on(self) -> None:
        """Ctrl-C during a check is not swallowed."""

        class Interrupted:
            def is_valid(self, params: Any) -> bool:
                raise KeyboardInterrupt

        validator = ParamsValidator({"type": "object"})
        validator._validator = Interrupted()
        with pytest.raises(KeyboardInterrupt):
            validator.violations({})


class TestCheckSchema:
    @pytest.mark.parametrize(
        ("schema", "fragment"), [
            ({"type": "objekt"}, "/type"),
            ({"properties": {"a": {"minimum": "zero"}}}, "/properties/a/minimum"),
            ({"pattern": "("}, "not a valid regex"),
            ({"patternProperties": {"(": {}}}, "not a valid regex"),
            ({"minimum": float("nan")}, "/minimum"),
            ({"properties": {1: {}}}, "not JSON data"),
            ("object", "object or a boolean"),
            ([], "object or a boolean"),
        ],
        ids=["bad-type", "bad-minimum", "bad-pattern", "bad-pattern-key", "nan", "int-key",
             "string", "list"],
    )
    def test_invalid(self, schema: Any, fragment: str) -> None:
        """An invalid schema is described, with where the problem is."""
        problem = check_schema(schema)
        assert problem is not None
        assert fragment in problem
        assert ParamsValidator(schema).problem == problem

    @pytest.mark.parametrize("schema", [{}, True, False, {"type": "object"},
                                        {"const": {"$ref": "#/not/a/reference"}}],
                             ids=["empty", "true", "false", "object", "ref-in-data"])
    def test_valid(self, schema: Any) -> None:
        """Valid schemas give None."""
        assert check_schema(schema) is None

    def test_equal_schemas_share_one_compiled_validator(self) -> None:
        """Validators are cached by canonical JSON: key order does not matter."""
        first = ParamsValidator({"type": "object", "required": ["a"]})
        second = ParamsValidator({"required": ["a"], "type": "object"})
        assert first._validator is second._validator


def _schemas() -> st.SearchStrategy[Any]:
    words = st.sampled_from(["a", "b", "$ref", "$id", "x-y"])
    leaf = st.fixed_dictionaries({}, optional={
        "type": st.sampled_from(["string", "integer", "objekt", ["null", "array"]]),
        "minimum": st.integers(-3, 3) | st.just("zero"),
        "pattern": st.sampled_from(["^a", "(", "\\p{L}", "[[a]"]),
        "format": st.sampled_from(["email", "date", "password"]),
        "enum": st.lists(st.integers() | st.text(max_size=2), max_size=2) | st.just("x"),
        "const": st.none() | st.fixed_dictionaries({"$ref": st.just("#/x")}),
        "$ref": st.sampled_from(["#", "#/$defs/a", "#/$defs/zz", "#/definitions/a", "#a",
                                 "https://example.com/s.json", "#/$defs/a%25"]),
        "$anchor": st.just("a"),
    })
    return st.recursive(leaf | st.booleans(), lambda inner: st.fixed_dictionaries({}, optional={
        "properties": st.dictionaries(words, inner, max_size=2),
        "items": inner | st.lists(inner, max_size=2),
        "anyOf": st.lists(inner, min_size=1, max_size=2),
        "$defs": st.fixed_dictionaries({"a": inner}),
        "definitions": st.fixed_dictionaries({"a": inner}),
        "not": inner,
    }), max_leaves=6)


ROOTS = st.builds(lambda body, draft: {**body, **draft} if isinstance(body, dict) else body,
                  _schemas(), st.sampled_from([{}, {"$schema": DRAFT7}, {"$schema": DRAFT2020}]))


class TestQuickCheck:
    @settings(max_examples=400, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(schema=ROOTS)
    def test_the_quick_check_never_vouches_for_an_unusable_schema(self, schema: Any) -> None:
        """Whatever the quick path accepts compiles, so one rule holds at every size."""
        if isinstance(schema, dict) and _quick_check.is_quickly_usable(schema):
            assert ParamsValidator(schema).problem is None, schema
        assert (check_schema(schema) is None) is (ParamsValidator(schema).problem is None)

    def test_the_suite_comparison_skips_without_a_suite(self,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
        """`benchmarks/schema_suite.py` without the suite's path says so and exits 0."""
        from benchmarks.schema_suite import main

        assert main([]) == 0
        assert capsys.readouterr().out.startswith("skipped: give the path")

    def test_the_shipped_flat_meta_schema_is_derived(self) -> None:
        """`schemas/meta-2020-12-flat.schema.json` is the 2020-12 meta-schema with its
        vocabularies merged; regenerate it with `python -m tests.core.test_validation`."""
        assert json.loads(FLAT_META.read_text(encoding="utf-8")) == flat_meta_2020()


FLAT_META = Path(_quick_check.__file__).resolve().parent.parent / "schemas" / \
    "meta-2020-12-flat.schema.json"


def flat_meta_2020() -> dict[str, Any]:
    """The 2020-12 meta-schema and its vocabularies in one schema (`#meta` is `#/$defs/meta`)."""
    from jsonschema_specifications import REGISTRY

    parts = [REGISTRY.contents(DRAFT2020)] + [
        REGISTRY.contents(f"https://json-schema.org/draft/2020-12/meta/{name}")
        for name in ("core", "applicator", "unevaluated", "validation", "meta-data",
                     "format-annotation", "content")]
    properties: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    for part in parts:
        properties.update(part.get("properties", {}))
        defs.update(part.get("$defs", {}))
    body = {"type": ["object", "boolean"], "properties": properties}
    comment = ("The 2020-12 meta-schema with its vocabularies merged into one schema "
               "($dynamicRef '#meta' becomes '#/$defs/meta'): it accepts exactly the same "
               "schemas, faster. Derived, never edited: tests/core/test_validation.py checks "
               "it and says how to regenerate it.")
    return {"$comment": comment, **_local({"$defs": {**defs, "meta": body}})}


def _local(node: Any) -> Any:
    if isinstance(node, list):
        return [_local(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$dynamicRef" and value == "#meta":
            out["$ref"] = "#/$defs/meta"
        elif key == "$ref" and isinstance(value, str):
            out["$ref"] = "#" + value.partition("#")[2]
        else:
            out[key] = _local(value)
    return out


if __name__ == "__main__":
    FLAT_META.write_text(json.dumps(flat_meta_2020(), indent=2) + "\n", encoding="utf-8")
