"""Loose schemas (BFCL's, Gemini's, OpenAPI 3.0's) become JSON Schema, each change reported."""

from __future__ import annotations

from typing import Any

import pytest

from toolcaller.core.schema import ParamsValidator, check_schema
from toolcaller.llm import import_functions


def imported(schema: Any) -> tuple[Any, list[dict[str, str]]]:
    (made,) = import_functions([{"name": "f", "parameters": schema}])
    assert made.problem is None or "no implementation" in made.problem
    return made.params_schema, made.metadata["imported"].get("changes", [])


def prop(schema: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "dict", "properties": {"x": schema}, **(
        {"required": required} if required is not None else {})}


RULES = [
    # written type → meant type (BFCL's Python and Java names, Gemini's upper case)
    *[(t, m) for t, m in [("dict", "object"), ("float", "number"), ("double", "number"),
                          ("long", "integer"), ("tuple", "array"), ("String", "string"),
                          ("char", "string"), ("Boolean", "boolean"), ("Array", "array"),
                          ("ArrayList", "array"), ("HashMap", "object"), ("STRING", "string"),
                          ("INTEGER", "integer")]],
]


class TestTypes:
    @pytest.mark.parametrize(("written", "meant"), RULES, ids=[r[0] for r in RULES])
    def test_type_names_become_json_schema_types(self, written: str, meant: str) -> None:
        schema, changes = imported(prop({"type": written}))
        assert schema["properties"]["x"]["type"] == meant
        assert {"at": "/properties/x/type", "change": f"type {written!r} → {meant!r}"} in changes

    @pytest.mark.parametrize("written", ["any", "", "Any", "TYPE_UNSPECIFIED"])
    def test_open_types_accept_any_value(self, written: str) -> None:
        schema, changes = imported(prop({"type": written, "description": "d"}))
        assert schema["properties"]["x"] == {"description": "d"}
        assert changes[-1]["change"] == f"type {written!r} accepts any value: type removed"

    def test_an_unknown_type_is_removed_and_said(self) -> None:
        schema, changes = imported(prop({"type": "Date"}))
        assert schema["properties"]["x"] == {}
        assert changes[-1]["change"] == "unknown type 'Date': type removed, any value is accepted"

    def test_type_lists_are_mapped_each(self) -> None:
        schema, _ = imported(prop({"type": ["float", "null", "double"]}))
        assert schema["properties"]["x"]["type"] == ["number", "null"]

    def test_json_schema_needs_no_change(self) -> None:
        schema = {"type": "object", "properties": {"x": {"type": "array", "items": {
            "type": "string", "enum": ["a"]}}}, "required": ["x"]}
        assert imported(schema) == (schema, [])

    def test_nested_schemas_are_walked(self) -> None:
        schema, changes = imported({"type": "dict", "properties": {"p": {
            "type": "array", "items": {"type": "dict", "properties": {"q": {"type": "float"}},
                                       "additionalProperties": {"type": "long"}}},
            "u": {"anyOf": [{"type": "String"}, {"type": "HashMap"}]}}})
        assert [c["at"] for c in changes] == [
            "/type", "/properties/p/items/type", "/properties/p/items/additionalProperties/type",
            "/properties/p/items/properties/q/type", "/properties/u/anyOf/0/type",
            "/properties/u/anyOf/1/type"]
        assert check_schema(schema) is None


class TestOtherRules:
    def test_nullable_adds_null(self) -> None:
        schema, changes = imported(prop({"type": "STRING", "nullable": True}))
        assert schema["properties"]["x"] == {"type": ["string", "null"]}
        assert changes[-1]["change"] == "nullable: true → null added to the type"

    def test_optional_leaves_required(self) -> None:
        schema, changes = imported(prop({"type": "string", "optional": "true"}, ["x"]))
        assert schema["required"] == []
        assert schema["properties"]["x"] == {"type": "string"}
        assert changes[-1]["change"] == "optional: 'true' → 'x' removed from required"

    def test_a_null_default_accepts_null(self) -> None:
        schema, _ = imported(prop({"type": "string", "enum": ["a", "b"], "default": None}))
        assert schema["properties"]["x"] == {"type": ["string", "null"],
                                             "enum": ["a", "b", None], "default": None}

    @pytest.mark.parametrize(("written", "fixed"), [
        ({"type": "integer", "default": "dontcare"},
         {"type": ["integer", "string"], "default": "dontcare"}),
        ({"type": "string", "enum": ["s", "ms"], "default": "N/A"},
         {"type": "string", "enum": ["s", "ms", "N/A"], "default": "N/A"}),
        ({"type": "number", "default": 1}, {"type": "number", "default": 1}),
        ({"type": "integer", "default": 2.0}, {"type": "integer", "default": 2.0}),
        ({"type": "boolean", "enum": [True], "default": 1},
         {"type": ["boolean", "integer"], "enum": [True, 1], "default": 1}),
    ], ids=["other type", "outside the enum", "int for number", "2.0 for integer", "1 is not true"])
    def test_a_default_the_schema_refuses_is_accepted(self, written: Any, fixed: Any) -> None:
        schema, _ = imported(prop(written))
        assert schema["properties"]["x"] == fixed
        assert ParamsValidator(schema).violations({"x": written["default"]}) == []

    def test_an_enum_on_an_array_moves_to_its_items(self) -> None:
        schema, changes = imported(prop({"type": "array", "enum": ["a", "b"],
                                         "items": {"type": "string"}}))
        assert schema["properties"]["x"] == {"type": "array",
                                             "items": {"type": "string", "enum": ["a", "b"]}}
        assert changes[-1]["change"] == "enum of an array → moved to its items"

    def test_tuple_items_become_prefix_items(self) -> None:
        schema, _ = imported(prop({"type": "tuple", "items": [{"type": "float"}]}))
        assert schema["properties"]["x"] == {"type": "array", "prefixItems": [{"type": "number"}]}
        assert check_schema(schema) is None
