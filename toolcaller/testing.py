"""Public fakes for testing code that uses toolcaller: a fake clock and ready-made odd tools.

clock = FakeClock()
caller = ToolCaller(tools=[flaky_tool(failures=2)], clock=clock, sleep=clock.sleep,
asleep=clock.asleep)
envelope = caller.call("flaky", retries=3, retryDelay=1000)   # returns at once
assert clock.slept == [1.0, 1.0]
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from toolcaller.core.tool import Tool
from toolcaller.errors import ExecutionError
from toolcaller.sources.decorator import from_function

__all__ = ["FakeClock", "failing_tool", "flaky_tool", "slow_tool"]


class FakeClock:
    """A monotonic clock that only moves when `sleep`/`asleep`/`advance` is called.

    Retry waits then take no real time; attempt timeouts still use real time (a tool cannot be
    interrupted by a fake clock), so keep fake-clock tests to tools that return at once.
    """

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start
        self.slept: list[float] = []
        self._lock = threading.Lock()

    def __call__(self) -> float:
        """Return the current fake time in seconds."""
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock forward."""
        with self._lock:
            self.now += seconds

    def sleep(self, seconds: float) -> None:
        """Record the wait and move the clock instead of sleeping."""
        self.slept.append(seconds)
        self.advance(seconds)

    async def asleep(self, seconds: float) -> None:
        """Async twin of `sleep` (yields to the loop once)."""
        self.sleep(seconds)
        await asyncio.sleep(0)


def flaky_tool(failures: int = 1, *, name: str = "flaky", permanent: bool = False) -> Tool:
    """A tool that fails its first `failures` calls, then returns `{"ok": True, "calls": n}`."""
    calls = {"n": 0}
    lock = threading.Lock()

    def flaky() -> dict[str, Any]:
        with lock:
            calls["n"] += 1
            n = calls["n"]
        if n <= failures:
            raise ExecutionError(f"failure {n} of {failures}", permanent=permanent)
        return {"ok": True, "calls": n}

    made = from_function(flaky, name=name, idempotent=True)
    made.metadata["calls"] = calls
    return made


def failing_tool(message: str = "boom", *, name: str = "failing") -> Tool:
    """A tool that always raises `RuntimeError(message)`."""

    def failing() -> None:
        raise RuntimeError(message)

    return from_function(failing, name=name)


def slow_tool(seconds: float, *, name: str = "slow", sync: bool = False) -> Tool:
    """A tool that sleeps `seconds` (async by default; `sync=True` blocks a worker thread)."""
    if sync:
        def slow_sync() -> dict[str, float]:
            time.sleep(seconds)
            return {"slept": seconds}

        return from_function(slow_sync, name=name, idempotent=True)

    async def slow() -> dict[str, float]:
        await asyncio.sleep(seconds)
        return {"slept": seconds}

    return from_function(slow, name=name, idempotent=True)
