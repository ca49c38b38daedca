"""`toolcaller.core.attempt`: the one attempt loop, on a fake clock (no real time, any load).

Each test drives time itself: the tool waits on the loop, the test moves the clock, and the
engine's timers fire exactly where the rules put them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from toolcaller.core.attempt import run_attempts
from toolcaller.core.context import AttemptContext, CallContext
from toolcaller.core.events import CallEvent
from toolcaller.core.tool import Tool
from toolcaller.envelope import Options
from toolcaller.errors import ErrorCode, ExecutionError, ToolCallError
from toolcaller.testing import FakeClock

Invoke = Callable[[AttemptContext], Awaitable[object]]


def call_of(clock: FakeClock, idempotent: bool = True, **options: Any) -> CallContext:
    tool = Tool("t", "", {"type": "object"}, "python", None, idempotent=idempotent)
    return CallContext("c-1", tool, {}, Options(**options), clock, clock.wall(), clock.now(),
                       loop=asyncio.get_running_loop())


async def settle() -> None:
    """Let the loop run what is ready (timers the clock fired, tasks they woke)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def run(call: CallContext, invoke: Invoke) -> tuple[Any, ToolCallError | None]:
    try:
        return await run_attempts(call, invoke, lambda out: out, lambda: 0.0), None
    except ToolCallError as error:
        return None, error


def never_answers() -> Invoke:
    async def invoke(ctx: AttemptContext) -> object:
        await asyncio.Event().wait()
        return None

    return invoke


class TestLimits:
    async def test_a_tool_that_never_answers_times_out_at_its_timeout(self) -> None:
        """TIMEOUT exactly `timeout` after the attempt began, with the attempt in the trail."""
        clock = FakeClock()
        call = call_of(clock, timeout=200, retries=0)
        task = asyncio.create_task(run(call, never_answers()))
        await settle()
        clock.advance(0.199)
        await settle()
        assert not task.done()
        clock.advance(0.001)
        _, error = await task
        assert error is not None
        assert error.code is ErrorCode.TIMEOUT
        assert [a.duration for a in call.attempts] == [pytest.approx(200.0)]
        assert "200 ms" in error.message

    async def test_the_deadline_cuts_an_attempt(self) -> None:
        """With the deadline nearer than the timeout, the attempt ends at the deadline."""
        clock = FakeClock()
        call = call_of(clock, timeout=5000, deadline=300, retries=3, retryDelay=0)
        task = asyncio.create_task(run(call, never_answers()))
        await settle()
        clock.advance(0.3)
        _, error = await task
        assert error is not None
        assert error.code is ErrorCode.TIMEOUT
        assert len(call.attempts) == 1  # no room for another attempt
        assert call.attempts[0].duration == pytest.approx(300.0)

    async def test_the_default_options_answer_an_async_tool_by_the_deadline(self) -> None:
        """Defaults (5 s timeout and deadline): TIMEOUT with one attempt at 5 s, not before."""
        clock = FakeClock()
        call = call_of(clock)
        task = asyncio.create_task(run(call, never_answers()))
        await settle()
        clock.advance(4.999)
        await settle()
        assert not task.done()
        clock.advance(0.001)
        _, error = await task
        assert error is not None
        assert error.code is ErrorCode.TIMEOUT
        assert len(call.attempts) == 1
        assert call.elapsed_ms() == pytest.approx(5000.0)


