"""A call's events as MCP progress notifications, in order, with increasing progress.

When a `tools/call` request carries a `progressToken`, each attempt start, each wait before a
retry and each progress report of the tool itself becomes one `notifications/progress`. MCP
requires the progress value to increase with every notification, while a tool's own progress
starts again at each attempt; so `progress` counts the notifications (1, 2, 3…), no `total`
is given (how many will come is not known), and the message says what happened:
`attempt 2 of 4`, `waiting 1000 ms before attempt 2 of 4`, `3/10: reading rows` (the tool's
own progress, total and message).

Events arrive on the call's loop from a sync listener (`on_event` must not block); one task
per call sends them in arrival order, and `flush()` waits until every one is sent, so all
notifications precede the result.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from toolcaller.core.events import CallEvent

__all__ = ["ProgressBridge", "describe"]

Send = Callable[[float, float | None, str | None], Awaitable[None]]
"""Sends one progress notification: `(progress, total, message)`."""
log = logging.getLogger("toolcaller.serve")


class ProgressBridge:
    """Turns one call's events into progress notifications sent one after the other."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._queue: asyncio.Queue[tuple[float, float | None, str | None] | None] = (
            asyncio.Queue())
        self._count = 0
        self._task: asyncio.Task[None] | None = None

    def on_event(self, event: CallEvent) -> None:
        """Queue the notification of one event (the engine's listener; never blocks)."""
        message = describe(event)
        if message is None:
            return
        self._count += 1
        self._queue.put_nowait((float(self._count), None, message))
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._pump())

    async def _pump(self) -> None:
        while (item := await self._queue.get()) is not None:
            try:
                await self._send(*item)
            except Exception as exc:  # noqa: BLE001 - a lost notification must not fail a call
                log.debug("progress notification not sent: %r", exc)

    async def flush(self) -> None:
        """Send what is queued, then stop (call once the call has its envelope)."""
        task = self._task
        if task is None:
            return
        self._queue.put_nowait(None)
        await task

    def cancel(self) -> None:
        """Drop what is still queued (the call was cancelled: nobody wants its progress)."""
        if self._task is not None:
            self._task.cancel()


def describe(event: CallEvent) -> str | None:
    """Say what an event means to a person, or `None` for events not worth a notification."""
    of = f"{event.attempt} of {event.max_attempts}"
    if event.kind == "attempt":
        return f"attempt {of}"
    if event.kind == "wait":
        return f"waiting {event.wait_ms or 0:.0f} ms before attempt {of}"
    if event.kind == "progress":
        done = "" if event.progress is None else f"{event.progress:g}"
        if event.total is not None:
            done += f"/{event.total:g}"
        text = ": ".join(part for part in (done, event.message or "") if part)
        return text or "progress"
    return None
