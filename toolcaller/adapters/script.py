"""`ScriptAdapter`: runs a script tool as a child process: params on stdin, stdout as its output.

The tool's `target` is the registry entry's `script` object (`ScriptSpec`)::

    {"command": ["python3", "scripts/wc.py"], "cwd": "work", "env": {"TOKEN": "${WC_TOKEN}"},
     "inheritEnv": true, "maxOutputBytes": 10485760}

- **argv, never a shell.** `command` is the argv list; nothing is split or interpolated.
- **Paths** resolve against `tool.base_dir` (the registry file's folder) when the tool has one:
  a relative `cwd` is joined to it (no `cwd`: the child runs in the caller's working directory);
  the program `command[0]` is a path when it contains a `/` (`./run.sh`, `bin/tool`: joined to
  the folder), otherwise a name looked up on `PATH` (`python3`); an argument is joined to the
  folder when it starts with `./` or `../`, or when it is relative, does not start with `-` and
  names an existing *file* in the folder (`scripts/wc.py`). Everything else passes untouched.
- **Python**: a program named exactly `python`, `python3` or `python3.N` (the running version)
  is the caller's own interpreter, `sys.executable`: the one that has toolcaller and the
  caller's packages, where `PATH` may find another or none (Debian has no `python`). This is
  the rule Jupyter applies to kernel specs. Other Pythons are named by path
  (`/usr/bin/python3`), by another version (`python3.12`) or through `env`
  (`["env", "python3", …]`). Only `command[0]` is concerned; argv stays as written.
- **Environment**: the child gets the caller's environment plus `env`, whose values may read
  `${VAR}` from the caller's environment (see `toolcaller.core.templates`); `"inheritEnv": false`
  starts from `env` alone. Values read through `${VAR}`, and values of entries whose names look
  secret, are added to `AttemptContext.secrets` and masked in every message.
- **I/O**: params go to stdin as one line of compact JSON, then stdin is closed (a script that
  reads nothing is fine). stdout is the output: a `TextOutput` holding, for `format: json`, text
  decoded as UTF-8 (a leading BOM dropped; bad bytes become U+FFFD, so such output fails to parse:
  PARSE_ERROR), and for `format: raw` text when stdout is valid UTF-8, bytes otherwise.
- **End of a call**: the child leads a new process group (`process_group=0`; not a new session,
  which on Linux also means a new scheduler autogroup and made children measurably slower on a
  busy machine). When the call ends, however it ends, whatever is left of the group is killed
  with SIGKILL and the child is reaped, so nothing outlives the call (a tool that must leave a
  daemon behind has to `setsid` it). A script that exits while a child of its own keeps stdout
  open gets 0.2 s of grace. POSIX only.

Errors, one attempt each:

    exit status n != 0            ExecutionError            {"exitStatus": n, "stderr": tail}
    killed by a signal            ExecutionError            {"signal": "SIGSEGV", "stderr": tail}
    cancelled (its limit passed)  CancelledError re-raised  (group killed, child reaped; the
                                  engine's TIMEOUT carries {"stderr": tail})
    stdout > maxOutputBytes       ExecutionError permanent  {"maxOutputBytes": n, "stderr": tail}
    command or cwd not found,
    not executable, bad entry     ExecutionError permanent
    ${VAR} not set                ExecutionError permanent  (names the variable, not a value)
    other OSError at start        ExecutionError            (out of processes, memory: retried)

`tail` is the last 2 KB of stderr, decoded with replacement and with secrets masked.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from toolcaller._types import JSONObject
from toolcaller.adapters._pipes import Capped, ChildProtocol, Ending, Tail, kill_group
from toolcaller.adapters.base import AttemptContext, TextOutput, parse_entry
from toolcaller.core.redact import is_secret_name, mask_text
from toolcaller.core.templates import expand_vars
from toolcaller.core.tool import Tool
from toolcaller.errors import ExecutionError, InvalidParamsError, ToolCallError

__all__ = ["DEFAULT_MAX_OUTPUT_BYTES", "ScriptAdapter", "ScriptSpec"]

DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024
_PYTHON_NAMES = frozenset(
    {"python", f"python{sys.version_info[0]}", "python{}.{}".format(*sys.version_info[:2])}
)
"""Program names that mean the caller's own interpreter (see the module docstring)."""


