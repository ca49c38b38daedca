"""Public fakes for testing code that uses toolcaller: a fake clock and ready-made odd tools.

    clock = FakeClock()
    caller = ToolCaller(tools=[flaky_tool(failures=2)], clock=clock)
    envelope = caller.call("flaky", retries=3, retryDelay=1000)   # returns at once
    assert clock.slept == [1.0, 1.0]

Timeouts run on the fake clock too: a call to a tool that never answers waits until the
test moves the clock past its limit (`clock.advance(seconds)`), however busy the machine is.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.adapters.base import Adapter
from toolcaller.core.attempt import run_attempt
from toolcaller.core.clock import Clock, SystemClock
from toolcaller.core.context import AttemptContext, CallContext
from toolcaller.core.tool import Tool
from toolcaller.envelope import Options
from toolcaller.errors import ExecutionError
from toolcaller.sources.decorator import from_function

__all__ = ["FakeClock", "attempt_context", "failing_tool", "flaky_tool", "invoke", "slow_tool"]


class _FakeTimer:
    __slots__ = ("callback", "cancelled", "loop", "when")

    def __init__(self, when: float, callback: Callable[[], None],
                 loop: asyncio.AbstractEventLoop) -> None:
        self.when, self.callback, self.loop = when, callback, loop
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that only moves when told: sleeps, timers and timeouts take no real time.

    `sleep(s)` records `s` in `slept` and moves the clock by it; `advance(s)` moves it and
    runs the timers that came due (attempt timeouts among them), on their own loops.
    """

    def __init__(self, start: float = 1_000.0, wall: float = 1_700_000_000.0) -> None:
        self._now = start
        self._wall_offset = wall - start
        self.slept: list[float] = []
        self._timers: list[tuple[float, int, _FakeTimer]] = []
        self._order = itertools.count()
        self._lock = threading.Lock()

    def now(self) -> float:
        """Return the current fake monotonic time in seconds."""
        return self._now

    def wall(self) -> float:
        """Return the current fake wall-clock time (`time.time()`'s scale)."""
        return self._now + self._wall_offset

    def advance(self, seconds: float) -> None:
        """Move the clock forward and run the timers that came due (from any thread)."""
        with self._lock:
            self._now += seconds
            due = []
            while self._timers and self._timers[0][0] <= self._now + 1e-9:  # float sums
                due.append(heapq.heappop(self._timers)[2])
        for timer in due:
            if not timer.cancelled:
                with contextlib.suppress(RuntimeError):  # its loop has closed: nobody waits
                    timer.loop.call_soon_threadsafe(_fire, timer)

    async def sleep(self, seconds: float) -> None:
        """Record the wait and move the clock instead of sleeping (yields to the loop once)."""
        self.slept.append(seconds)
        self.advance(seconds)
        await asyncio.sleep(0)

    def call_at(self, when: float, callback: Callable[[], None]) -> _FakeTimer:
        """Run `callback` on the running loop once the clock reaches `when`."""
        timer = _FakeTimer(when, callback, asyncio.get_running_loop())
        with self._lock:
            heapq.heappush(self._timers, (when, next(self._order), timer))
        self.advance(0.0)  # already due: runs on the next turn of the loop
        return timer

    def pending(self) -> list[float]:
        """Return when each timer not yet run nor cancelled is due, soonest first."""
        with self._lock:
            return sorted(when for when, _, timer in self._timers if not timer.cancelled)


def _fire(timer: _FakeTimer) -> None:
    if not timer.cancelled:
        timer.callback()


def attempt_context(tool: Tool | None = None, params: JSONObject | None = None, *,
                    clock: Clock | None = None, **options: Any) -> AttemptContext:
    """Make the context of a first attempt, to call an adapter's `invoke` directly.

    `options` are request options (`timeout=2000`, `format="raw"`): an adapter's own tests
    need no `ToolCaller`.
    """
    made_tool = tool if tool is not None else Tool("test", "", {"type": "object"}, "python", None)
    used = clock if clock is not None else SystemClock()
    call = CallContext("test-1", made_tool, dict(params or {}), Options(**options), used,
                       used.wall(), used.now(), loop=_running_loop())
    return AttemptContext(call, 1)


async def invoke(adapter: Adapter, tool: Tool, params: JSONObject | None = None, *,
                 ctx: AttemptContext | None = None, **options: Any) -> object:
    """Run one attempt of `tool` through `adapter`, within its timeout as the engine does.

    Returns the attempt's output (a `TextOutput` for text on the wire); raises its
    `ToolCallError` (a `ToolTimeoutError` at its limit). `ctx` (else one made from
    `options`) shows afterwards what the adapter declared, its `secrets` for one.
    """
    ctx = ctx if ctx is not None else attempt_context(tool, params, **options)
    return await run_attempt(lambda c: adapter.invoke(tool, dict(params or {}), c), ctx)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


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
