"""`toolcaller.sources.registry_file`: valid files load; a bad file is ONE clear RegistryError."""

from __future__ import annotations

import json
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
    ("bad-params-schema", {"tools": [entry(paramsSchema={"type": "objekt"})]},
     "/tools/0/paramsSchema", "objekt"),
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
