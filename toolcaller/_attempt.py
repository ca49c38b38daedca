"""One async attempt under its timeout: in a task of its own, or inline in a watched task.

`run_in_task` is what `acall` uses: the attempt gets its own task, so that a tool swallowing
its cancellation cannot hold the caller's task past the deadline. `run_inline` runs the
attempt in the calling task, which costs no task, no extra trips through the loop, and lets
the next call start in the same step; it is only for a caller that can give up on its own task
(`Watch`): the batch workers of `toolcaller.batch`.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any, Protocol

from toolcaller._types import JSONObject
from toolcaller.adapters.base import Adapter, AttemptContext
from toolcaller.core.tool import Tool
from toolcaller.errors import ExecutionError, ToolTimeoutError

__all__ = ["LATE_S", "MAX_GRACE_S", "TaskTimer", "Watch", "keep_until_done", "run_in_task",
           "run_inline"]

_ABANDONED: set[asyncio.Task[Any]] = set()
"""Tasks stuck in a tool that ignored its cancellation, kept until they end by themselves."""
MAX_GRACE_S = 0.5
"""Longest wait, after cancelling a timed-out attempt, for the tool to unwind."""
EAGER_TASKS = sys.version_info >= (3, 12)
LATE_S = 0.005
"""A result this long after the timeout means the tool held the loop."""


class Watch(Protocol):
    """What runs inline attempts: told when a tool ignores its cancellation past its grace."""

    timer: TaskTimer
    """The timer of the task the attempts run in."""

    def overdue(self) -> None:
        """The attempt's task is stuck in the tool: answer without it, and leave it behind."""


async def run_in_task(adapter: Adapter, tool: Tool, params: JSONObject,
                      ctx: AttemptContext, grace_s: float) -> object:
    """Run one attempt as its own task: the envelope never waits for a tool past its time.

    A tool that swallows its cancellation, or blocks the loop and returns late, still ends
    the attempt as TIMEOUT; the first is left to finish alone (after `grace_s` for cleanup).
    """
    loop = asyncio.get_running_loop()
    when = loop.time() + ctx.timeout_s
    # Woken by whichever comes first, the tool or the timer. The attempt's task resolves it
    # itself, which saves a trip through the loop over a done-callback (asyncio.wait() would
    # cost ~15 µs a call).
    waiter = loop.create_future()
    # Its own task, so that a tool ignoring its cancellation cannot hold the envelope. (Running
    # the first step by hand in the caller's task would be cheaper, but anyio's cancel scopes,
    # httpx's among them, must be left in the task that entered them.)
    inner = _start_task(loop, _attempt(adapter.arun(tool, params, ctx), waiter))
    if inner.done():  # Python 3.12+: an eager task that finished without suspending
        if inner.cancelled():
            raise _cancelled_by_tool()
        _check_late(loop, when, ctx)
        return inner.result()
    timer = loop.call_at(when, _wake, waiter)
    try:
        await waiter
    except asyncio.CancelledError:
        inner.cancel()  # the call itself is cancelled (a user's Cancel, Ctrl-C): stop the tool
        inner.add_done_callback(_retrieve)  # whatever it ends with, nobody reads it
        raise
    finally:
        timer.cancel()
    if inner.done():
        if inner.cancelled():  # nobody cancelled it: the tool raised CancelledError itself
            raise _cancelled_by_tool()
        if loop.time() > when + LATE_S:
            _retrieve(inner)
        _check_late(loop, when, ctx)
        return inner.result()
    inner.cancel()
    await asyncio.wait((inner,), timeout=grace_s)
    if not inner.done():
        keep_until_done(inner)
        raise ToolTimeoutError(
            f"no result within {ctx.timeout_s * 1000:.0f} ms, and the tool ignored its "
            "cancellation: it goes on running, abandoned")
    _retrieve(inner)
    raise _timed_out(ctx)


async def run_inline(adapter: Adapter, tool: Tool, params: JSONObject, ctx: AttemptContext,
                     grace_s: float, watch: Watch) -> object:
    """Run one attempt in the calling task, cancelled at its timeout like `asyncio.timeout`.

    A tool that ignores the cancellation holds this task: `grace_s` later, `watch.overdue()`
    is called so that the caller answers TIMEOUT without it.
    """
    timer = watch.timer
    loop = timer.loop
    when = loop.time() + ctx.timeout_s
    guard = _Guard(timer.task, grace_s, watch)
    timer.arm(when, guard)
    try:
        output = await adapter.arun(tool, params, ctx)
    except BaseException as exc:
        instead = _instead_of(exc, guard, ctx)
        if instead is None:
            raise
        raise instead from None
    finally:
        guard.finished = True
        timer.disarm()
    if guard.expired:
        guard.task.uncancel()
    if guard.task.cancelling():  # the caller cancelled; the tool swallowed it, then returned
        raise asyncio.CancelledError
    if guard.expired:  # the tool swallowed our cancellation, then returned
        raise ToolTimeoutError(
            f"no result within {ctx.timeout_s * 1000:.0f} ms (the tool ignored its "
            "cancellation and returned later)")
    _check_late(loop, when, ctx)
    return output


