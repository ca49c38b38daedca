"""Strict-mode export: strict schemas where the schema allows, the others listed with why."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from toolcaller import Tool, ToolCaller, UsageError
from toolcaller.core.schema import ParamsValidator
from toolcaller.export import (
    ToolList,
    to_anthropic,
    to_gemini,
    to_mcp,
    to_openai,
    to_openai_tools,
)
from toolcaller.llm import drop_absent_nulls, strict_schema

BOOKING = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "Where."},
        "nights": {"type": "integer", "minimum": 1, "default": 1},
        "room": {"type": "string", "enum": ["single", "double"]},
        "guest": {"type": "object", "properties": {
            "name": {"type": "string", "minLength": 1},
            "email": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "uri"}}, "required": ["name"]},
        "extras": {"type": "array", "items": {"$ref": "#/$defs/extra"}, "uniqueItems": True},
        "when": {"oneOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
    },
    "required": ["city", "guest"],
    "$defs": {"extra": {"type": "object", "properties": {"kind": {"type": "string"}},
                        "required": ["kind"]}},
}


def is_strict(schema: Any) -> bool:
    """Every object lists its properties, requires them all, and allows nothing else."""
    if isinstance(schema, list):
        return all(is_strict(s) for s in schema)
    if not isinstance(schema, dict):
        return True
    if schema.get("type") == "object" or (isinstance(schema.get("type"), list)
                                          and "object" in schema["type"]):
        properties = schema.get("properties")
        if not isinstance(properties, dict) or schema.get("additionalProperties") is not False:
            return False
        if sorted(schema.get("required", [])) != sorted(properties):
            return False
    return all(is_strict(v) for k, v in schema.items() if k not in ("enum", "const", "default"))


def tool(name: str, schema: Any) -> Tool:
    return Tool(name, f"does {name}", schema, "python", lambda **kw: kw)


class TestStrictSchema:
    def test_every_object_is_closed_and_every_property_required(self) -> None:
        made, why = strict_schema(BOOKING)
        assert why is None
        assert is_strict(made)
        assert made["required"] == list(BOOKING["properties"])
        assert made["$defs"]["extra"]["additionalProperties"] is False

    def test_optional_properties_become_nullable(self) -> None:
        made, _ = strict_schema(BOOKING)
        props = made["properties"]
        assert props["nights"]["type"] == ["integer", "null"]
        assert props["room"] == {"type": ["string", "null"], "enum": ["single", "double", None]}
        assert props["extras"]["type"] == ["array", "null"]
        assert props["city"] == {"type": "string", "description": "Where."}  # required: as is
        assert props["guest"]["properties"]["email"]["type"] == ["string", "null"]

    def test_what_strict_mode_lacks_is_left_out_or_rewritten(self) -> None:
        made, _ = strict_schema(BOOKING)
        props = made["properties"]
        assert "default" not in props["nights"]
        assert props["nights"]["description"] == "Default: 1."
        assert "minLength" not in props["guest"]["properties"]["name"]
        assert props["guest"]["properties"]["site"] == {"type": ["string", "null"]}  # no uri
        assert props["guest"]["properties"]["email"]["format"] == "email"
        assert "uniqueItems" not in props["extras"]
        assert "oneOf" not in props["when"]
        assert len(props["when"]["anyOf"]) == 2

    def test_the_original_is_not_changed(self) -> None:
        before = copy.deepcopy(BOOKING)
        strict_schema(BOOKING)
        assert before == BOOKING

    @pytest.mark.parametrize(("schema", "why"), [
        ({"type": "object"}, "/: an object whose keys are not listed"),
        ({"type": "object", "properties": {"m": {"type": "object"}}},
         "/properties/m: an object whose keys are not listed"),
        ({"type": "object", "properties": {"m": {"type": "object", "properties": {},
                                                 "additionalProperties": {"type": "string"}}}},
         "/properties/m: an object whose keys are not listed"),
        ({"type": "object", "properties": {"a": {"description": "anything"}}},
         "/properties/a: a value of any type; strict mode needs a type"),
        ({"type": "object", "properties": {"a": {"type": "array"}}},
         "/properties/a: an array of items of any type"),
        ({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}},
         "/properties/a: 'allOf' has no strict form"),
        ({"type": "object", "properties": {"a": {"$ref": "other.json#/x"}}},
         "/properties/a: a $ref outside the schema ('other.json#/x')"),
        ({"anyOf": [{"type": "object"}]}, "/: the params schema is not an object schema"),
        (True, "/: the tool takes any params; strict mode needs them listed"),
    ], ids=["free root", "free object", "a map", "any value", "any items", "allOf", "remote ref",
            "union root", "true"])
    def test_what_cannot_be_strict_says_where_and_why(self, schema: Any, why: str) -> None:
        assert strict_schema(schema) == (None, why)

    def test_a_strict_models_call_validates_once_its_nulls_are_dropped(self) -> None:
        """Every property present, the left-out ones null: the tool's own schema then holds."""
        made, _ = strict_schema(BOOKING)
        call = {"city": "Oslo", "nights": None, "room": None, "extras": None, "when": None,
                "guest": {"name": "Ada", "email": None, "site": None}}
        assert ParamsValidator(made).violations(call) == []
        assert ParamsValidator(BOOKING).violations(call) != []
        params = drop_absent_nulls(call, BOOKING)
        assert params == {"city": "Oslo", "when": None, "guest": {"name": "Ada"}}
        assert ParamsValidator(BOOKING).violations(params) == []


