"""`toolcaller.sources.registry_file`: valid files load; a bad file is ONE clear RegistryError."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import code_of
from toolcaller import RegistryError, ToolCaller, UsageError
from toolcaller.demo import DEMO_REGISTRY
from toolcaller.sources.registry_file import registry_schema, tools_from_data

TOOLS_PY = '''
def double(x: int) -> dict:
    return {"double": 2 * x}


def fail() -> None:
    raise RuntimeError("always")
'''


def entry(name: str = "t.one", **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": name, "description": "A tool.", "python": "tools.py:double"}
    base.update(extra)
    return base


def write(folder: Path, data: Any, name: str = "tools.json") -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = tmp_path / "reg"
    made.mkdir()
    (made / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
    return made


class TestValidFile:
    def test_from_file_loads_and_calls(self, folder: Path) -> None:
        """`ToolCaller.from_file` loads the tools; calls run them."""
        path = write(folder, {"$schema": "./registry.schema.json", "tools": [entry(
            paramsSchema={"type": "object", "properties": {"x": {"type": "integer"}},
                          "required": ["x"]},
            metadata={"tags": ["math"], "owner": "qa"})]})
        caller = ToolCaller.from_file(path)
        assert caller.handle({"toolName": "t.one", "params": {"x": 21}})["result"] == {
            "double": 42}
        listed = caller.handle({"action": "discover"})["result"]["tools"]
        assert listed == [{"name": "t.one", "description": "A tool.",
                           "paramsSchema": {"type": "object",
                                            "properties": {"x": {"type": "integer"}},
                                            "required": ["x"]},
                           "metadata": {"tags": ["math"], "owner": "qa"}}]

    def test_only_the_file_tools(self, folder: Path) -> None:
        """A caller from a file has that file's tools only (not the demo ones)."""
        caller = ToolCaller.from_file(write(folder, {"tools": [entry()]}))
        assert [t["name"] for t in caller.discover().result["tools"]] == ["t.one"]

    def test_defaults(self, folder: Path) -> None:
        """An entry without paramsSchema or metadata gets an open schema and empty metadata."""
        tool = tools_from_data({"tools": [entry()]})[0]
        assert tool.params_schema == {"type": "object"}
        assert tool.metadata == {}
        assert tool.kind == "python"

    def test_entry_options_isolation_idempotent(self, folder: Path) -> None:
        """An entry's options, isolation and idempotent are kept and used."""
        path = write(folder, {"tools": [entry("t.fail", python="tools.py:fail",
                                              options={"retries": 0}, isolation="thread",
                                              idempotent=True)]})
        caller = ToolCaller.from_file(path)
        tool = caller.registry.get("t.fail")
        assert tool is not None
        assert (tool.options, tool.isolation, tool.idempotent) == (
            {"retries": 0}, "thread", True)
        data = caller.handle({"toolName": "t.fail"})
        assert code_of(data) == "EXECUTION_ERROR"
        assert data["metadata"]["attempts"] == 1

    def test_empty_registry(self, folder: Path) -> None:
        """`{}` and `{"tools": []}` are valid, empty registries."""
        assert tools_from_data({}) == []
        assert len(ToolCaller.from_file(write(folder, {"tools": []})).registry) == 0

    def test_demo_registry_is_valid(self) -> None:
        """The embedded demo registry passes the registry schema."""
        data = json.loads(DEMO_REGISTRY.read_text(encoding="utf-8"))
        assert len(tools_from_data(data, str(DEMO_REGISTRY))) == len(data["tools"])

    def test_schema_is_shipped(self) -> None:
        """The registry JSON Schema ships with the package and is 2020-12."""
        assert registry_schema()["$schema"].endswith("2020-12/schema")


