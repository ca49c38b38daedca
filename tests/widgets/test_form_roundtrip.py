"""ParamForm round trips over a corpus of schemas, strange ones included, and malformed schemas."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.widgets.form_helpers import at, obj
from toolcaller.widgets import ParamForm

LINKED = {"type": "object", "properties": {"value": {"type": "integer"}, "next": {"$ref": "#"}}}
TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
            "required": ["name"],
        }
    },
    "$ref": "#/$defs/node",
}
NULLABLE_CHAIN = {
    "$defs": {
        "n": {
            "type": "object",
            "required": ["next"],
            "properties": {"next": {"anyOf": [{"$ref": "#/$defs/n"}, {"type": "null"}]}},
        }
    },
    "$ref": "#/$defs/n",
}
MIXED_ENUM = [1, "1", 1.5, True, False, None, [1], {"a": 1}, 0, ""]
HUGE_ENUM = [f"v{i}" for i in range(5000)]


def _deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"leaf": {"type": "integer"}},
        "required": ["leaf"],
    }
    for level in range(levels):
        schema = {"type": "object", "properties": {f"l{level}": schema}, "required": [f"l{level}"]}
    return schema


def _deep_value(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 42}
    for level in range(levels):
        value = {f"l{level}": value}
    return value










# (id, schema, valid instances)
CORPUS: list[tuple[str, Any, list[Any]]] = [
    ("empty-schema", {}, [{}, {"a": [1, {"b": None}]}, 3, "text", None, [1, 2]]),
    ("true-schema", True, [{}, {"x": 1.5, "y": "z"}]),
    (
        "scalars",
        obj(
            {
                "s": {"type": "string"},
                "i": {"type": "integer"},
                "n": {"type": "number"},
                "b": {"type": "boolean"},
            },
            "s",
            "i",
        ),
        [{"s": "", "i": 0}, {"s": "x", "i": -3, "n": 2.5, "b": True}, {"s": "y", "i": 2**70}],
    ),
    (
        "type-list",
        obj({"v": {"type": ["string", "integer", "boolean"]}}, "v"),
        [{"v": "s"}, {"v": 3}, {"v": False}],
    ),
    (
        "type-list-nullable",
        obj({"v": {"type": ["integer", "string", "null"]}}, "v"),
        [{"v": None}, {"v": 7}, {"v": "seven"}],
    ),
    (
        "additional-properties-only",
        {"type": "object", "additionalProperties": {"type": "integer"}},
        [{}, {"a": 1, "b": 2}, {"x/y": 3}],
    ),
    (
        "additional-properties-objects",
        {"type": "object", "additionalProperties": obj({"q": {"type": "integer"}}, "q")},
        [{"k": {"q": 1}, "j": {"q": 2}}],
    ),
    (
        "additional-beside-properties",
        obj({"a": {"type": "string"}}, additionalProperties=True),
        [{"a": "x", "other": [1, 2], "more": {"z": None}}, {}],
    ),
    (
        "pattern-properties",
        {"type": "object", "patternProperties": {"^n_": {"type": "number"}}},
        [{"n_a": 1.5, "n_b": 2}],
    ),
    ("deeply-nested", _deep(12), [_deep_value(12)]),
    (
        "recursive-tree",
        TREE,
        [
            {
                "name": "root",
                "children": [
                    {"name": "a", "children": [{"name": "a1"}]},
                    {"name": "b", "children": []},
                ],
            }
        ],
    ),
    ("recursive-root-ref", LINKED, [{}, {"value": 1, "next": {"value": 2, "next": {"value": 3}}}]),
    ("recursive-nullable", NULLABLE_CHAIN, [{"next": None}, {"next": {"next": {"next": None}}}]),
    ("enum-mixed-types", obj({"e": {"enum": MIXED_ENUM}}, "e"), [{"e": v} for v in MIXED_ENUM]),
    ("enum-huge", obj({"e": {"enum": HUGE_ENUM}}, "e"), [{"e": "v4999"}, {"e": "v0"}]),
    ("zero-properties", {"type": "object", "properties": {}}, [{}]),
    (
        "unicode-names",
        obj(
            {
                "名前": {"type": "string"},
                "ключ": {"type": "integer"},
                "emoji 🎉": {"type": "boolean"},
            },
            "名前",
        ),
        [{"名前": "太郎", "ключ": 5, "emoji 🎉": True}, {"名前": "ü"}],
    ),
    (
        "slash-and-tilde",
        obj(
            {
                "a/b": {"type": "string"},
                "c~d": {"type": "integer"},
                "~1": {"type": "array", "items": {"type": "string"}},
            },
            "a/b",
        ),
        [{"a/b": "x", "c~d": 4, "~1": ["p"]}, {"a/b": ""}],
    ),
    (
        "exclusive-integer-bounds",
        obj({"n": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10}}, "n"),
        [{"n": 1}, {"n": 9}],
    ),
    (
        "number-bounds",
        obj({"x": {"type": "number", "minimum": -1.5, "maximum": 2.5, "multipleOf": 0.5}}, "x"),
        [{"x": -1.5}, {"x": 2.5}, {"x": 0}],
    ),
    (
        "number-keeps-int",
        obj({"x": {"type": "number"}}, "x"),
        [{"x": 3}, {"x": 1e20}, {"x": -0.5}],
    ),
    ("integer-written-as-float", obj({"n": {"type": "integer"}}, "n"), [{"n": 2.0}]),
    (
        "string-formats",
        obj(
            {
                "day": {"type": "string", "format": "date"},
                "at": {"type": "string", "format": "date-time"},
                "mail": {"type": "string", "format": "email"},
                "pw": {"type": "string", "format": "password"},
                "token": {"type": "string", "writeOnly": True},
                "notes": {"type": "string", "maxLength": 5000},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            }
        ),
        [
            {
                "day": "2024-02-29",
                "at": "2024-02-29T12:30:00Z",
                "mail": "a@b.example",
                "pw": "hunter2",
                "token": "t",
                "notes": "line 1\nline 2",
                "code": "ABC",
            },
            {"at": "2024-02-29T12:30:00.123+05:30"},
            {"at": "2024-02-29t12:30:00z"},
        ],
    ),
    (
        "const",
        obj(
            {"kind": {"const": "circle"}, "r": {"type": "number"}, "tag": {"const": {"v": [1]}}},
            "kind",
        ),
        [{"kind": "circle", "r": 1.0, "tag": {"v": [1]}}, {"kind": "circle"}],
    ),
    ("type-null", obj({"nothing": {"type": "null"}}, "nothing"), [{"nothing": None}]),
    (
        "nullable",
        obj(
            {
                "a": {"type": ["integer", "null"]},
                "b": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                "c": {"oneOf": [{"type": "null"}, obj({"x": {"type": "integer"}})]},
            },
            "a",
        ),
        [{"a": None}, {"a": 5, "b": None, "c": None}, {"a": 0, "b": "s", "c": {"x": 1}}],
    ),
    (
        "one-of-objects",
        obj(
            {
                "shape": {
                    "oneOf": [
                        {
                            "title": "Circle",
                            **obj({"r": {"type": "number"}}, "r", additionalProperties=False),
                        },
                        {
                            "title": "Square",
                            **obj(
                                {"side": {"type": "number"}}, "side", additionalProperties=False
                            ),
                        },
                    ]
                }
            },
            "shape",
        ),
        [{"shape": {"r": 2.0}}, {"shape": {"side": 3}}],
    ),
    (
        "any-of-scalars",
        obj(
            {
                "u": {
                    "anyOf": [
                        {"type": "string", "maxLength": 3},
                        {"type": "integer"},
                        {"type": "boolean"},
                    ]
                }
            },
            "u",
        ),
        [{"u": "abc"}, {"u": 12}, {"u": True}],
    ),
    (
        "all-of-merge",
        {
            "allOf": [
                obj({"a": {"type": "string"}}),
                {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
            ]
        },
        [{"b": 1}, {"a": "x", "b": 2}],
    ),
    (
        "draft-07-definitions",
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {"pos": {"type": "integer", "minimum": 1}},
            **obj({"p": {"$ref": "#/definitions/pos"}, "q": {"$ref": "#/definitions/pos"}}, "p"),
        },
        [{"p": 1}, {"p": 5, "q": 9}],
    ),
    (
        "array-of-objects",
        obj(
            {
                "rows": {
                    "type": "array",
                    "items": obj({"name": {"type": "string"}, "qty": {"type": "integer"}}, "name"),
                }
            },
            "rows",
        ),
        [{"rows": []}, {"rows": [{"name": "a", "qty": 1}, {"name": "b"}]}],
    ),
    (
        "array-of-enums",
        obj(
            {
                "tags": {
                    "type": "array",
                    "uniqueItems": True,
                    "items": {"enum": ["red", "green", "blue"]},
                }
            },
            "tags",
        ),
        [{"tags": []}, {"tags": ["blue", "red"]}],
    ),
    (
        "array-of-enums-with-a-blank",  # a TagsInput cannot hold "": rows of dropdowns instead
        obj({"xs": {"type": "array", "items": {"enum": ["", "a"]}}}, "xs"),
        [{"xs": [""]}, {"xs": ["a", ""]}, {"xs": []}],
    ),
    (
        "array-of-mixed-enums",
        obj({"xs": {"type": "array", "items": {"enum": [1, "1", None]}}}),
        [{"xs": [1, "1", None, 1]}],
    ),
    (
        "array-of-arrays",
        obj(
            {"m": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}}, "m"
        ),
        [{"m": [[1.5, 2], [], [3]]}],
    ),
    (
        "tuple-prefix-items",
        obj(
            {
                "t": {
                    "type": "array",
                    "prefixItems": [{"type": "string"}, {"type": "integer"}],
                    "items": False,
                }
            },
            "t",
        ),
        [{"t": ["a", 1]}],
    ),
    (
        "pydantic-style",
        {
            "title": "Args",
            "type": "object",
            "required": ["a"],
            "properties": {
                "a": {"title": "A", "type": "integer"},
                "b": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "title": "B",
                },
                "c": {"default": [], "items": {"type": "integer"}, "title": "C", "type": "array"},
            },
        },
        [{"a": 1}, {"a": 1, "b": "x", "c": [1, 2]}, {"a": 2, "b": None}],
    ),
    (
        "not-and-conditionals",
        obj(
            {
                "x": {"not": {"type": "string"}},
                "y": {"if": {"type": "integer"}, "then": {"minimum": 0}},
            }
        ),
        [{"x": 5, "y": 3}, {"x": [None], "y": "s"}],
    ),
    (
        "ref-with-siblings",
        {
            "$defs": {"c": {"enum": ["r", "g"]}},
            **obj({"c": {"$ref": "#/$defs/c", "description": "colour"}}, "c"),
        },
        [{"c": "g"}],
    ),
    (
        "id-based-ref",
        {
            "$id": "https://example.com/root.json",
            "$defs": {"x": {"$id": "x.json", "type": "string", "minLength": 1}},
            **obj({"a": {"$ref": "x.json"}}, "a"),
        },
        [{"a": "ok"}],
    ),
    ("root-array", {"type": "array", "items": {"type": "integer"}}, [[], [1, 2, 3]]),
    (
        "optional-object-default",
        obj({"opts": obj({"level": {"type": "integer"}}, "level", default={"level": 3})}),
        [{}, {"opts": {"level": 1}}],
    ),
    (
        "boolean-default-true",
        obj({"on": {"type": "boolean", "default": True}}),
        [{}, {"on": False}],
    ),
]


@pytest.mark.parametrize(
    ("schema", "instances"), [(s, i) for _, s, i in CORPUS], ids=[name for name, _, _ in CORPUS]
)
class TestCorpusRoundTrip:
    def test_setting_then_reading_gives_the_value_back(
        self, schema: Any, instances: list[Any]
    ) -> None:
        """`form.value = v` then `form.value == v`, on one form reused for every instance."""
        form = ParamForm(schema)
        for instance in instances:
            form.value = instance
            assert _same(form.value, instance)

    def test_a_fresh_form_given_the_value_reads_it_back(
        self, schema: Any, instances: list[Any]
    ) -> None:
        """`ParamForm(schema, value=v).value == v` (`value=None` means no value is given)."""
        for instance in filter(lambda i: i is not None, instances):
            assert _same(ParamForm(schema, value=instance).value, instance)

    def test_the_corpus_instances_are_valid(self, schema: Any, instances: list[Any]) -> None:
        """Every instance of the corpus is valid, so the form reports no error for it."""
        form = ParamForm(schema)
        for instance in instances:
            form.value = instance
            assert form.errors == []

    def test_the_params_trait_follows(self, schema: Any, instances: list[Any]) -> None:
        """The `params` trait equals `value` after each set."""
        form = ParamForm(schema)
        for instance in instances:
            form.value = instance
            assert _same(form.params, instance)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON text: `1` and `1.0`, `true` and `1` stay apart."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


INVALID: list[tuple[str, Any, Any, str]] = [  # (id, schema, invalid value, pointer of an error)
    ("string-in-integer", obj({"n": {"type": "integer"}}, "n"), {"n": "seven"}, "/n"),
    ("float-in-integer", obj({"n": {"type": "integer"}}, "n"), {"n": 1.5}, "/n"),
    ("bool-in-number", obj({"x": {"type": "number"}}, "x"), {"x": True}, "/x"),
    ("out-of-bounds", obj({"n": {"type": "integer", "maximum": 3}}, "n"), {"n": 99}, "/n"),
    ("not-a-date", obj({"d": {"type": "string", "format": "date"}}, "d"), {"d": "2024-1-2"}, "/d"),
    ("not-in-enum", obj({"e": {"enum": ["a", "b"]}}, "e"), {"e": "c"}, "/e"),
    ("not-the-const", obj({"k": {"const": 1}}, "k"), {"k": 2}, "/k"),
    (
        "no-variant",
        obj({"u": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer"}]}}, "u"),
        {"u": "too long"},
        "/u",
    ),
    (
        "object-for-array",
        obj({"a": {"type": "array", "items": {"type": "string"}}}, "a"),
        {"a": {"x": 1}},
        "/a",
    ),
    ("null-for-object", obj({"o": obj({"x": {"type": "integer"}})}, "o"), {"o": None}, "/o"),
    (
        "undeclared-key",
        obj({"a": {"type": "string"}}, additionalProperties=False),
        {"a": "x", "b": 1},
        "/b",
    ),
    ("params-not-an-object", obj({"a": {"type": "string"}}), [1, 2], ""),
]


@pytest.mark.parametrize(
    ("schema", "value", "pointer"),
    [(s, v, p) for _, s, v, p in INVALID],
    ids=[name for name, *_ in INVALID],
)
def test_an_invalid_value_round_trips_and_is_reported(
    schema: Any, value: Any, pointer: str
) -> None:
    """A value the field cannot hold is shown by a stand-in field, kept, and reported."""
    form = ParamForm(schema)
    form.value = value
    assert _same(form.value, value)
    assert pointer in [p for p, _ in form.errors]


def test_a_field_comes_back_once_its_value_fits_again() -> None:
    """After a stand-in showed a bad value, a good value brings the schema's own field back."""
    form = ParamForm(obj({"n": {"type": "integer"}}, "n"))
    form.value = {"n": "seven"}
    assert type(at(form, "/n")).__name__ == "Text"
    form.value = {"n": 7}
    assert type(at(form, "/n")).__name__ == "NumberBox"
    at(form, "/n").value = "8"
    assert form.value == {"n": 8}