class TestExport:
    def test_openai_chat_and_responses_shapes(self) -> None:
        tools = [tool("hotel.book", BOOKING), tool("free.form", {"type": "object"})]
        chat = to_openai(tools, strict=True)
        assert isinstance(chat, ToolList)
        assert isinstance(chat, list)
        assert chat.not_strict == {"free.form": "/: an object whose keys are not listed"}
        assert chat[0]["function"]["name"] == "hotel_book"
        assert chat[0]["function"]["strict"] is True
        assert chat[1]["function"]["strict"] is False
        assert chat[1]["function"]["parameters"] == {"type": "object"}  # exported as it is
        responses = to_openai(tools, strict=True, api="responses")
        assert [(r["name"], r["strict"]) for r in responses] == [("hotel_book", True),
                                                                 ("free_form", False)]
        assert to_openai(tools) == to_openai_tools(tools)  # not strict: as before
        with pytest.raises(UsageError, match="api must be 'chat' or 'responses'"):
            to_openai(tools, api="assistants")  # type: ignore[arg-type]

    def test_anthropic_gemini_and_mcp_likewise(self) -> None:
        tools = [tool("hotel.book", BOOKING)]
        assert to_anthropic(tools, strict=True)[0]["strict"] is True
        assert is_strict(to_anthropic(tools, strict=True)[0]["input_schema"])
        assert "strict" not in to_anthropic(tools)[0]
        declaration = to_gemini(tools, strict=True)[0]
        assert declaration["name"] == "hotel_book"
        assert is_strict(declaration["parametersJsonSchema"])
        assert to_gemini(tools)[0]["parametersJsonSchema"] == BOOKING
        listing = to_mcp(tools, strict=True)
        assert listing[0]["name"] == "hotel.book"
        assert is_strict(listing[0]["inputSchema"])

    def test_the_sdks_accept_the_definitions(self) -> None:
        tools = [tool("hotel.book", BOOKING), tool("free.form", {"type": "object"})]
        pytest.importorskip("openai")
        pytest.importorskip("anthropic")
        genai = pytest.importorskip("google.genai.types")
        from anthropic.types import ToolParam
        from openai.types.chat import ChatCompletionFunctionToolParam
        from openai.types.responses import FunctionToolParam
        from pydantic import TypeAdapter

        for strict in (False, True):
            for entry in to_openai(tools, strict=strict):
                TypeAdapter(ChatCompletionFunctionToolParam).validate_python(entry, strict=True)
            for entry in to_openai(tools, strict=strict, api="responses"):
                TypeAdapter(FunctionToolParam).validate_python(entry, strict=True)
            for entry in to_anthropic(tools, strict=strict):
                TypeAdapter(ToolParam).validate_python(entry, strict=True)
            for entry in to_gemini(tools, strict=strict):
                genai.FunctionDeclaration.model_validate(entry)
            mcp = pytest.importorskip("mcp.types")
            for entry in to_mcp(tools, strict=strict):
                mcp.Tool.model_validate(entry)


def test_the_demo_registry_strict_ready_before_and_after() -> None:
    """Before: no exported tool is strict; with strict=True, every one that can be is."""
    with ToolCaller() as caller:
        tools = caller.registry.static_tools()
    plain = to_openai_tools(tools)
    strict = to_openai(tools, strict=True)
    flagged_before = sum(t["function"].get("strict") is True for t in plain)
    rules_held_before = sum(is_strict(t["function"]["parameters"]) for t in plain)
    flagged_after = sum(t["function"]["strict"] for t in strict)
    print(f"\ndemo registry: {len(tools)} tools; exported strict before: {flagged_before} "
          f"({rules_held_before} schemas happened to follow the rules); with strict=True: "
          f"{flagged_after}; not strict: {sorted(strict.not_strict)}")
    assert flagged_before == 0
    assert flagged_after == len(tools) - len(strict.not_strict)
    assert all(is_strict(t["function"]["parameters"]) for t in strict if t["function"]["strict"])
    assert all(why.endswith("an object whose keys are not listed")
               for why in strict.not_strict.values())
