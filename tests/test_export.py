"""Schema export for OpenAI, Anthropic and MCP: names mapped both ways, schemas untouched."""

from __future__ import annotations

import copy
import re

import pytest

from toolcaller.core.tool import Tool
from toolcaller.export import (
    NameMap,
    exported_name,
    to_anthropic_tools,
    to_mcp_tools,
    to_openai_tools,
    tool_name_map,
)

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"$ref": "#/$defs/n"}},
    "required": ["a", "b"],
    "$defs": {"n": {"type": "number", "minimum": 0}},
}


def make(name: str, schema=None, **kwargs) -> Tool:
    return Tool(name, f"does {name}", ADD_SCHEMA if schema is None else schema, "python",
                lambda: None, **kwargs)


TOOLS = [
    make("math.add"),
    make("math_add"),
    make("math:add"),
    make("text.echo", True),
    make("ok-name_1"),
    make("x" * 80),
    make("ünïcode.tool"),
]


class TestNames:
    def test_every_exported_name_is_valid_and_unique(self):
        names = tool_name_map(TOOLS)
        exported = [names.exported(t.name) for t in TOOLS]
        assert all(VALID.match(n) for n in exported), exported
        assert len(set(exported)) == len(TOOLS)

    def test_the_mapping_round_trips(self):
        names = tool_name_map(TOOLS)
        for tool in TOOLS:
            assert names.original(names.exported(tool.name)) == tool.name

    def test_valid_names_are_kept_and_others_become_readable(self):
        names = tool_name_map(TOOLS)
        assert names.exported("math_add") == "math_add"
        assert names.exported("ok-name_1") == "ok-name_1"
        assert names.exported("text.echo") == "text_echo"
        assert re.fullmatch(r"math_add_[0-9a-f]{8}", names.exported("math.add"))
        assert names.exported("math.add") != names.exported("math:add")
        assert len(names.exported("x" * 80)) == 64

    def test_the_mapping_does_not_depend_on_order(self):
        forward = tool_name_map(TOOLS).to_exported
        backward = tool_name_map(list(reversed(TOOLS))).to_exported
        assert forward == backward

    def test_exported_name_alone(self):
        assert exported_name("math.add") == "math_add"
        assert exported_name("fine") == "fine"
        assert exported_name("") == "_"

    def test_an_unknown_name_is_a_key_error(self):
        with pytest.raises(KeyError):
            NameMap().original("nope")


class TestFormats:
    def test_openai_function_format(self):
        (entry,) = to_openai_tools([make("math.add")])
        assert entry == {
            "type": "function",
            "function": {"name": "math_add", "description": "does math.add",
                         "parameters": ADD_SCHEMA},
        }

    def test_anthropic_format(self):
        (entry,) = to_anthropic_tools([make("math.add")])
        assert entry == {"name": "math_add", "description": "does math.add",
                         "input_schema": ADD_SCHEMA}

    def test_names_in_a_listing_follow_the_map(self):
        names = tool_name_map(TOOLS)
        listed = [e["function"]["name"] for e in to_openai_tools(TOOLS)]
        assert listed == [names.exported(t.name) for t in TOOLS]
        assert [e["name"] for e in to_anthropic_tools(TOOLS)] == listed

    def test_schemas_are_passed_through_untouched_and_copied(self):
        original = copy.deepcopy(ADD_SCHEMA)
        (entry,) = to_anthropic_tools([make("math.add")])
        assert entry["input_schema"] == original
        entry["input_schema"]["properties"]["a"]["type"] = "string"
        assert original == ADD_SCHEMA

    @pytest.mark.parametrize(
        ("schema", "expected"),
        [(True, {"type": "object"}),
         (False, {"type": "object", "properties": {}, "additionalProperties": False})],
        ids=["true", "false"],
    )
    def test_boolean_schemas_become_object_schemas(self, schema, expected):
        tool = make("t", schema)
        assert to_openai_tools([tool])[0]["function"]["parameters"] == expected
        assert to_anthropic_tools([tool])[0]["input_schema"] == expected
        assert to_mcp_tools([tool])[0]["inputSchema"] == expected

    def test_discovery_dicts_are_accepted(self):
        info = make("math.add", metadata={"tags": ["math"]}).info()
        assert to_openai_tools([info]) == to_openai_tools([make("math.add")])
        assert to_mcp_tools([info])[0]["name"] == "math.add"


class TestMcp:
    def test_mcp_listing_keeps_names_and_carries_annotations(self):
        tool = make("time.get", metadata={
            "title": "Get time", "annotations": {"readOnlyHint": True},
            "outputSchema": {"type": "object"}})
        assert to_mcp_tools([tool]) == [{
            "name": "time.get", "title": "Get time", "description": "does time.get",
            "inputSchema": ADD_SCHEMA, "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True},
        }]

    def test_an_idempotent_tool_says_so(self):
        entry = to_mcp_tools([make("a.b", idempotent=True)])[0]
        assert entry["annotations"] == {"idempotentHint": True}
        assert "annotations" not in to_mcp_tools([make("a.b")])[0]

    def test_a_listing_is_valid_for_the_mcp_sdk(self):
        types = pytest.importorskip("mcp.types")
        for entry in to_mcp_tools(TOOLS):
            types.Tool.model_validate(entry)
