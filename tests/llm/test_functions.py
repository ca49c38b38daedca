"""Function definitions in every format become tools; bound, they run; registry files list them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolcaller import RegistryError, Tool, ToolCaller, UsageError
from toolcaller.export import to_anthropic, to_gemini, to_mcp, to_openai
from toolcaller.llm import import_functions

PARAMS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = {"name": "get_weather", "description": "Weather for a city.", "parameters": PARAMS}

FORMATS = {
    "openai-chat": {"type": "function", "function": WEATHER},
    "openai-responses": {"type": "function", **WEATHER, "strict": False},
    "anthropic": {"name": "get_weather", "description": "Weather for a city.",
                  "input_schema": PARAMS},
    "gemini": {"name": "get_weather", "description": "Weather for a city.",
               "parametersJsonSchema": PARAMS},
    "mcp": {"name": "get_weather", "description": "Weather for a city.", "inputSchema": PARAMS,
            "annotations": {"readOnlyHint": True}},
    "function": WEATHER,
}


def only(tools: list[Tool]) -> Tool:
    (made,) = tools
    return made


class TestFormats:
    @pytest.mark.parametrize(("kind", "definition"), FORMATS.items(), ids=list(FORMATS))
    def test_each_format_gives_the_same_tool(self, kind: str, definition: Any) -> None:
        made = only(import_functions([definition]))
        assert (made.name, made.description, made.params_schema) == (
            "get_weather", "Weather for a city.", PARAMS)
        assert made.metadata["imported"] == {"format": kind}

    @pytest.mark.parametrize("container", [
        {"tools": [FORMATS["openai-chat"]]},
        {"functions": [WEATHER]},
        [{"functionDeclarations": [FORMATS["gemini"]]}],
        {"function_declarations": [FORMATS["gemini"]]},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [FORMATS["mcp"]], "nextCursor": None}},
        FORMATS["anthropic"],
    ], ids=["request tools", "legacy functions", "gemini tools", "gemini snake", "mcp result",
            "one definition"])
    def test_containers_are_opened(self, container: Any) -> None:
        assert only(import_functions(container)).name == "get_weather"

    def test_gemini_openapi_schemas_are_made_json_schema(self) -> None:
        declaration = {"name": "find", "parameters": {
            "type": "OBJECT", "properties": {
                "q": {"type": "STRING"},
                "limit": {"type": "INTEGER", "nullable": True, "format": "int32"}},
            "required": ["q"]}}
        made = only(import_functions({"functionDeclarations": [declaration]}, "gemini"))
        assert made.params_schema == {"type": "object", "properties": {
            "q": {"type": "string"},
            "limit": {"type": ["integer", "null"], "format": "int32"}}, "required": ["q"]}
        assert [c["at"] for c in made.metadata["imported"]["changes"]] == [
            "/type", "/properties/q/type", "/properties/limit/type",
            "/properties/limit/nullable"]

    def test_sdk_objects_are_read_as_their_json(self) -> None:
        types = pytest.importorskip("mcp.types")
        listed = types.Tool(name="get_weather", description="Weather for a city.",
                            input_schema=PARAMS)
        assert only(import_functions([listed])).params_schema == PARAMS

    @pytest.mark.parametrize("export", [to_openai, to_anthropic, to_gemini, to_mcp],
                             ids=lambda f: f.__name__)
    def test_exported_tools_import_back(self, export: Any) -> None:
        made = only(import_functions([FORMATS["anthropic"]]))
        again = only(import_functions(export([made])))
        assert (again.name, again.params_schema) == (made.name, made.params_schema)

    def test_a_definition_without_parameters_takes_no_params(self) -> None:
        made = only(import_functions([{"name": "now", "description": "The time."}]))
        assert made.params_schema == {"type": "object", "properties": {}}


class TestRefusals:
    @pytest.mark.parametrize(("definitions", "message"), [
        ([{"type": "web_search"}], r"definitions\[0\]: not a function definition \(a 'web_search'"),
        ([{"description": "no name"}], r"definitions\[0\]: not a function definition \(no 'name'"),
        ([WEATHER, WEATHER], r"definitions\[1\]: a second definition is named 'get_weather'"),
        ([{"name": "bad name"}], r"needs a name .* got 'bad name'"),
        ("get_weather", "expected a function definition"),
    ], ids=["hosted tool", "no name", "duplicate", "bad name", "text"])
    def test_what_cannot_be_read_is_a_usage_error_saying_where(self, definitions: Any,
                                                                message: str) -> None:
        with pytest.raises(UsageError, match=message):
            import_functions(definitions)

    def test_a_forced_format_refuses_other_shapes(self) -> None:
        with pytest.raises(UsageError, match="expected a anthropic function definition, this one "
                                             "is written as mcp"):
            import_functions([FORMATS["mcp"]], "anthropic")
        with pytest.raises(UsageError, match="format must be one of auto, openai"):
            import_functions([WEATHER], "cohere")  # type: ignore[arg-type]

    def test_a_schema_that_stays_unusable_is_the_tools_problem(self) -> None:
        made = only(import_functions([{"name": "f", "parameters": {
            "type": "object", "properties": {"x": {"$ref": "#/nowhere"}}}}]))
        assert made.problem is not None
        assert made.problem.startswith("its paramsSchema cannot be used")


class TestImplementations:
    def test_an_unbound_definition_fails_saying_how_to_bind_it(self) -> None:
        caller = ToolCaller(import_functions([WEATHER]))
        envelope = caller.call("get_weather", {"city": "Oslo"})
        assert envelope.code == "EXECUTION_ERROR"
        assert "caller.bind('get_weather', fn)" in envelope.error.message
        assert caller.discover().result["problems"][0]["tool"] == "get_weather"

    def test_bind_gives_it_an_implementation(self) -> None:
        caller = ToolCaller(import_functions([WEATHER]))
        bound = caller.bind("get_weather", lambda city: {"city": city, "sky": "clear"})
        assert bound.problem is None
        assert caller.call("get_weather", {"city": "Oslo"}).result == {"city": "Oslo",
                                                                       "sky": "clear"}
        assert caller.call("get_weather", {}).code == "INVALID_PARAMS"  # its schema holds

    def test_bind_refuses_unknown_names_and_non_callables(self) -> None:
        caller = ToolCaller(import_functions([WEATHER]))
        with pytest.raises(UsageError, match="no tool named 'get_wether' to bind; did you mean "
                                             "'get_weather'"):
            caller.bind("get_wether", print)
        with pytest.raises(UsageError, match="needs a callable"):
            caller.bind("get_weather", "print")  # type: ignore[arg-type]

    def test_a_definition_can_carry_its_implementation(self) -> None:
        definition = {**FORMATS["anthropic"], "python": "builtins:dict",
                      "options": {"timeout": 500}, "metadata": {"tags": ["weather"]}}
        made = only(import_functions([definition]))
        assert (made.kind, made.target, made.options) == ("python", "builtins:dict",
                                                          {"timeout": 500})
        assert made.tags == ["weather"]
        assert ToolCaller([made]).call("get_weather", {"city": "Oslo"}).result == {"city": "Oslo"}

    def test_a_module_implements_the_definitions_by_name(self, tmp_path: Path) -> None:
        (tmp_path / "impl.py").write_text(
            "def get_weather(city):\n    return {'city': city}\n"
            "def math_add(a, b):\n    return a + b\n", encoding="utf-8")
        adds = {"name": "math.add", "parameters": {"type": "dict", "properties": {
            "a": {"type": "float"}, "b": {"type": "float"}}, "required": ["a", "b"]}}
        tools = import_functions([WEATHER, adds], python="impl.py", base_dir=tmp_path)
        caller = ToolCaller(tools)
        assert caller.call("math.add", {"a": 1, "b": 2.5}).result == 3.5
        assert caller.call("get_weather", {"city": "Oslo"}).result == {"city": "Oslo"}

    def test_files_of_json_or_json_lines_are_read(self, tmp_path: Path) -> None:
        (tmp_path / "defs.json").write_text(json.dumps([WEATHER]), encoding="utf-8")
        (tmp_path / "defs.jsonl").write_text(
            json.dumps(WEATHER) + "\n" + json.dumps({**WEATHER, "name": "other"}) + "\n",
            encoding="utf-8")
        assert only(import_functions(tmp_path / "defs.json")).name == "get_weather"
        assert [t.name for t in import_functions(tmp_path / "defs.jsonl")] == [
            "get_weather", "other"]
        (tmp_path / "bad.json").write_text("{nope", encoding="utf-8")
        with pytest.raises(UsageError, match=r"bad\.json: not valid JSON at line 1"):
            import_functions(tmp_path / "bad.json")


def _registry(tmp_path: Path, functions: Any) -> Path:
    (tmp_path / "defs.json").write_text(json.dumps({"tools": [
        FORMATS["openai-chat"],
        {"type": "function", "function": {"name": "math_add", "parameters": {
            "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"]}}}]}), encoding="utf-8")
    (tmp_path / "impl.py").write_text(
        "def get_weather(city):\n    return {'city': city, 'sky': 'clear'}\n"
        "def math_add(a, b):\n    return a + b\n", encoding="utf-8")
    registry = tmp_path / "tools.json"
    registry.write_text(json.dumps({"functions": functions}), encoding="utf-8")
    return registry


class TestRegistryFiles:
    def test_a_registry_lists_function_definitions_with_their_implementation(
            self, tmp_path: Path) -> None:
        spec = {"file": "defs.json", "format": "openai", "python": "impl.py"}
        with ToolCaller.from_file(_registry(tmp_path, spec)) as caller:
            assert caller.call("math_add", {"a": 2, "b": 3}).result == 5
            replies = caller.run_tool_calls({"role": "assistant", "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]})
        assert json.loads(replies.messages[0]["content"]) == {"city": "Oslo", "sky": "clear"}

    def test_a_list_of_files_and_names_that_clash(self, tmp_path: Path) -> None:
        spec = {"file": "defs.json", "python": "impl.py"}
        with pytest.raises(RegistryError, match=r"/functions/1: the function 'get_weather' has "
                                                r"the name of another tool"):
            ToolCaller.from_file(_registry(tmp_path, [spec, spec]))

    @pytest.mark.parametrize(("functions", "message"), [
        ({"file": "missing.json"}, "/functions: .*missing.json: cannot read"),
        ({"file": "defs.json", "format": "cohere"}, "/functions/format: 'cohere' is not one of"),
        ({"python": "impl.py"}, "/functions: 'file' is a required property"),
        ([{"file": "defs.json"}, {"nope": 1}], "/functions/1: 'file' is a required property"),
    ], ids=["missing file", "bad format", "no file", "bad second entry"])
    def test_a_bad_functions_entry_names_the_file_and_pointer(
            self, tmp_path: Path, functions: Any, message: str) -> None:
        with pytest.raises(RegistryError, match=message):
            ToolCaller.from_file(_registry(tmp_path, functions))

    @pytest.mark.integration
    def test_the_cli_calls_them(self, tmp_path: Path) -> None:
        registry = _registry(tmp_path, {"file": "defs.json", "python": "impl.py"})
        done = subprocess.run(
            [sys.executable, "-m", "toolcaller", "call", "math_add", "--params",
             '{"a": 1, "b": 2}', "--registry", str(registry)],
            capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["result"] == 3
