"""The one attempt loop (async): run attempts within their limits, wait, retry, stop.

`ToolCaller.acall` awaits it on the running loop, `call` on the private loop (the portal),
batches many at once: there is no other copy. Each attempt runs in a task of its own, so that
a tool which ignores its cancellation cannot hold the call past its deadline.

Time limits (SPEC rule 5): an attempt ends at its timeout counted from the tool's own run
(`AttemptContext.mark_running`), or at the call's deadline, whichever is first. A result that
exists when the limit is reached wins: the timer gives results already on their way one more
turn of the loop, and a sync tool's result counts from when its thread finished, however busy
the loop was. Time spent waiting for the loop, a worker thread or a starting process is not the
tool's (`AttemptContext.mark_waiting`); only the deadline bounds it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from toolcaller.core.context import AttemptContext, CallContext
from toolcaller.core.policy import MIN_ATTEMPT_MS, RetryPolicy, final_error
from toolcaller.core.redact import mask_text
from toolcaller.envelope import Attempt
from toolcaller.errors import ExecutionError, ToolCallError, ToolTimeoutError

__all__ = ["MAX_GRACE_S", "Invoke", "keep_until_done", "run_attempt", "run_attempts"]

Invoke = Callable[[AttemptContext], Awaitable[object]]
"""Runs one attempt of a call's tool (an adapter's `invoke`, bound to the tool and params)."""

MAX_GRACE_S = 0.5
"""Longest wait, after cancelling a timed-out attempt, for the tool to unwind."""
UNWIND_S = 0.005
"""Least wait for a cancelled tool to unwind, even when the deadline has passed."""
_EPSILON_S = 1e-6
"""Clock readings this close count as equal (sums of float seconds are inexact)."""
_MAX_LANDING_TURNS = 100
"""Loop turns a result that already exists may take to reach its attempt."""
_ABANDONED: set[asyncio.Task[Any]] = set()


async def run_attempts(call: CallContext, invoke: Invoke, convert: Callable[[object], Any],
                       rng: Callable[[], float]) -> Any:
    """Run the call's attempts; return the first success's result, or raise the final error.

    Every attempt ends as an `Attempt` in `call.attempts`. `convert` turns an attempt's output
    into the result (a `ParseError` there fails the attempt).
    """
    policy, clock = RetryPolicy(call.options, rng), call.clock
    wait_s, last, stopped = 0.0, None, ""
    while policy.fits(wait_s, call.deadline - clock.now()):
        number = len(call.attempts) + 1
        if wait_s > 0:
            call.emit("wait", number, wait_ms=wait_s * 1000.0)
            await clock.sleep(wait_s)
        ctx = AttemptContext(call, number)
        call.emit("attempt", number)
        try:
            result = convert(await run_attempt(invoke, ctx))
        except ToolCallError as error:
            last = error
            _record(call, ctx, wait_s, error)
        else:
            _record(call, ctx, wait_s, None)
            return result
        waited = policy.wait_s(number, last)
        if isinstance(waited, str):
            stopped = waited
            break
        wait_s = waited
        if not call.tool.idempotent and _still_running(ctx.straggler):
            began = clock.now()
            room = call.deadline - began - MIN_ATTEMPT_MS / 1000.0
            if not await _finished(ctx.straggler, room):
                stopped = (f"attempt {number} is still running in its thread, and a tool that is "
                           "not idempotent is not started again while it runs (declare it "
                           "idempotent, or use isolation 'process')")
                break
            wait_s = max(wait_s - (clock.now() - began), 0.0)
    else:
        stopped = "the deadline leaves no time for another attempt"
    raise final_error(call.tool.name, call.options, call.attempts, last, stopped)


def _record(call: CallContext, ctx: AttemptContext, wait_s: float,
            error: ToolCallError | None) -> None:
    now = call.clock.now()
    attempt = Attempt(
        attempt=ctx.attempt,
        code=error.code if error else None,
        message=mask_text(error.message, call.secrets) if error else None,
        retryable=error.retryable if error else None,
        duration=round((now - ctx.started_at) * 1000.0, 3),
        wait=round(wait_s * 1000.0, 3),
        started=round((ctx.started_at - call.started) * 1000.0, 3),
        notes=[{**n, "message": mask_text(n["message"], call.secrets)} if "message" in n else n
               for n in ctx.notes],
    )
    call.attempts.append(attempt)
    call.emit("attempt_end", ctx.attempt, code=error.code.value if error else None)


async def run_attempt(invoke: Invoke, ctx: AttemptContext) -> object:
    """Run one attempt in a task of its own and end it at its limit; its output or error."""
    loop = asyncio.get_running_loop()
    landed: asyncio.Future[None] = loop.create_future()
    task = loop.create_task(_body(invoke, ctx, landed))
    watch = _Watch(ctx, landed, loop)
    try:
        await landed
    except asyncio.CancelledError:  # the call itself is cancelled: stop the tool too
        watch.stop()
        task.cancel()
        keep_until_done(task)
        raise
    watch.stop()
    if task.done():
        return _outcome(task, ctx)
    task.cancel()
    clock = ctx.call.clock
    grace_s = min(max(ctx.call.deadline - clock.now(), UNWIND_S), MAX_GRACE_S)
    await asyncio.wait((task,), timeout=grace_s)
    if not task.done():
        keep_until_done(task)
        raise ToolTimeoutError(f"no result within {_budget_ms(ctx):.0f} ms, and the tool "
                               "ignored its cancellation: it goes on running, abandoned")
    _retrieve(task)
    if not task.cancelled() and task.exception() is None:
        raise ToolTimeoutError(f"no result within {_budget_ms(ctx):.0f} ms (the tool ignored "
                               "its cancellation and returned later)")
    raise _timed_out(ctx)


async def _body(invoke: Invoke, ctx: AttemptContext, landed: asyncio.Future[None]) -> object:
    # The tool's run begins here, not when the task was made: a busy loop's delay is not its.
    if ctx.run_started is not None:
        ctx.mark_running()
    try:
        return await invoke(ctx)
    finally:
        ctx.mark_output()
        if not landed.done():
            landed.set_result(None)


class _Watch:
    """The timer of one attempt: sets `landed` once the attempt's limit has passed."""

    __slots__ = ("clock", "ctx", "landed", "loop", "timer", "turns")

    def __init__(self, ctx: AttemptContext, landed: asyncio.Future[None],
                 loop: asyncio.AbstractEventLoop) -> None:
        self.ctx, self.landed, self.loop = ctx, landed, loop
        self.clock = ctx.call.clock
        self.turns = 0
        self.timer = self.clock.call_at(self._next(), self._fire)

    def _next(self) -> float:
        ctx = self.ctx
        if ctx.run_started is None:  # waiting: look again a timeout later (its run may begin)
            return min(self.clock.now() + ctx.timeout_s, ctx.call.deadline)
        return ctx.limit()

    def _fire(self) -> None:
        if self.landed.done():
            return
        when = self._next()
        if self.clock.now() < when - _EPSILON_S:  # the limit moved (the run began later)
            self.timer = self.clock.call_at(when, self._fire)
            return
        self.loop.call_soon(self._expire)  # a result on its way gets this turn of the loop

    def _expire(self) -> None:
        if self.landed.done():
            return
        if self.ctx.output_at is not None and self.turns < _MAX_LANDING_TURNS:
            self.turns += 1  # the output exists (a thread finished): let it land
            self.loop.call_soon(self._expire)
            return
        self.landed.set_result(None)

    def stop(self) -> None:
        self.timer.cancel()