class TestStrangeSchemas:
    def test_false_schema_builds_and_reports_every_value(self) -> None:
        """`false` accepts nothing: the form builds, shows raw JSON and reports an error."""
        form = ParamForm(False)
        assert form.value == {}
        assert form.errors

    def test_endless_required_recursion_stops(self) -> None:
        """A property that requires itself forever is built to a bounded depth."""
        schema = {"type": "object", "properties": {"me": {"$ref": "#"}}, "required": ["me"]}
        assert isinstance(ParamForm(schema).value, dict)

    def test_branching_required_recursion_stays_small(self) -> None:
        """Two required self references do not build an exponential tree."""
        schema = {
            "type": "object",
            "properties": {"a": {"$ref": "#"}, "b": {"$ref": "#"}},
            "required": ["a", "b"],
        }
        form = ParamForm(schema)
        assert set(form.value) == {"a", "b"}

    def test_a_remote_ref_is_reported_not_fetched(self) -> None:
        """A `$ref` to another document is edited as raw JSON and reported as unresolvable."""
        form = ParamForm(obj({"a": {"$ref": "https://example.com/x.json"}}, "a"))
        assert type(at(form, "/a")).__name__ == "Textarea"
        assert "remote references are not fetched" in form.errors[0][1]

    def test_ref_loop_without_structure_is_raw_json(self) -> None:
        """`$ref` chains that loop back on themselves become a raw JSON editor."""
        schema = {
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/a"}},
            "required": ["x"],
        }
        form = ParamForm(schema)
        form.value = {"x": [1, {"y": 2}]}
        assert form.value == {"x": [1, {"y": 2}]}


