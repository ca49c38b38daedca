"""Importable tools for tests that need a `"module:function"` path (process isolation, files)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any


def pid() -> dict[str, int]:
    """Return the id of the process that ran the tool."""
    return {"pid": os.getpid()}


def write_pid_and_hang(path: str) -> None:
    """Write this process's id to `path`, then block forever."""
    Path(path).write_text(str(os.getpid()), encoding="utf-8")
    threading.Event().wait()


def write_pid_and_sleep(path: str, seconds: float = 30.0) -> None:
    """Write this process's id to `path`, then sleep (a hang that a timeout must cut)."""
    Path(path).write_text(str(os.getpid()), encoding="utf-8")
    time.sleep(seconds)


def boom(message: str = "boom") -> None:
    """Raise a ValueError with the message."""
    raise ValueError(message)


def double(x: int) -> dict[str, Any]:
    """Return twice x."""
    return {"double": 2 * x}
