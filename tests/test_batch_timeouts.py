"""Batch rows keep their timeouts and retries: slow, stuck and odd tools in a batch."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest

from toolcaller import ToolCaller, tool
from toolcaller.batch import amap_calls, map_calls


def make_caller(released: list[asyncio.Event]) -> ToolCaller:
    """Tools that sleep, ignore cancellation, or fail into a timeout differently."""

    async def nap(ms: float) -> dict[str, float]:
        await asyncio.sleep(ms / 1000)
        return {"ms": ms}

    async def stubborn(ms: float) -> dict[str, int]:
        """Swallow every cancellation until `ms` have passed, or until released."""
        end = time.monotonic() + ms / 1000
        swallowed = 0
        while (left := end - time.monotonic()) > 0 and not (released and released[0].is_set()):
            try:
                await asyncio.sleep(min(left, 0.01))
            except asyncio.CancelledError:
                swallowed += 1
        return {"swallowed": swallowed}

    async def swallow_once() -> str:
        """Swallow the cancellation and return a value anyway."""
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            return "too late"
        return "never"

    async def cancel_to_error() -> None:
        """Turn the cancellation into another exception."""
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            raise ValueError("cleanup failed") from None

    async def cancelled_inside() -> None:
        """Await something that another task cancels: CancelledError, yet nobody cancelled us."""
        loop = asyncio.get_running_loop()
        waited = loop.create_future()
        loop.call_later(0.01, waited.cancel)
        await waited

    tries: dict[str, int] = {}

    async def slow_then_fast(key: str) -> int:
        """Too slow on the first try, quick on the second."""
        tries[key] = tries.get(key, 0) + 1
        if tries[key] == 1:
            await asyncio.sleep(10)
        return tries[key]

    return ToolCaller(tools=[tool(f) for f in (nap, stubborn, swallow_once, cancel_to_error,
                                               slow_then_fast, cancelled_inside)])


@pytest.fixture
def released() -> list[asyncio.Event]:
    return []


@pytest.fixture
def caller(released: list[asyncio.Event]) -> Any:
    made = make_caller(released)
    yield made
    made.close()


class TestTimeouts:
    async def test_timeout_then_retry_inline(self, caller: ToolCaller) -> None:
        """A row that times out is retried in the same worker; its trail shows both attempts."""
        frame = await amap_calls(caller, "slow_then_fast", [{"key": str(i)} for i in range(4)],
                                 concurrency=4, progress=False, timeout=50, retries=1,
                                 retryDelay=0, deadline=2_000)
        assert frame["success"].all(), frame["message"].tolist()
        assert frame["result"].tolist() == [2] * 4
        assert frame["attempts"].tolist() == [2] * 4
        trail = frame.attrs["envelopes"][0].metadata.trail
        assert [t.code.value if t.code else None for t in trail] == ["TIMEOUT", None]

    @pytest.mark.parametrize("name", ["swallow_once", "cancel_to_error"])
    async def test_what_a_cancelled_tool_does_is_still_a_timeout(
            self, caller: ToolCaller, name: str) -> None:
        """Returning a value or raising after the cancellation still ends the row as TIMEOUT."""
        started = time.perf_counter()
        frame = await amap_calls(caller, name, [{}] * 3, concurrency=3, progress=False,
                                 timeout=50, retries=0)
        assert frame["code"].tolist() == ["TIMEOUT"] * 3
        assert time.perf_counter() - started < 1.0
        # The workers' tasks were uncancelled: a later await in this task is not interrupted.
        await asyncio.sleep(0.01)

    async def test_user_cancel_is_not_taken_for_a_timeout(self, caller: ToolCaller) -> None:
        """Cancelling the batch while an attempt also timed out still cancels the batch."""
        task = asyncio.create_task(amap_calls(caller, "nap", [{"ms": 5_000}] * 4,
                                              concurrency=2, progress=False, timeout=100,
                                              retries=0))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


class TestStuckTools:
    async def test_a_tool_ignoring_cancellation_is_answered_by_the_deadline(
            self, caller: ToolCaller, released: list[asyncio.Event]) -> None:
        """The stuck row gets TIMEOUT by its deadline, not when the tool lets go."""
        released.append(asyncio.Event())
        started = time.perf_counter()
        frame = await amap_calls(caller, "stubborn", [{"ms": 5_000}], concurrency=1,
                                 progress=False, timeout=100, deadline=300, retries=0)
        wall = time.perf_counter() - started
        assert frame["code"].tolist() == ["TIMEOUT"]
        assert "ignored its cancellation" in frame["message"][0]
        assert wall < 0.6, wall
        released[0].set()

    async def test_the_batch_goes_on_past_a_stuck_row(
            self, caller: ToolCaller, released: list[asyncio.Event]) -> None:
        """With one worker, a stuck row does not hold the rows after it."""
        released.append(asyncio.Event())
        frame = await amap_calls(caller, "stubborn", [{"ms": 5_000}, {"ms": 0}, {"ms": 0}],
                                 concurrency=1, progress=False, timeout=100, deadline=300,
                                 retries=0)
        assert frame["code"][0] == "TIMEOUT"
        assert frame["success"].tolist() == [False, True, True]
        released[0].set()
        await asyncio.sleep(0.05)  # the abandoned worker ends once its tool lets go

    async def test_one_history_record_per_row_even_when_abandoned(
            self, caller: ToolCaller, released: list[asyncio.Event]) -> None:
        """The abandoned attempt, when it ends later, records nothing more."""
        released.append(asyncio.Event())
        caller.history.clear()
        frame = await amap_calls(caller, "stubborn", [{"ms": 400}] * 2, concurrency=2,
                                 progress=False, timeout=50, deadline=150, retries=0)
        assert frame["code"].tolist() == ["TIMEOUT"] * 2
        await asyncio.sleep(0.5)  # the tools return by themselves now
        assert len(caller.history) == 2
        assert sorted(r.call_id for r in caller.history) == sorted(frame["call_id"])
        assert [r.code for r in caller.history] == ["TIMEOUT"] * 2

    def test_sync_map_answers_a_stuck_row_too(self, caller: ToolCaller) -> None:
        """`map` runs the same workers on the caller's loop thread."""
        started = time.perf_counter()
        frame = map_calls(caller, "stubborn", [{"ms": 2_000}, {"ms": 0}], concurrency=1,
                          progress=False, timeout=100, deadline=300, retries=0)
        assert frame["code"][0] == "TIMEOUT"
        assert frame["success"].tolist() == [False, True]
        assert time.perf_counter() - started < 1.5


    async def test_a_stuck_row_still_gets_its_retries(
            self, caller: ToolCaller, released: list[asyncio.Event]) -> None:
        """Retries and time left: the row goes on without the stuck worker, like `acall`."""
        released.append(asyncio.Event())
        caller.history.clear()
        frame = await amap_calls(caller, "stubborn", [{"ms": 250}], concurrency=1,
                                 progress=False, timeout=50, deadline=2_000, retries=2,
                                 retryDelay=0)
        via_acall = await caller.acall("stubborn", {"ms": 250}, timeout=50, deadline=2_000,
                                       retries=2, retryDelay=0)
        assert frame["code"][0] == "TIMEOUT" == via_acall.code
        assert frame["attempts"][0] == 3 == via_acall.metadata.attempts
        await asyncio.sleep(0.4)  # the abandoned attempts end: nothing more is recorded
        assert [len(r.attempts) for r in caller.history] == [3, 3]

    async def test_the_worker_left_behind_does_not_run_the_tool_again(
            self, caller: ToolCaller) -> None:
        """Once its tool lets go, the abandoned worker stops: no retry, no other row."""
        started: list[float] = []

        async def stuck_once() -> str:
            started.append(time.monotonic())
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.sleep(0.01)
            return "late"

        caller.add(tool(stuck_once))
        frame = await amap_calls(caller, "stuck_once", [{}], concurrency=1, progress=False,
                                 timeout=50, deadline=150, retries=3, retryDelay=0)
        assert frame["code"][0] == "TIMEOUT"
        await asyncio.sleep(0.5)
        assert len(started) == 1