class TaskTimer:
    """The timeouts of the attempts one task runs inline, on one timer re-armed lazily.

    A timer per attempt is a handle to make, push on the loop's heap, cancel and pop again
    for every call. Here a handle outlives the attempts that end before it fires; when it
    fires early for the attempt running then, it is set again for that attempt's time.
    """

    __slots__ = ("guard", "handle", "loop", "task", "when")

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None, "a TaskTimer belongs to the task that makes it"
        self.task = task
        self.handle: asyncio.TimerHandle | None = None
        self.guard: _Guard | None = None
        self.when = 0.0

    def arm(self, when: float, guard: _Guard) -> None:
        """Expire `guard` at loop time `when` unless `disarm` comes first."""
        self.when, self.guard = when, guard
        if self.handle is not None and self.handle.when() > when:
            self.handle.cancel()  # set for a later time than this attempt's (a cut budget)
            self.handle = None
        if self.handle is None:
            self.handle = self.loop.call_at(when, self._fire)

    def disarm(self) -> None:
        """The attempt ended: nothing to expire (the handle stays for the next attempt)."""
        self.guard = None

    def close(self) -> None:
        """The task runs no more attempts."""
        self.guard = None
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None

    def _fire(self) -> None:
        self.handle = None
        guard = self.guard
        if guard is None:
            return
        if self.loop.time() < self.when:  # an earlier attempt's time: wait for this one's
            self.handle = self.loop.call_at(self.when, self._fire)
            return
        self.guard = None
        guard.expire()


class _Guard:
    """The timer side of one inline attempt."""

    __slots__ = ("expired", "finished", "grace_s", "task", "watch")

    def __init__(self, task: asyncio.Task[Any], grace_s: float, watch: Watch) -> None:
        self.task, self.grace_s, self.watch = task, grace_s, watch
        self.expired = self.finished = False

    def expire(self) -> None:
        self.expired = True
        self.task.cancel()
        self.task.get_loop().call_later(self.grace_s, self._check)

    def _check(self) -> None:
        if not self.finished:
            self.watch.overdue()


def _instead_of(exc: BaseException, guard: _Guard,
                ctx: AttemptContext) -> BaseException | None:
    """What an inline attempt raises when its tool raised `exc` (`None`: `exc` itself).

    Our own cancellation becomes TIMEOUT, and its count is taken back (`uncancel`); the
    caller's cancellation stays a cancellation, even when the tool swallowed it and then
    failed otherwise; a CancelledError nobody asked for is the tool's failure.
    """
    task = guard.task
    if isinstance(exc, asyncio.CancelledError):
        if guard.expired:
            return _timed_out(ctx) if task.uncancel() == 0 else None
        return _cancelled_by_tool() if task.cancelling() == 0 else None
    if guard.expired:
        task.uncancel()
    if isinstance(exc, KeyboardInterrupt | SystemExit):
        return None
    if task.cancelling():
        return asyncio.CancelledError()
    return _timed_out(ctx) if guard.expired else None


def _cancelled_by_tool() -> ExecutionError:
    return ExecutionError("the tool raised CancelledError though the call was not cancelled "
                          "(something it awaited was cancelled)")


def _timed_out(ctx: AttemptContext) -> ToolTimeoutError:
    note = ("; the sync tool goes on running in its worker thread (threads cannot be "
            "stopped: use isolation 'process' to kill it)" if ctx.straggler else "")
    return ToolTimeoutError(f"no result within {ctx.timeout_s * 1000:.0f} ms{note}",
                            straggler=ctx.straggler)


async def _attempt(run: Coroutine[Any, Any, Any], waiter: asyncio.Future[None]) -> Any:
    """Await one attempt, then wake the caller (the task is done by the time it runs)."""
    try:
        return await run
    finally:
        _wake(waiter)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _check_late(loop: asyncio.AbstractEventLoop, when: float, ctx: AttemptContext) -> None:
    """A result after the timeout means the tool held the loop: no timer could fire."""
    if loop.time() > when + LATE_S:
        late = (loop.time() - when) * 1000
        raise ToolTimeoutError(
            f"the result came {late:.0f} ms after the {ctx.timeout_s * 1000:.0f} ms timeout: "
            "the tool blocked the event loop (an async tool must not call blocking code)")


def _start_task(loop: asyncio.AbstractEventLoop,
                coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    if EAGER_TASKS:  # no trip through the loop for a tool that does not suspend
        return asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg]
    return loop.create_task(coro)


def keep_until_done(task: asyncio.Task[Any]) -> None:
    """Keep a task left to a stuck tool referenced until it ends, then read how it ended."""
    if task.done():
        _retrieve(task)
        return
    _ABANDONED.add(task)
    task.add_done_callback(_forget)


def _forget(task: asyncio.Task[Any]) -> None:
    _ABANDONED.discard(task)
    _retrieve(task)


def _retrieve(task: asyncio.Task[Any]) -> None:
    """Read a finished task's exception so that asyncio does not log it as never retrieved."""
    if task.done() and not task.cancelled():
        task.exception()
