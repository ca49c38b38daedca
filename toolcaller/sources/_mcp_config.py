"""MCP server entries (`mcpServers`): `${VAR}` expansion and command lookup, before connecting."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolcaller.core.redact import is_secret_name
from toolcaller.core.templates import expand_vars
from toolcaller.errors import ExecutionError

__all__ = ["ServerSpec", "parse_server_config"]



@dataclass(frozen=True, slots=True)
class ServerSpec:
    """A server entry with `${VAR}`s expanded and its command found: ready to connect."""

    name: str
    transport: Literal["stdio", "http", "sse"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment for a stdio server, over the SDK's safe default (PATH, HOME, …)."""
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    secrets: frozenset[str] = frozenset()
    """Values read through `${VAR}`, and values of env entries and headers whose names look
    secret (`API_KEY`, `Authorization`): masked in messages."""


def parse_server_config(
    name: str,
    config: Mapping[str, Any],
    *,
    base_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> ServerSpec:
    """Expand a `mcpServers` entry (`${VAR}` and `${VAR:-default}`) and find its command.

    Raises:
        ExecutionError: a variable is not set, or the command does not exist (permanent).
    """
    env_source = os.environ if environ is None else environ
    secrets: set[str] = set()

    def expand(value: Any, where: str) -> str:
        text, revealed = expand_vars(str(value), env_source, where=f"{where} of MCP server "
                                                                   f"{name!r}")
        secrets.update(revealed)
        return text

    def literal_secrets(values: Mapping[str, str]) -> None:
        secrets.update(v for k, v in values.items() if v and is_secret_name(k))

    kind = str(config.get("type") or config.get("transport") or "").lower()
    if "url" in config and kind not in ("stdio",):
        headers = {k: expand(v, f"headers.{k}") for k, v in (config.get("headers") or {}).items()}
        literal_secrets(headers)
        return ServerSpec(
            name=name,
            transport="sse" if kind == "sse" else "http",
            url=expand(config["url"], "url"),
            headers=headers,
            secrets=frozenset(s for s in secrets if s),
        )
    env = {k: expand(v, f"env.{k}") for k, v in (config.get("env") or {}).items()}
    literal_secrets(env)
    cwd = _resolve_cwd(config.get("cwd"), base_dir, expand)
    command = _find_command(name, expand(config.get("command", ""), "command"), cwd, env)
    args = tuple(expand(a, f"args[{i}]") for i, a in enumerate(config.get("args") or ()))
    return ServerSpec(
        name=name,
        transport="stdio",
        command=command,
        args=args,
        env=env,
        cwd=cwd,
        secrets=frozenset(s for s in secrets if s),
    )


def _resolve_cwd(
    cwd: Any, base_dir: Path | None, expand: Callable[[Any, str], str]
) -> str | None:
    if cwd is None:
        return str(base_dir) if base_dir is not None else None
    path = Path(expand(cwd, "cwd")).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return str(path)


def _find_command(name: str, command: str, cwd: str | None, env: Mapping[str, str]) -> str:
    """Return the executable's path: a path resolves against cwd, a bare name through PATH.

    A bare name not on PATH is also looked up beside the running Python, so a server
    installed in the same virtualenv is found when that virtualenv is not activated.
    """
    if not command:
        raise ExecutionError(f"MCP server {name!r} has an empty 'command'", permanent=True)
    if os.sep in command or (os.altsep and os.altsep in command):
        path = Path(command).expanduser()
        if not path.is_absolute() and cwd is not None:
            path = Path(cwd) / path
        if path.is_file():
            return str(path)
    else:
        found = shutil.which(command, path=env.get("PATH")) or shutil.which(
            command, path=str(Path(sys.executable).parent)
        )
        if found is not None:
            return found
    raise ExecutionError(
        f"MCP server {name!r}: command {command!r} was not found"
        + ("" if os.sep in command else " on PATH")
        + "; install the server or fix 'command' in mcpServers",
        permanent=True,
    )


