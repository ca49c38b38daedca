"""Stops this process's stdio MCP servers when the process is told to end (SIGTERM, SIGHUP).

The SDK starts each server in a session of its own (`start_new_session`), so a signal to our
process group does not reach it, and a process killed by SIGTERM runs no clean-up: its servers
were left running for seconds (until they noticed their stdin had closed). Every server gets
`OWNER_ENV=<our pid>` in its environment; on SIGTERM or SIGHUP, and at exit, the process
groups of the processes that carry it are sent SIGTERM, then the signal goes on as before: a
handler that was installed is called, the default action ends the process.

Finding them reads `/proc` (Linux). Elsewhere, closing the caller (`ToolCaller.close`, the CLI
does) still stops every server; a process killed by a signal leaves them to notice the end of
their input. Handlers are installed only from the main thread, over the default action or a
Python handler, never over an ignored signal.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from toolcaller.sources._mcp_connect import OWNER_ENV

__all__ = ["install", "server_pids", "stop_servers"]

_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))
_installed: dict[int, Callable[..., Any]] = {}
_lock = threading.Lock()


def server_pids() -> list[int]:
    """Return the pids of the processes started as this process's MCP servers (Linux)."""
    marker = f"{OWNER_ENV}={os.getpid()}".encode() + b"\0"
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                environ = Path(entry.path, "environ").read_bytes()
            except OSError:  # gone, or another user's
                continue
            if marker in environ or environ.endswith(marker[:-1]):
                found.append(int(entry.name))
    return found


def stop_servers() -> int:
    """Send SIGTERM to the process group of each of this process's MCP servers; return how many.

    A server's own group is signalled, never ours (a server that did not get a group of its
    own is signalled alone).
    """
    ours = os.getpgrp()
    groups: set[int] = set()
    loners: set[int] = set()
    for pid in server_pids():
        try:
            group = os.getpgid(pid)
        except OSError:
            continue
        if group == ours:
            loners.add(pid)
        else:
            groups.add(group)
    for group in groups:
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGTERM)
    for pid in loners:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    return len(groups) + len(loners)


def install() -> None:
    """Stop MCP servers on SIGTERM, SIGHUP and at exit (once per process; main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return
    with _lock:
        if not _installed:
            atexit.register(stop_servers)
        for number in _SIGNALS:
            if number in _installed:
                continue
            previous = signal.getsignal(number)
            if previous is signal.SIG_IGN or previous is None:
                continue  # ignored on purpose, or set outside Python: leave it alone
            handler = _handler(previous)
            signal.signal(number, handler)
            _installed[number] = handler


def _handler(previous: Any) -> Callable[[int, FrameType | None], None]:
    def on_signal(number: int, frame: FrameType | None) -> None:
        stop_servers()
        if callable(previous):
            previous(number, frame)
            return
        signal.signal(number, signal.SIG_DFL)  # end as the process would have without us
        os.kill(os.getpid(), number)

    return on_signal
