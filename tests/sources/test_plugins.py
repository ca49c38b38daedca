"""`toolcaller.sources.plugins`: tools from installed packages (entry-point group)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from toolcaller import Tool, ToolCaller
from toolcaller.sources.plugins import GROUP, plugin_tools

MODULE = '''
from toolcaller import tool


@tool(name="fake.greet", tags=["fake"])
def greet(name: str) -> str:
    """Greet someone."""
    return "hi " + name


def shout(text: str) -> str:
    """Shout the text."""
    return text.upper()


def whisper(text: str) -> str:
    """Whisper the text."""
    return text.lower()


ALL = [shout, whisper]


def make_tools():
    def made() -> int:
        """Made by a factory."""
        return 1
    return [tool(name="fake.made")(made)]


NOT_A_TOOL = 42
'''


def install(root: Path, points: dict[str, str], module_source: str = MODULE) -> str:
    """Create a fake installed distribution under `root`; return its module's name."""
    module = f"fakeplug_{uuid.uuid4().hex[:12]}"
    (root / f"{module}.py").write_text(module_source, encoding="utf-8")
    info = root / "fakeplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fakeplug\nVersion: 0.1\n", encoding="utf-8")
    lines = [f"[{GROUP}]"] + [f"{name} = {target.format(m=module)}"
                              for name, target in points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return module


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    return root


def by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {t.name: t for t in tools}


class TestPluginTools:
    def test_decorated_tool(self, site: Path) -> None:
        """An entry point naming a `@tool` function gives that tool."""
        install(site, {"greet": "{m}:greet"})
        tools, problems = plugin_tools()
        assert problems == []
        assert by_name(tools)["fake.greet"].tags == ["fake"]

    def test_list_of_functions(self, site: Path) -> None:
        """An entry point naming a list of functions gives one tool per function."""
        install(site, {"all": "{m}:ALL"})
        tools, _ = plugin_tools()
        assert {"shout", "whisper"} <= set(by_name(tools))
        assert by_name(tools)["shout"].description == "Shout the text."

    def test_factory(self, site: Path) -> None:
        """An entry point naming a function with no params is called for its tools."""
        install(site, {"factory": "{m}:make_tools"})
        tools, _ = plugin_tools()
        assert "fake.made" in by_name(tools)

    def test_plain_function(self, site: Path) -> None:
        """An entry point naming a plain function with params makes it a tool."""
        install(site, {"shout": "{m}:shout"})
        tools, _ = plugin_tools()
        assert by_name(tools)["shout"].params_schema["required"] == ["text"]

    def test_tools_are_callable_through_a_caller(self, site: Path) -> None:
        """Plugin tools added to a caller answer calls."""
        install(site, {"greet": "{m}:greet"})
        tools, _ = plugin_tools()
        caller = ToolCaller(tools=tools)
        assert caller.handle({"toolName": "fake.greet", "params": {"name": "bo"}})[
            "result"] == "hi bo"

    @pytest.mark.parametrize(
        ("target", "fragment"), [
            ("fakeplug_missing_{m}:thing", "ModuleNotFoundError"),
            ("{m}:absent", "AttributeError"),
            ("{m}:NOT_A_TOOL", "42"),
        ],
        ids=["missing-module", "missing-attribute", "not-a-tool"],
    )
    def test_broken_plugin_is_reported_not_raised(self, site: Path, target: str,
                                                  fragment: str) -> None:
        """A broken plugin is listed as a problem; the good ones still load."""
        install(site, {"broken": target, "greet": "{m}:greet"})
        tools, problems = plugin_tools()
        assert "fake.greet" in by_name(tools)
        assert len(problems) == 1
        assert "broken" in problems[0]
        assert fragment in problems[0]

    def test_plugin_import_failure(self, site: Path) -> None:
        """A plugin module that raises on import is reported, not raised."""
        install(site, {"bad": "{m}:greet"}, module_source="raise RuntimeError('no import')\n")
        tools, problems = plugin_tools()
        assert "fake.greet" not in by_name(tools)
        assert any("no import" in p for p in problems)

    def test_no_plugins(self, site: Path) -> None:
        """With no plugin installed, nothing is found and nothing is wrong."""
        tools, problems = plugin_tools()
        assert not any(t.name.startswith("fake.") for t in tools)
        assert problems == []


@pytest.mark.integration
class TestCliPlugins:
    def test_plugins_flag(self, tmp_path: Path) -> None:
        """`--plugins` adds plugin tools to the CLI; a broken one is a warning on stderr."""
        root = tmp_path / "site"
        root.mkdir()
        install(root, {"greet": "{m}:greet", "broken": "{m}:absent"})
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
        done = subprocess.run(
            [sys.executable, "-m", "toolcaller", "call", "fake.greet", "--plugins",
             "--params", '{"name": "cli"}'],
            capture_output=True, text=True, env=env, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["result"] == "hi cli"
        assert "warning" in done.stderr
        assert "broken" in done.stderr
        assert "Traceback" not in done.stderr