class ScriptSpec(BaseModel):
    """The `script` object of a registry entry."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, coerce_numbers_to_str=True
    )

    command: list[str] = Field(min_length=1, description="argv: the program, then its arguments.")
    cwd: str | None = Field(None, description="Working directory; relative to the registry folder.")
    env: dict[str, str] = Field(
        default_factory=dict, description="Extra environment; values may read ${VAR}."
    )
    inherit_env: bool = Field(
        True, alias="inheritEnv", description="Start from the caller's environment."
    )
    max_output_bytes: int = Field(
        DEFAULT_MAX_OUTPUT_BYTES, alias="maxOutputBytes", gt=0, description="Cap on stdout."
    )


@dataclass(frozen=True, slots=True)
class _Plan:
    """A spec with its paths resolved (the adapter keeps one per tool)."""

    spec: ScriptSpec
    argv: list[str]
    cwd: str | None


@dataclass(frozen=True, slots=True)
class _Launch:
    """Everything one attempt needs to start the child."""

    argv: list[str]
    cwd: str | None
    env: dict[str, str] | None
    stdin: bytes
    cap: int


class ScriptAdapter:
    """Runs `script` tools: one child process per attempt, killed with its group when it ends."""

    kind = "script"

    def __init__(self) -> None:
        self._plans: weakref.WeakKeyDictionary[Tool, _Plan] = weakref.WeakKeyDictionary()

    async def invoke(self, tool: Tool, params: JSONObject, ctx: AttemptContext) -> TextOutput:
        """Run the script once on the running loop; cancellation kills its process group."""
        launch = self._prepare(tool, params, ctx)
        loop = asyncio.get_running_loop()
        with _translate_errors(tool.name, launch):
            transport, proto = await loop.subprocess_exec(
                lambda: ChildProtocol(launch.cap, loop),
                *launch.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=launch.cwd,
                env=launch.env,
                process_group=0,
            )
        try:
            stdin = transport.get_pipe_transport(0)
            if isinstance(stdin, asyncio.WriteTransport):
                stdin.write(launch.stdin)
                stdin.close()
            ending = await proto.wait_end()
        except asyncio.CancelledError:
            ctx.note = "its process group was killed"
            ctx.details = {"stderr": _tail(proto.stderr, ctx)}
            raise
        finally:
            kill_group(transport.get_pid())
            try:
                # the child watcher reaps it (fast after SIGKILL); closing first would race it
                await asyncio.shield(proto.exited)
            finally:
                transport.close()
        returncode = transport.get_returncode()
        return _finish(tool, launch, ctx, ending, returncode, proto.stdout, proto.stderr)

    async def aclose(self) -> None:
        """Release nothing: every attempt cleans up after itself."""

    def _prepare(self, tool: Tool, params: JSONObject, ctx: AttemptContext) -> _Launch:
        plan = self._plans.get(tool)
        if plan is None:
            plan = self._plans[tool] = _plan(tool)
        try:
            stdin = json.dumps(params, separators=(",", ":"), allow_nan=False).encode() + b"\n"
        except (TypeError, ValueError) as exc:
            raise InvalidParamsError(f"params of tool {tool.name!r} are not JSON: {exc}") from exc
        env = _child_env(plan.spec, ctx, tool.name)
        return _Launch(plan.argv, plan.cwd, env, stdin, plan.spec.max_output_bytes)


# -- preparing an attempt ---------------------------------------------------------------


def _plan(tool: Tool) -> _Plan:
    spec = parse_entry(ScriptSpec, tool, "script")
    base = tool.base_dir.absolute() if tool.base_dir is not None else None
    cwd = spec.cwd
    if cwd is not None and base is not None and not os.path.isabs(cwd):
        cwd = str(base / cwd)
    return _Plan(spec, _resolve_command(spec.command, base), cwd)


def _resolve_command(command: list[str], base: Path | None) -> list[str]:
    program, *args = command
    if program in _PYTHON_NAMES and sys.executable:
        program = sys.executable
    if base is None:
        return [program, *args]
    if "/" in program and not os.path.isabs(program):
        program = str(base / program)
    return [program, *(_resolve_arg(arg, base) for arg in args)]


def _resolve_arg(arg: str, base: Path) -> str:
    if not arg or arg.startswith("-") or os.path.isabs(arg):
        return arg
    if arg.startswith(("./", "../")):
        return str(base / arg)
    try:
        return str(base / arg) if (base / arg).is_file() else arg
    except (OSError, ValueError):  # a name too long or holding a NUL is no file
        return arg


def _child_env(spec: ScriptSpec, ctx: AttemptContext, tool_name: str) -> dict[str, str] | None:
    if not spec.env:
        return None if spec.inherit_env else {}
    env = dict(os.environ) if spec.inherit_env else {}
    for key, template in spec.env.items():
        value, revealed = expand_vars(
            template, os.environ, where=f"env {key!r} of tool {tool_name!r}"
        )
        ctx.secrets.update(revealed)
        if value and is_secret_name(key):
            ctx.secrets.add(value)
        env[key] = value
    return env


# -- starting: one map, one context manager --------------------------------------------

_ERROR_MAP: dict[type[OSError], Callable[..., ToolCallError]] = {
    FileNotFoundError: partial(ExecutionError, permanent=True),
    PermissionError: partial(ExecutionError, permanent=True),
    NotADirectoryError: partial(ExecutionError, permanent=True),
    OSError: ExecutionError,  # out of processes or memory: another attempt may work
}


@contextmanager
def _translate_errors(tool_name: str, launch: _Launch) -> Iterator[None]:
    """Map a failure to start the child to an error naming the command or folder at fault."""
    try:
        yield
    except ToolCallError:
        raise
    except tuple(_ERROR_MAP) as exc:
        # an OSError subclass matches OSError too: the most specific entry wins
        target = next(_ERROR_MAP[t] for t in type(exc).__mro__ if t in _ERROR_MAP)
        raise target(_start_message(exc, tool_name, launch)) from exc


def _start_message(exc: OSError, tool_name: str, launch: _Launch) -> str:
    program = launch.argv[0]
    if isinstance(exc, FileNotFoundError | NotADirectoryError) and exc.filename == launch.cwd:
        return f"working directory {launch.cwd!r} of script tool {tool_name!r} does not exist"
    if isinstance(exc, FileNotFoundError):
        where = "" if "/" in program else " on PATH"
        return (
            f"command {program!r} of script tool {tool_name!r} not found{where}; "
            "check `command` in its registry entry"
        )
    if isinstance(exc, PermissionError):
        return (
            f"command {program!r} of script tool {tool_name!r} is not executable "
            "(permission denied); make it executable or run it through its interpreter"
        )
    return f"could not start script tool {tool_name!r} ({program!r}): {exc.strerror or exc}"


# -- the outcome -------------------------------------------------------------------------


def _finish(
    tool: Tool,
    launch: _Launch,
    ctx: AttemptContext,
    ending: Ending,
    returncode: int | None,
    stdout: Capped,
    stderr: Tail,
) -> TextOutput:
    tail = _tail(stderr, ctx)
    name = tool.name
    if ending == "overflow":
        raise ExecutionError(
            f"script tool {name!r}: output exceeds {launch.cap} bytes (maxOutputBytes); "
            "its process group was killed",
            details={"maxOutputBytes": launch.cap, "stderr": tail},
            permanent=True,
        )
    if returncode is not None and returncode < 0:
        signame = _signal_name(-returncode)
        raise ExecutionError(
            f"script tool {name!r} was killed by signal {signame}",
            details={"signal": signame, "stderr": tail},
        )
    if returncode:
        last = next((ln for ln in reversed(tail.splitlines()) if ln.strip()), "")
        hint = f": {last.strip()[:200]}" if last else ""
        raise ExecutionError(
            f"script tool {name!r} exited with status {returncode}{hint}",
            details={"exitStatus": returncode, "stderr": tail},
        )
    return _to_output(stdout.data(), ctx.format)


def _tail(stderr: Tail, ctx: AttemptContext) -> str:
    return mask_text(stderr.data().decode("utf-8", errors="replace"), ctx.secrets)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _to_output(data: bytes, fmt: str) -> TextOutput:
    if fmt == "raw":
        try:
            return TextOutput(data.decode("utf-8"))
        except UnicodeDecodeError:
            return TextOutput(data)
    return TextOutput(data.decode("utf-8-sig", errors="replace"))
