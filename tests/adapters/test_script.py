"""ScriptAdapter against real child processes (the scripts in tests/adapters/scripts/)."""

from __future__ import annotations

import asyncio
import json
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.conftest import HERE, SCRIPTS, is_alive, wait_gone
from toolcaller import testing
from toolcaller.adapters.base import AttemptContext, TextOutput
from toolcaller.adapters.script import _ERROR_MAP, ScriptAdapter, _Launch, _translate_errors
from toolcaller.core.tool import Tool
from toolcaller.errors import (
    ErrorCode,
    ExecutionError,
    InvalidParamsError,
    ToolCallError,
    ToolTimeoutError,
)

PY = sys.executable


def script_tool(command: list[str], *, base_dir: Path | None = HERE, **spec: Any) -> Tool:
    return Tool(
        name="demo.script",
        description="a test script",
        params_schema={"type": "object"},
        kind="script",
        target={"command": command, **spec},
        base_dir=base_dir,
    )


def script(name: str) -> list[str]:
    return [PY, f"scripts/{name}"]


@pytest.fixture
def invoke() -> Any:
    """Run one attempt through the adapter, timed as the engine does, on a fresh loop."""
    adapter = ScriptAdapter()

    def call(tool: Tool, params: dict[str, Any], ctx: AttemptContext | None = None,
             **options: Any) -> Any:
        return asyncio.run(testing.invoke(adapter, tool, params, ctx=ctx,
                                          **({"timeout": 10_000} | options)))

    return call


def read_pids(pidfile: Path) -> list[int]:
    deadline = time.monotonic() + 2
    while not pidfile.exists() or not pidfile.read_text():
        assert time.monotonic() < deadline, "the script never wrote its pids"
        time.sleep(0.01)
    return list(json.loads(pidfile.read_text()))


pytestmark = pytest.mark.integration


class TestOutput:
    def test_json_params_in_stdout_out(self, invoke: Any) -> None:
        """Params arrive as JSON on stdin; stdout comes back as text."""
        out = invoke(script_tool(script("echo_json.py")), {"a": 1, "s": "é"})
        assert isinstance(out, TextOutput)
        assert isinstance(out.data, str)
        assert json.loads(out.data)["params"] == {"a": 1, "s": "é"}

    def test_raw_text_is_str(self, invoke: Any) -> None:
        """With format raw, UTF-8 stdout is returned as str."""
        out = invoke(script_tool(script("emit.py")), {"kind": "x", "n": 5}, format="raw")
        assert out.data == "xxxxx"

    def test_raw_garbage_is_bytes(self, invoke: Any) -> None:
        """With format raw, stdout that is not UTF-8 is returned as bytes, untouched."""
        out = invoke(script_tool(script("emit.py")), {"kind": "garbage"}, format="raw")
        assert isinstance(out.data, bytes)
        assert out.data.startswith(b"\xff\xfe\x00\x80garbage")

    def test_json_garbage_does_not_crash(self, invoke: Any) -> None:
        """With format json, binary garbage becomes text with replacement characters."""
        out = invoke(script_tool(script("emit.py")), {"kind": "garbage"})
        assert isinstance(out.data, str)
        assert "\ufffd" in out.data

    def test_script_reading_no_stdin(self, invoke: Any) -> None:
        """A script that never reads stdin answers even when the params overflow the pipe."""
        out = invoke(script_tool(script("no_stdin.py")), {"blob": "x" * 2_000_000})
        assert json.loads(out.data) == {"ok": True}

    def test_large_stdin_and_stdout_at_once(self, invoke: Any) -> None:
        """Feeding and draining run together: `cat` of 2 MB of params does not deadlock."""
        params = {"blob": "y" * 2_000_000}
        out = invoke(script_tool(["cat"]), params)
        assert json.loads(out.data) == params

    def test_stdout_closed_early(self, invoke: Any) -> None:
        """A script that closes stdout and goes on working returns what it wrote."""
        out = invoke(script_tool(script("emit.py")), {"kind": "half"})
        assert json.loads(out.data) == {"partial": True}

    def test_output_at_cap_passes(self, invoke: Any) -> None:
        """Output of exactly maxOutputBytes is allowed."""
        tool = script_tool(script("emit.py"), maxOutputBytes=1000)
        assert len(invoke(tool, {"kind": "x", "n": 1000}).data) == 1000


