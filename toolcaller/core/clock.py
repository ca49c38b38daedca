"""Time as the engine sees it: a monotonic clock, the wall clock, sleeps and timers, injectable.

Every duration, retry wait and attempt timeout of the engine goes through a `Clock`, so tests
can run them on `toolcaller.testing.FakeClock` without real time passing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Clock", "SystemClock", "Timer"]


class Timer(Protocol):
    """A scheduled callback that can be called off."""

    def cancel(self) -> None:
        """Call the callback off (nothing happens if it already ran)."""


class Clock(Protocol):
    """Where the engine reads the time, sleeps and sets timers."""

    def now(self) -> float:
        """Return a monotonic reading in seconds."""

    def wall(self) -> float:
        """Return the wall-clock time (`time.time()`): when requests arrive."""

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` on the running event loop."""

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        """Run `callback` on the running event loop once `now()` reaches `when`."""


class SystemClock:
    """The real clocks: `time.monotonic`, `time.time`, `asyncio.sleep` and loop timers."""

    def now(self) -> float:
        """Return `time.monotonic()`."""
        return time.monotonic()

    def wall(self) -> float:
        """Return `time.time()`."""
        return time.time()

    async def sleep(self, seconds: float) -> None:
        """Sleep on the running loop."""
        await asyncio.sleep(seconds)

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        """Schedule `callback` on the running loop (loop time may differ from monotonic time)."""
        return asyncio.get_running_loop().call_later(max(when - time.monotonic(), 0.0), callback)