MALFORMED: list[Any] = [
    {"type": 5},
    {"type": "strange"},
    {"type": []},
    {"properties": []},
    {"properties": {"a": 3}},
    {"$ref": 3},
    {"$ref": "#/nope"},
    {"$ref": "https://remote.invalid/x.json"},
    {"type": "object", "properties": {"a": {"type": "integer", "minimum": "x"}}},
    {"type": "object", "properties": {"a": {"type": "integer", "minimum": 10, "maximum": 1}}},
    {"enum": "abc"},
    {"enum": []},
    {"anyOf": {}},
    {"anyOf": []},
    {"oneOf": [3, "x"]},
    {"allOf": [1]},
    {"allOf": "x"},
    {"required": "a"},
    {"required": [1, None]},
    {"type": "array", "items": 4},
    {"type": "string", "pattern": "["},
    {"$schema": ["x"]},
    {"$schema": "https://unknown.invalid/schema"},
    ["not", "a", "schema"],
    None,
    42,
    "str",
    {"type": "object", "properties": {"d": {"type": "string", "format": "date", "default": 3}}},
    {"type": "integer", "default": "nope"},
    {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
    {"type": "object", "additionalProperties": 7},
    {"type": ["object", 5]},
    {"type": "number", "exclusiveMinimum": True, "minimum": 1},
]


@pytest.mark.parametrize("schema", MALFORMED, ids=[json.dumps(s)[:40] for s in MALFORMED])
def test_a_malformed_schema_still_gets_a_form(schema: Any) -> None:
    """Building, reading, checking and setting never raise, whatever the schema."""
    form = ParamForm(schema)
    assert isinstance(form.errors, list)
    form.value = {"a": [1, "x"]}
    assert form.value == {"a": [1, "x"]}
    form.raw_toggle.value = True
    form.raw_toggle.value = False
    assert form.value == {"a": [1, "x"]}