class TestWaitingIsNotTheTools:
    async def test_time_spent_waiting_is_not_charged_to_the_timeout(self) -> None:
        """3 s waiting for a worker, then 0.1 s of run within a 1 s timeout: a success."""
        clock = FakeClock()
        call = call_of(clock, timeout=1000, deadline=10_000, retries=0)
        started = asyncio.Event()

        async def invoke(ctx: AttemptContext) -> object:
            ctx.mark_waiting("a worker process to start")
            await started.wait()
            ctx.mark_running()
            await asyncio.sleep(0)
            clock.advance(0.1)
            return "done"

        task = asyncio.create_task(run(call, invoke))
        await settle()
        clock.advance(3.0)  # the wait: past the timeout, before the deadline
        await settle()
        assert not task.done()
        started.set()
        result, error = await task
        assert (result, error) == ("done", None)

    async def test_waiting_past_the_deadline_says_what_it_waited_for(self) -> None:
        """A start still going on at the deadline: TIMEOUT naming it and the time so far."""
        clock = FakeClock()
        call = call_of(clock, timeout=100, deadline=2000, retries=2)

        async def invoke(ctx: AttemptContext) -> object:
            ctx.mark_waiting("a worker process to start")
            await asyncio.Event().wait()
            return None

        task = asyncio.create_task(run(call, invoke))
        for _ in range(25):
            await settle()
            clock.advance(0.1)
        _, error = await task
        assert error is not None
        assert error.code is ErrorCode.TIMEOUT
        assert "a worker process to start" in error.message
        assert "2000 ms so far" in error.message
        assert len(call.attempts) == 1


class TestResultsThatExist:
    async def test_a_result_that_exists_when_the_timer_fires_wins(self) -> None:
        """Output marked before the limit, landing a few loop turns later: a success."""
        clock = FakeClock()
        call = call_of(clock, timeout=100, retries=0)

        async def invoke(ctx: AttemptContext) -> object:
            ctx.mark_output()  # a thread finished: its result is on its way to the loop
            clock.advance(0.2)  # the loop was busy: the timer is overdue meanwhile
            for _ in range(5):
                await asyncio.sleep(0)
            return "landed"

        assert await run(call, invoke) == ("landed", None)

    async def test_output_after_the_limit_is_a_timeout(self) -> None:
        """An output that came after the limit (a loop-blocking tool) does not count."""
        clock = FakeClock()
        call = call_of(clock, timeout=100, retries=0)

        async def invoke(ctx: AttemptContext) -> object:
            clock.advance(0.4)  # blocking code: no timer could fire meanwhile
            return "late"

        result, error = await run(call, invoke)
        assert result is None
        assert error is not None
        assert error.code is ErrorCode.TIMEOUT
        assert "came 300 ms later" in error.message


class TestRetries:
    async def test_waits_and_attempts_follow_the_options(self) -> None:
        """Two failures, waits of 1 s and 2 s (backoff 2), then a success on the third."""
        clock = FakeClock()
        call = call_of(clock, retries=3, retryDelay=1000, backoff=2, deadline=60_000)
        tries: list[int] = []

        async def invoke(ctx: AttemptContext) -> object:
            tries.append(ctx.attempt)
            if len(tries) < 3:
                raise ExecutionError(f"failure {len(tries)}")
            return "ok"

        assert await run(call, invoke) == ("ok", None)
        assert clock.slept == [1.0, 2.0]
        assert [a.wait for a in call.attempts] == [0.0, 1000.0, 2000.0]
        assert [a.code for a in call.attempts] == [ErrorCode.EXECUTION_ERROR] * 2 + [None]

    async def test_events_tell_each_attempt_and_wait(self) -> None:
        """Listeners hear every attempt start and end and every wait, in order."""
        clock = FakeClock()
        call = call_of(clock, retries=1, retryDelay=500)
        heard: list[CallEvent] = []
        call.on_event = heard.append

        async def invoke(ctx: AttemptContext) -> object:
            if ctx.attempt == 1:
                raise ExecutionError("once")
            ctx.report_progress(1, 2, "half")
            return "ok"

        await run(call, invoke)
        assert [(e.kind, e.attempt) for e in heard] == [
            ("attempt", 1), ("attempt_end", 1), ("wait", 2), ("attempt", 2), ("progress", 2),
            ("attempt_end", 2)]
        assert heard[1].code == "EXECUTION_ERROR"
        assert heard[-1].code is None
        assert heard[2].wait_ms == 500.0
        assert (heard[4].progress, heard[4].total, heard[4].message) == (1, 2, "half")
        assert all(e.max_attempts == 2 for e in heard)
        notes = call.attempts[1].notes  # kept with the attempt, for the history and the trail
        assert [(n["kind"], n["progress"], n["message"]) for n in notes] == [
            ("progress", 1, "half")]
        assert "notes" not in call.attempts[0].model_dump()  # none: not in the JSON either