class TestCancellation:
    @pytest.mark.parametrize(("name", "rows"), [
        ("stubborn", [{"ms": 5_000}] + [{"ms": 0}] * 5),
        ("swallow_once", [{}] * 6),
    ], ids=["ignores-the-cancel", "returns-instead"])
    async def test_cancel_stops_the_batch_whatever_the_tool_does(
            self, caller: ToolCaller, released: list[asyncio.Event], name: str,
            rows: list[dict[str, Any]]) -> None:
        """After a cancel no further row starts, even if the running tool ignores the cancel."""
        released.append(asyncio.Event())
        caller.history.clear()
        task = asyncio.create_task(amap_calls(caller, name, rows, concurrency=1,
                                              progress=False, timeout=5_000, retries=0))
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.perf_counter() - started < 1.0
        released[0].set()
        await asyncio.sleep(0.1)
        assert len(caller.history) <= 1  # at most the row that was running; none after it

    @pytest.mark.parametrize("then_raise", [False, True], ids=["then-returns", "then-raises"])
    async def test_a_cancelled_row_is_recorded_once_and_not_retried(
            self, caller: ToolCaller, then_raise: bool) -> None:
        """The tool swallowed the batch's cancel: its row is recorded as cancelled, once, and
        nothing more happens when the tool lets go (no second record, no retry)."""
        runs: list[int] = []

        async def holds_the_cancel() -> str:
            runs.append(1)
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.sleep(0.01)
            if then_raise:
                raise ValueError("late failure")
            return "late"

        caller.add(tool(holds_the_cancel))
        caller.history.clear()
        task = asyncio.create_task(amap_calls(caller, "holds_the_cancel", [{}] * 3,
                                              concurrency=3, progress=False, timeout=5_000,
                                              retries=2, retryDelay=0))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.5)  # the tools have let go by now
        assert [r.status for r in caller.history] == ["cancelled"] * 3
        assert len(runs) == 3

    async def test_a_tool_raising_cancelled_error_by_itself_fails_its_row(
            self, caller: ToolCaller) -> None:
        """A CancelledError nobody asked for is the tool's failure, in a batch and in acall."""
        frame = await asyncio.wait_for(amap_calls(
            caller, "cancelled_inside", [{}] * 3, concurrency=2, progress=False, retries=0),
            timeout=5)
        assert frame["code"].tolist() == ["EXECUTION_ERROR"] * 3
        envelope = await caller.acall("cancelled_inside", {}, retries=0)
        assert envelope.code == "EXECUTION_ERROR"
        assert "CancelledError" in envelope.error.message  # type: ignore[union-attr]


class TestManyRows:
    async def test_thousands_in_flight_keep_order_and_records(self, caller: ToolCaller) -> None:
        """2,000 rows at 500 in flight: every row its own envelope and record, in order."""
        caller.history.clear()
        rows = [{"ms": float(i % 7)} for i in range(2_000)]
        frame = await amap_calls(caller, "nap", rows, concurrency=500, progress=False)
        assert frame["success"].all()
        assert [r["ms"] for r in frame["result"]] == [r["ms"] for r in rows]
        assert len(caller.history) == 2_000
        assert frame["call_id"].is_unique
