"""Registry safety: no shell anywhere, and requests cannot reach past what the registry names.

A registry is trusted like code (SECURITY.md): it names programs and callables. These tests pin
what a *request* cannot do (pick another program, expand `${VAR}`, escape a URL segment), and
what loading a registry does and does not touch.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.conftest import SCRIPT, FaultServer
from toolcaller import ToolCaller

PACKAGE = Path(__file__).parents[2] / "toolcaller"
NASTY = ["; rm -rf {canary}", "$(touch {canary})", "`touch {canary}`", "| tee {canary}",
         "&& touch {canary}", "${HOME}", "$HOME", "*", "~", "'\"", "\\n", "{canary}; ls"]


def write(folder: Path, data: dict[str, Any]) -> Path:
    path = folder / "tools.json"
    path.write_text(json.dumps(data))
    return path


def entry(name: str, **impl: Any) -> dict[str, Any]:
    return {"name": name, "description": name, **impl}


class TestNoShell:
    def test_no_shell_in_the_package(self) -> None:
        """No module of the package starts a shell: no shell=True, os.system, os.popen…"""
        banned_calls = {"system", "popen", "getoutput", "getstatusoutput",
                        "create_subprocess_shell", "spawnl", "spawnlp", "execl", "execlp"}
        found = []
        for path in PACKAGE.rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.keyword) and node.arg == "shell":
                    found.append(f"{path}:{node.value.lineno} shell=")
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in banned_calls):
                    found.append(f"{path}:{node.lineno} {node.func.attr}()")
        assert found == []
        assert "shell=True" not in "".join(p.read_text() for p in PACKAGE.rglob("*.py"))

    def test_metacharacters_in_a_command_are_literal(self, tmp_path: Path) -> None:
        """`;`, `$(…)`, backticks, pipes, globs and `${VAR}` in argv reach the program as is."""
        canary = tmp_path / "pwned"
        args = [a.replace("{canary}", str(canary)) for a in NASTY]
        path = write(tmp_path, {"tools": [entry(
            "argv", script={"command": [sys.executable, str(SCRIPT), *args]})]})
        with ToolCaller.from_file(path) as caller:
            envelope = caller.call("argv", {"mode": "argv"}, retries=0).to_dict()
        assert envelope["result"] == args, envelope
        assert not canary.exists()

    def test_params_never_reach_argv_or_a_shell(self, tmp_path: Path) -> None:
        """Params travel as JSON on stdin; a param full of shell syntax changes no argument."""
        canary = tmp_path / "pwned"
        path = write(tmp_path, {"tools": [entry(
            "argv", script={"command": [sys.executable, str(SCRIPT), "fixed"]})]})
        with ToolCaller.from_file(path) as caller:
            envelope = caller.call("argv", {"mode": "argv", "x": f"$(touch {canary})",
                                            "y": f"; touch {canary}"}).to_dict()
        assert envelope["result"] == ["fixed"]
        assert not canary.exists()


class TestRequestsStayInside:
    def test_a_request_cannot_name_a_callable(self, tmp_path: Path) -> None:
        """toolName is looked up among the registry's names only: no import path, no file."""
        path = write(tmp_path, {"tools": [
            entry("ok", python="tests.reliability.tools_faulty:add")]})
        with ToolCaller.from_file(path) as caller:
            for name in ["os:system", "tests.reliability.tools_faulty:exit_now", "../ok",
                         "ok/../../etc/passwd", "subprocess.run", str(SCRIPT)]:
                envelope = caller.handle({"toolName": name, "params": {"command": "id"}})
                assert envelope["error"]["code"] == "TOOL_NOT_FOUND", name
                assert envelope["metadata"]["attempts"] == 0

    def test_params_are_not_expanded(self, tmp_path: Path, fault_server: FaultServer,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
        """`${VAR}` in a param is sent literally: a request cannot read the environment."""
        monkeypatch.setenv("TC_REL_PRIVATE", "private-value-123")
        path = write(tmp_path, {"tools": [
            entry("echo", http={"method": "POST", "url": fault_server.url + "/echo"}),
            entry("get", http={"url": fault_server.url + "/path/{id}"}),
            entry("env", script={"command": [sys.executable, str(SCRIPT)]}),
        ]})
        with ToolCaller.from_file(path) as caller:
            posted = caller.call("echo", {"v": "${TC_REL_PRIVATE}"}).to_dict()
            got = caller.call("get", {"id": "${TC_REL_PRIVATE}"}).to_dict()
            ran = caller.call("env", {"mode": "argv", "v": "${TC_REL_PRIVATE}"}).to_dict()
        assert json.loads(posted["result"]["body"]) == {"v": "${TC_REL_PRIVATE}"}
        assert "private-value" not in json.dumps([posted, got, ran])

    def test_a_url_param_stays_in_its_segment(self, tmp_path: Path,
                                              fault_server: FaultServer) -> None:
        """`{id}` is percent-encoded, `/` included: `../` cannot climb the server's path."""
        path = write(tmp_path, {"tools": [entry("get", http={
            "url": fault_server.url + "/path/items/{id}"})]})
        with ToolCaller.from_file(path) as caller:
            envelope = caller.call("get", {"id": "../../admin?x=1#y"}).to_dict()
        assert envelope["result"]["path"] == "/path/items/..%2F..%2Fadmin%3Fx%3D1%23y"

    def test_expanded_values_are_not_expanded_again(self, tmp_path: Path,
                                                    fault_server: FaultServer,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
        """A variable whose value holds `${OTHER}` is used literally (one pass, no recursion)."""
        monkeypatch.setenv("TC_REL_OUTER", "${TC_REL_INNER}")
        monkeypatch.setenv("TC_REL_INNER", "inner-secret")
        path = write(tmp_path, {"tools": [entry("echo", http={
            "method": "POST", "url": fault_server.url + "/echo",
            "headers": {"X-Value": "${TC_REL_OUTER}"}})]})
        with ToolCaller.from_file(path) as caller:
            envelope = caller.call("echo", {}).to_dict()
        assert envelope["result"]["headers"]["X-Value"] == "${TC_REL_INNER}"


class TestWhatARegistryTouches:
    def test_loading_imports_and_runs_nothing(self, tmp_path: Path) -> None:
        """Loading and discovery import no python target and start no script (SPEC rule 9)."""
        (tmp_path / "boom_module.py").write_text(
            f"open({str(tmp_path / 'imported')!r}, 'w').close()\ndef fn(): return 1\n")
        path = write(tmp_path, {"tools": [
            entry("py", python="boom_module:fn"),
            entry("file", python="boom_module.py:fn"),
            entry("sh", script={"command": ["touch", str(tmp_path / "ran")]}),
        ]})
        with ToolCaller.from_file(path) as caller:
            assert caller.discover().metadata.total == 3
        assert not (tmp_path / "imported").exists()
        assert not (tmp_path / "ran").exists()

    def test_a_registry_module_does_not_shadow_the_standard_library(self,
                                                                    tmp_path: Path) -> None:
        """The registry folder joins sys.path at the end: its json.py is not `json`."""
        (tmp_path / "json.py").write_text("def dumps(*a, **k): return 'shadowed'\n")
        path = write(tmp_path, {"tools": [entry("dumps", python="json:dumps")]})
        with ToolCaller.from_file(path) as caller:
            envelope = caller.call("dumps", {"obj": [1]}).to_dict()
        assert envelope["result"] == "[1]"

    def test_two_registries_with_a_module_of_the_same_name(self, tmp_path: Path) -> None:
        """Each registry's `tools_local:which` runs its own folder's module, not the other's."""
        callers = []
        for name in ("first", "second"):
            folder = tmp_path / name
            folder.mkdir()
            (folder / "tools_local_rel.py").write_text(f"def which(): return {name!r}\n")
            path = write(folder, {"tools": [entry("which", python="tools_local_rel:which")]})
            callers.append(ToolCaller.from_file(path))
        try:
            got = [c.call("which").to_dict().get("result") for c in callers]
        finally:
            for caller in callers:
                caller.close()
            sys.modules.pop("tools_local_rel", None)
        assert got == ["first", "second"]

    def test_relative_paths_resolve_against_the_registry_folder(self, tmp_path: Path) -> None:
        """`file.py:fn`, script paths and cwd are relative to the registry, not the process."""
        folder = tmp_path / "reg"
        (folder / "bin").mkdir(parents=True)
        (folder / "bin" / "here.py").write_text(
            "import json, os\nprint(json.dumps(os.getcwd()))\n")
        (folder / "mod.py").write_text("def where(): return __file__\n")
        path = write(folder, {"tools": [
            entry("file", python="mod.py:where"),
            entry("script", script={"command": [sys.executable, "bin/here.py"], "cwd": "bin"}),
        ]})
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        cwd = os.getcwd()
        os.chdir(elsewhere)
        try:
            with ToolCaller.from_file(path) as caller:
                file_result = caller.call("file").to_dict()["result"]
                script_result = caller.call("script").to_dict()["result"]
        finally:
            os.chdir(cwd)
        assert Path(file_result) == folder / "mod.py"
        assert Path(script_result) == folder / "bin"

    def test_symlinks_and_parent_paths_are_followed(self, tmp_path: Path) -> None:
        """Documented: a registry may name `../x.py` or a symlink; the engine follows it.

        Nothing confines a registry to its folder: it is trusted like code (SECURITY.md).
        """
        outside = tmp_path / "outside.py"
        outside.write_text("def fn(): return 'outside'\n")
        folder = tmp_path / "reg"
        folder.mkdir()
        (folder / "link.py").symlink_to(outside)
        path = write(folder, {"tools": [entry("up", python="../outside.py:fn"),
                                        entry("link", python="link.py:fn")]})
        with ToolCaller.from_file(path) as caller:
            assert caller.call("up").result == "outside"
            assert caller.call("link").result == "outside"
