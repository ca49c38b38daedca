"""Tools the process-pool benchmark sends to worker processes (pebble's and toolcaller's).

They live in a module of their own, importing only the standard library, so that a worker
process imports them by name quickly and neither pool is charged for the benchmark's imports.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def hang(pid_file: str) -> None:
    """Write this worker's pid to `pid_file`, then sleep far past any limit."""
    Path(pid_file).write_text(str(os.getpid()), encoding="utf-8")
    time.sleep(60)


def is_gone(pid: int) -> bool:
    """Say whether a process has ended (gone, or a zombie waiting to be reaped); Linux /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def gone_within(pid: int, seconds: float) -> float | None:
    """Milliseconds until process `pid` ended, polling for at most `seconds`; None if alive."""
    started = time.perf_counter()
    while True:
        if is_gone(pid):
            return (time.perf_counter() - started) * 1000
        if time.perf_counter() - started > seconds:
            return None
        time.sleep(0.005)