def _outcome(task: asyncio.Task[object], ctx: AttemptContext) -> object:
    """The attempt's output, or the error it ends with, once its task is done."""
    if task.cancelled():  # nobody cancelled it: the tool raised CancelledError itself
        raise ExecutionError("the tool raised CancelledError though the call was not cancelled "
                             "(something it awaited was cancelled)")
    error = task.exception()
    if ctx.was_late():
        late_ms = (ctx.output_at - ctx.limit()) * 1000.0  # type: ignore[operator]
        raise ToolTimeoutError(
            f"no result within {_budget_ms(ctx):.0f} ms: the result came {late_ms:.0f} ms "
            "later (an async tool that blocks the event loop cannot be stopped in time)")
    if error is None:
        return task.result()
    if isinstance(error, ToolCallError):
        raise error
    raise ExecutionError(f"internal error while running the tool: {type(error).__name__}: "
                         f"{error}") from error


def _budget_ms(ctx: AttemptContext) -> float:
    started = ctx.run_started if ctx.run_started is not None else ctx.started_at
    return max(ctx.limit() - started, 0.0) * 1000.0


def _timed_out(ctx: AttemptContext) -> ToolTimeoutError:
    if ctx.run_started is None:
        waited = (ctx.call.clock.now() - ctx.started_at) * 1000.0
        return ToolTimeoutError(
            f"no result by the call's deadline of {ctx.call.options.deadline:g} ms: the attempt "
            f"was still waiting for {ctx.waiting_for or 'the tool to start'} ({waited:.0f} ms "
            "so far; it goes on in the background for the next call)")
    note = f"; {ctx.note}" if ctx.note else ""
    if _still_running(ctx.straggler):
        note = ("; the sync tool goes on running in its worker thread (threads cannot be "
                "stopped: use isolation 'process' to kill it)")
    error = ToolTimeoutError(f"no result within {_budget_ms(ctx):.0f} ms{note}"
                             + (f"; {ctx.no_retry}" if ctx.no_retry else ""),
                             details=ctx.details)
    if ctx.no_retry:
        error.retryable = False
    return error


def _still_running(work: Any) -> bool:
    return work is not None and not work.done()


async def _finished(work: Any, room_s: float) -> bool:
    """Wait up to `room_s` for a `concurrent.futures.Future`; say whether it finished."""
    if room_s <= 0:
        return bool(work.done())
    waiter = asyncio.wrap_future(work)
    done, _ = await asyncio.wait((asyncio.shield(waiter),), timeout=room_s)
    return bool(done)


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