class TestRelativePaths:
    def test_file_path_resolves_against_the_registry_folder(
            self, folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """`"tools.py:fn"` is found beside the registry, whatever the working directory."""
        path = write(folder, {"tools": [entry()]})
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        monkeypatch.chdir(elsewhere)
        caller = ToolCaller.from_file(Path("..") / "reg" / path.name)
        assert caller.handle({"toolName": "t.one", "params": {"x": 1}})["result"] == {
            "double": 2}

    def test_module_beside_the_registry(self, folder: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
        """`"module:fn"` imports a module that sits beside the registry file."""
        module = f"regmod_{uuid.uuid4().hex}"
        (folder / f"{module}.py").write_text(TOOLS_PY, encoding="utf-8")
        monkeypatch.setattr(sys, "path", list(sys.path))
        monkeypatch.chdir(tmp_path)
        caller = ToolCaller.from_file(write(folder, {"tools": [entry(
            python=f"{module}:double")]}))
        data = caller.handle({"toolName": "t.one", "params": {"x": 5}})
        sys.modules.pop(module, None)
        assert data["result"] == {"double": 10}

    def test_missing_function_is_an_execution_error(self, folder: Path) -> None:
        """A python path to a missing function fails the call (permanent), not the load."""
        caller = ToolCaller.from_file(write(folder, {"tools": [entry(
            python="tools.py:nope")]}))
        data = caller.handle({"toolName": "t.one", "params": {"x": 1}})
        assert code_of(data) == "EXECUTION_ERROR"
        assert data["metadata"]["attempts"] == 1
        assert "nope" in data["error"]["message"]


BAD = [
    ("not-an-object", [], "", "object"),
    ("tools-not-a-list", {"tools": {}}, "/tools", "array"),
    ("missing-name", {"tools": [{"description": "d", "python": "m:f"}]}, "/tools/0", "name"),
    ("missing-description", {"tools": [{"name": "a", "python": "m:f"}]}, "/tools/0",
     "description"),
    ("empty-name", {"tools": [entry("")]}, "/tools/0/name", ""),
    ("name-with-space", {"tools": [entry("two words")]}, "/tools/0/name", ""),
    ("two-implementations", {"tools": [entry(script={"command": ["x"]})]}, "/tools/0",
     "exactly one implementation"),
    ("no-implementation", {"tools": [{"name": "a", "description": "d"}]}, "/tools/0",
     "one implementation"),
    ("duplicate-names", {"tools": [entry("a"), entry("b"), entry("a")]}, "/tools/2/name",
     "already used"),
    ("params-schema-not-object", {"tools": [entry(paramsSchema="object")]},
     "/tools/0/paramsSchema", "object"),
    ("unknown-key", {"tools": [entry(colour="red")]}, "/tools/0", "colour"),
    ("unknown-top-level-key", {"tools": [], "tool": []}, "", "tool"),
    ("negative-timeout", {"tools": [entry(options={"timeout": -5})]},
     "/tools/0/options/timeout", "-5"),
    ("string-retries", {"tools": [entry(options={"retries": "x"})]},
     "/tools/0/options/retries", "integer"),
    ("fractional-retries", {"tools": [entry(options={"retries": 2.5})]},
     "/tools/0/options/retries", "integer"),
    ("unknown-option", {"tools": [entry(options={"timout": 5})]}, "/tools/0/options", "timout"),
    ("bad-format", {"tools": [entry(options={"format": "xml"})]},
     "/tools/0/options/format", "xml"),
    ("timeout-over-a-day", {"tools": [entry(options={"timeout": 100_000_000})]},
     "/tools/0/options/timeout", ""),
    ("bad-isolation", {"tools": [entry(isolation="vm")]}, "/tools/0/isolation", "vm"),
    ("empty-command", {"tools": [{"name": "s", "description": "d", "script": {"command": []}}]},
     "/tools/0/script/command", ""),
    ("empty-url", {"tools": [{"name": "h", "description": "d", "http": {"url": ""}}]},
     "/tools/0/http/url", ""),
    ("bad-tags", {"tools": [entry(metadata={"tags": "math"})]}, "/tools/0/metadata/tags",
     "array"),
    ("mcp-server-without-command-or-url", {"mcpServers": {"time": {"args": []}}},
     "/mcpServers/time", ""),
]


class TestBadFiles:
    @pytest.mark.parametrize(("data", "pointer", "fragment"), [b[1:] for b in BAD],
                             ids=[b[0] for b in BAD])
    def test_one_error_naming_file_pointer_problem(self, folder: Path, data: Any,
                                                   pointer: str, fragment: str) -> None:
        """A bad registry raises one RegistryError naming the file, the pointer and why."""
        path = write(folder, data, "broken.json")
        with pytest.raises(RegistryError) as caught:
            ToolCaller.from_file(path)
        error = caught.value
        message = str(error)
        assert "broken.json" in message
        assert error.source.endswith("broken.json")
        assert error.pointer == pointer
        assert f"{pointer or '/'}:" in message
        assert fragment in message
        assert "\n" not in message

    @pytest.mark.parametrize(
        ("text", "fragment"), [("{tools: []}", "not valid JSON"), ("", "not valid JSON"),
                               ('{"tools": [}', "line 1")],
        ids=["unquoted-key", "empty-file", "bad-array"],
    )
    def test_not_json(self, folder: Path, text: str, fragment: str) -> None:
        """A file that is not JSON says so, with the file name and the line and column."""
        with pytest.raises(RegistryError, match=fragment) as caught:
            ToolCaller.from_file(write(folder, text, "broken.json"))
        assert "broken.json" in str(caught.value)
        assert "column" in str(caught.value)

    def test_not_utf8(self, folder: Path) -> None:
        """A file that is not UTF-8 text says so."""
        path = folder / "binary.json"
        path.write_bytes(b"\xff\xfe\x00{")
        with pytest.raises(RegistryError, match=r"binary\.json"):
            ToolCaller.from_file(path)

    def test_missing_file(self, folder: Path) -> None:
        """A missing file is a RegistryError naming it (a UsageError, never an envelope)."""
        with pytest.raises(UsageError, match=r"absent\.json"):
            ToolCaller.from_file(folder / "absent.json")

    def test_source_name_in_tools_from_data(self) -> None:
        """`tools_from_data` names the source it is given."""
        with pytest.raises(RegistryError, match=r"^inline-source: /tools/0"):
            tools_from_data({"tools": [{"name": "x"}]}, "inline-source")


GOOD_SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
DANGLING = {"type": "object", "properties": {"x": {"$ref": "#/$defs/nope"}}}


def sized_registry(count: int) -> dict[str, Any]:
    """`count` tools; `t.bad` (the middle one) has a `$ref` to nowhere."""
    tools = [entry(f"t.tool{i}", paramsSchema=GOOD_SCHEMA) for i in range(count)]
    tools[count // 2] = entry("t.bad", paramsSchema=DANGLING)
    return {"tools": tools}


class TestOneRuleForEverySize:
    """Defects 4 and 5: a registry with an unusable paramsSchema loads whatever its size; the
    tool is listed in discovery's `problems`; its calls fail; the other tools work."""

    @pytest.mark.parametrize("count", [900, 2053])
    def test_from_file(self, folder: Path, count: int) -> None:
        """Below and above the old 1,000-tool limit, the file loads and behaves the same."""
        caller = ToolCaller.from_file(write(folder, sized_registry(count)))
        found = caller.handle({"action": "discover"})["result"]
        assert len(found["tools"]) == count
        [problem] = found["problems"]
        assert problem["tool"] == "t.bad"
        assert "$ref '#/$defs/nope' points to nothing" in problem["message"]
        bad = caller.handle({"toolName": "t.bad", "params": {"x": 1}})
        assert code_of(bad) == "EXECUTION_ERROR"
        assert bad["metadata"]["attempts"] == 0
        assert "'t.bad' cannot be called" in bad["error"]["message"]
        assert "#/$defs/nope" in bad["error"]["message"]
        good = caller.handle({"toolName": "t.tool1", "params": {"x": 21}})
        assert good["result"] == {"double": 42}
        caller.close()

    def test_a_filter_shows_only_its_tools_problems(self, folder: Path) -> None:
        """Discovery lists the problems of the tools it lists."""
        caller = ToolCaller.from_file(write(folder, sized_registry(10)))
        assert "problems" not in caller.handle({"action": "discover",
                                                "options": {"filter": "name:t.tool1"}})["result"]
        assert caller.discover("bad").result["problems"][0]["tool"] == "t.bad"

    @pytest.mark.integration
    @pytest.mark.parametrize("count", [900, 2053])
    def test_command_line(self, folder: Path, count: int) -> None:
        """`discover` exits 0 and lists the problem; calling the tool exits 1 with
        EXECUTION_ERROR before any attempt; a good tool's call exits 0."""
        path = str(write(folder, sized_registry(count)))

        def run(*args: str) -> tuple[int, dict[str, Any]]:
            done = subprocess.run([sys.executable, "-m", "toolcaller", "--registry", path, *args],
                                  capture_output=True, text=True, timeout=60, check=False)
            assert "Traceback" not in done.stderr, done.stderr
            return done.returncode, json.loads(done.stdout)

        status, found = run("discover")
        assert status == 0
        assert [p["tool"] for p in found["result"]["problems"]] == ["t.bad"]
        status, bad = run("call", "t.bad", "--params", '{"x": 1}')
        assert (status, code_of(bad), bad["metadata"]["attempts"]) == (1, "EXECUTION_ERROR", 0)
        assert "#/$defs/nope" in bad["error"]["message"]
        status, good = run("call", "t.tool0", "--params", '{"x": 2}')
        assert (status, good["result"]) == (0, {"double": 4})

    def test_valid_references_load_without_problems(self, folder: Path) -> None:
        """Schemas the old `$ref` check refused load, and their params are validated."""
        urn = "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed"
        schemas = [
            {"$defs": {"a%b": {"type": "integer"}}, "properties": {"x": {"$ref": "#/$defs/a%25b"}}},
            {"properties": {"x": {"$ref": "item.json"}},
             "$defs": {"item": {"$id": "item.json", "type": "integer"}}},
            {"$id": urn, "$defs": {"i": {"type": "integer"}},
             "properties": {"x": {"$ref": f"{urn}#/$defs/i"}}},
            {"properties": {"$ref": {"type": "string"}, "x": {"type": "integer"}}},
            {"properties": {"x": {"type": "integer"},
                            "s": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}},
        ]
        tools = [entry(f"t.ok{i}", paramsSchema=schema) for i, schema in enumerate(schemas)]
        caller = ToolCaller.from_file(write(folder, {"tools": tools}))
        assert "problems" not in caller.handle({"action": "discover"})["result"]
        for i in range(len(schemas)):
            assert caller.handle({"toolName": f"t.ok{i}", "params": {"x": 3}})["result"] == {
                "double": 6}
            assert code_of(caller.handle({"toolName": f"t.ok{i}", "params": {"x": "3"}})) == \
                "INVALID_PARAMS"
        caller.close()