class TestFailures:
    def test_nonzero_exit(self, invoke: Any) -> None:
        """A non-zero exit is a retryable EXECUTION_ERROR with the status and stderr's end."""
        with pytest.raises(ExecutionError) as info:
            invoke(script_tool(script("fail.py")), {"status": 3})
        err = info.value
        assert err.retryable
        assert err.details["exitStatus"] == 3
        assert err.details["stderr"].endswith("fatal: the thing failed\n")
        assert "exited with status 3: fatal: the thing failed" in err.message

    def test_stderr_tail_is_bounded(self, invoke: Any) -> None:
        """Only the last 2 KB of stderr travel in details."""
        with pytest.raises(ExecutionError) as info:
            invoke(script_tool(script("fail.py")), {"noise": 100_000})
        tail = info.value.details["stderr"]
        assert len(tail) <= 2048
        assert tail.endswith("fatal: the thing failed\n")

    def test_secret_from_env_var_is_masked(
        self, invoke: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A `${VAR}` value printed on stderr is masked and declared in ctx.secrets."""
        secret = "tok-3f9a7c1e55d2"
        monkeypatch.setenv("TC_TEST_SCRIPT_TOKEN", secret)
        tool = script_tool(script("fail.py"), env={"API_KEYISH": "${TC_TEST_SCRIPT_TOKEN}"})
        ctx = testing.attempt_context(timeout=10_000)
        with pytest.raises(ExecutionError) as info:
            invoke(tool, {"show": "API_KEYISH"}, ctx)
        assert secret in ctx.secrets
        assert secret not in str(info.value) + json.dumps(info.value.details)
        assert "using token *** for the request" in info.value.details["stderr"]

    def test_literal_value_of_secret_name_is_masked(self, invoke: Any) -> None:
        """A literal env value under a secret-looking name is masked too."""
        tool = script_tool(script("fail.py"), env={"DB_PASSWORD": "hunter2-literal"})
        with pytest.raises(ExecutionError) as info:
            invoke(tool, {"show": "DB_PASSWORD"})
        assert "hunter2-literal" not in json.dumps(info.value.details)

    def test_missing_env_var_is_permanent(self, invoke: Any) -> None:
        """An unset `${VAR}` fails before starting, naming the variable."""
        tool = script_tool(script("echo_json.py"), env={"K": "${TC_SURELY_UNSET_VAR}"})
        with pytest.raises(ExecutionError) as info:
            invoke(tool, {})
        assert not info.value.retryable
        assert "'TC_SURELY_UNSET_VAR' is not set" in info.value.message

    def test_killed_by_signal(self, invoke: Any) -> None:
        """A script killed by a signal is an EXECUTION_ERROR naming the signal."""
        with pytest.raises(ExecutionError) as info:
            invoke(script_tool(script("emit.py")), {"kind": "signal"})
        assert info.value.details["signal"] == "SIGTERM"
        assert "SIGTERM" in info.value.message

    def test_output_over_cap(self, invoke: Any) -> None:
        """Output beyond maxOutputBytes stops the script: a permanent EXECUTION_ERROR."""
        tool = script_tool(script("emit.py"), maxOutputBytes=1000)
        with pytest.raises(ExecutionError) as info:
            invoke(tool, {"kind": "x", "n": 5_000_000})
        assert not info.value.retryable
        assert "output exceeds 1000 bytes" in info.value.message

    def test_command_not_found(self, invoke: Any) -> None:
        """A program missing from PATH is a permanent error saying so."""
        with pytest.raises(ExecutionError) as info:
            invoke(script_tool(["tc-no-such-program-xyz"]), {})
        assert not info.value.retryable
        assert "'tc-no-such-program-xyz'" in info.value.message
        assert "not found on PATH" in info.value.message

    def test_not_executable(self, invoke: Any, tmp_path: Path) -> None:
        """A program file without the execute bit is a permanent error saying so."""
        (tmp_path / "tool.sh").write_text("#!/bin/sh\necho {}\n")
        tool = script_tool(["./tool.sh"], base_dir=tmp_path)
        with pytest.raises(ExecutionError) as info:
            invoke(tool, {})
        assert not info.value.retryable
        assert "is not executable" in info.value.message

    def test_missing_cwd(self, invoke: Any) -> None:
        """A working directory that does not exist is a permanent error naming it."""
        with pytest.raises(ExecutionError) as info:
            invoke(script_tool(script("echo_json.py"), cwd="no-such-dir"), {})
        assert not info.value.retryable
        assert "working directory" in info.value.message
        assert str(HERE / "no-such-dir") in info.value.message

    def test_invalid_entry(self, invoke: Any) -> None:
        """A `script` entry that does not fit the spec is a permanent error."""
        with pytest.raises(ExecutionError) as info:
            invoke(script_tool([], cwdd="typo"), {})
        assert not info.value.retryable
        assert "invalid `script` entry" in info.value.message

    def test_params_not_json(self, invoke: Any) -> None:
        """Params that JSON cannot carry (NaN) are INVALID_PARAMS, and nothing starts."""
        with pytest.raises(InvalidParamsError):
            invoke(script_tool(script("echo_json.py")), {"x": float("nan")})


class TestPaths:
    def test_relative_script_and_cwd_use_base_dir(
        self, invoke: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """A relative script path and cwd resolve against the registry folder, not the caller's."""
        monkeypatch.chdir(tmp_path)
        out = json.loads(invoke(script_tool(script("echo_json.py"), cwd="scripts"), {}).data)
        assert out["argv"][0] == str(SCRIPTS / "echo_json.py")
        assert out["cwd"] == str(SCRIPTS)

    def test_dot_slash_program(
        self, invoke: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """A program written `./name` runs from the registry folder."""
        program = tmp_path / "run.sh"
        program.write_text("#!/bin/sh\nexec cat\n")
        program.chmod(program.stat().st_mode | stat.S_IXUSR)
        monkeypatch.chdir(HERE)
        out = invoke(script_tool(["./run.sh"], base_dir=tmp_path), {"k": 1})
        assert json.loads(out.data) == {"k": 1}

    def test_other_arguments_untouched(self, invoke: Any) -> None:
        """Options, plain words and folders pass as they are; `./x` is always resolved."""
        command = [*script("echo_json.py"), "-v", "hello", "scripts", "./later.txt"]
        out = json.loads(invoke(script_tool(command), {}).data)
        assert out["argv"][1:] == ["-v", "hello", "scripts", str(HERE / "later.txt")]

    def test_without_base_dir_paths_stay_relative(
        self, invoke: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A tool with no registry folder keeps its paths relative to the working directory."""
        monkeypatch.chdir(HERE)
        out = json.loads(invoke(script_tool(script("echo_json.py"), base_dir=None), {}).data)
        assert out["argv"][0] == "scripts/echo_json.py"


class TestEnvironment:
    def test_env_extends_the_callers(self, invoke: Any) -> None:
        """By default the child gets the caller's environment plus `env`."""
        out = invoke(script_tool(script("emit.py"), env={"TC_EXTRA": 7}), {"kind": "env"})
        names = json.loads(out.data)
        assert "TC_EXTRA" in names
        assert "PATH" in names

    def test_inherit_env_false_starts_clean(self, invoke: Any) -> None:
        """With inheritEnv false the child sees only `env` (and what Python itself adds)."""
        tool = script_tool(script("emit.py"), env={"TC_EXTRA": "1"}, inheritEnv=False)
        names = json.loads(invoke(tool, {"kind": "env"}).data)
        assert "TC_EXTRA" in names
        assert "PATH" not in names
        assert "HOME" not in names


class TestEndOfCall:
    @pytest.mark.parametrize("grandchild", [False, True], ids=["alone", "with-grandchild"])
    def test_timeout_kills_the_group(self, invoke: Any, tmp_path: Path,
                                     grandchild: bool) -> None:
        """At its timeout the attempt is TIMEOUT, and every process of the group is gone."""
        pidfile = tmp_path / "pids.json"
        started = time.monotonic()
        with pytest.raises(ToolTimeoutError) as info:
            invoke(script_tool(script("hang.py")),
                   {"pidfile": str(pidfile), "grandchild": grandchild}, timeout=1000)
        assert time.monotonic() - started < 1.5
        assert info.value.code is ErrorCode.TIMEOUT
        assert "process group was killed" in info.value.message
        assert "stderr" in info.value.details
        pids = read_pids(pidfile)
        assert len(pids) == (2 if grandchild else 1)
        assert not is_alive(pids[0])
        assert all(wait_gone(pid) for pid in pids)

    @pytest.mark.parametrize("grandchild", [False, True], ids=["alone", "with-grandchild"])
    async def test_cancel_kills_the_group(self, tmp_path: Path, grandchild: bool) -> None:
        """Cancelling `invoke` (as a caller's cancel does) kills and reaps the whole group."""
        pidfile = tmp_path / "pids.json"
        tool = script_tool(script("hang.py"))
        coro = ScriptAdapter().invoke(tool, {"pidfile": str(pidfile), "grandchild": grandchild},
                                      testing.attempt_context(tool))
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(coro, 1.0)
        pids = read_pids(pidfile)
        assert len(pids) == (2 if grandchild else 1)
        assert not is_alive(pids[0])
        assert all(wait_gone(pid) for pid in pids)

    def test_closed_stdout_then_hang_times_out(self, invoke: Any, tmp_path: Path) -> None:
        """A script that closes stdout and hangs still times out and dies."""
        pidfile = tmp_path / "pids.json"
        with pytest.raises(ToolTimeoutError):
            invoke(script_tool(script("hang.py")), {"pidfile": str(pidfile),
                                                    "close_stdout": True}, timeout=800)
        assert all(wait_gone(pid) for pid in read_pids(pidfile))

    def test_exit_while_a_grandchild_holds_stdout(self, invoke: Any, tmp_path: Path) -> None:
        """A script that exits leaving a child on its stdout answers after a short grace,
        and the child is killed."""
        pidfile = tmp_path / "pids.json"
        started = time.monotonic()
        out = invoke(
            script_tool(script("hang.py")),
            {"pidfile": str(pidfile), "grandchild": True, "exit_now": True},
        )
        assert time.monotonic() - started < 2.0
        assert json.loads(out.data) == {}
        assert all(wait_gone(pid) for pid in read_pids(pidfile))

    def test_output_cap_kills_the_group(self, invoke: Any) -> None:
        """After an overflow the writer is gone: the call returns without waiting for it."""
        tool = script_tool(["sh", "-c", "yes"], maxOutputBytes=100_000)
        started = time.monotonic()
        with pytest.raises(ExecutionError, match="output exceeds 100000 bytes"):
            invoke(tool, {})
        assert time.monotonic() - started < 2.0


@pytest.mark.parametrize(
    ("exc", "code", "retryable", "text"),
    [
        (FileNotFoundError(2, "No such file", "prog"), ErrorCode.EXECUTION_ERROR, False, "found"),
        (PermissionError(13, "Permission denied"), ErrorCode.EXECUTION_ERROR, False, "executable"),
        (NotADirectoryError(20, "Not a directory", "/w"), ErrorCode.EXECUTION_ERROR, False, "/w"),
        (OSError(11, "Resource temporarily unavailable"), ErrorCode.EXECUTION_ERROR, True, "start"),
    ],
    ids=["not-found", "permission", "not-a-directory", "other-oserror"],
)
def test_error_map(exc: OSError, code: ErrorCode, retryable: bool, text: str) -> None:
    """Each start failure maps to one code, permanent or not, with the cause chained."""
    launch = _Launch(argv=["prog"], cwd="/w", env=None, stdin=b"{}", cap=10)
    with pytest.raises(ToolCallError) as info, _translate_errors("demo.script", launch):
        raise exc
    assert info.value.code is code
    assert info.value.retryable is retryable
    assert text in info.value.message
    assert info.value.__cause__ is exc


def test_error_map_is_exercised() -> None:
    """The table above covers every key of the adapter's error map."""
    assert set(_ERROR_MAP) == {FileNotFoundError, PermissionError, NotADirectoryError, OSError}
