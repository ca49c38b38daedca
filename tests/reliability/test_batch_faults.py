"""Batches under faults: every row gets its code in time, and nothing outlives the batch.

One async `dispatch` tool misbehaves in the way its row's `mode` names, so that a single batch
mixes them all (through `amap` and `map`). Every row must get the code its fault always gives,
within its deadline; the history must hold exactly one record per row, even once the tools
that ignored their cancellation let go; and those tools must not hold the batch. Sync tools
stuck in their threads, a cancelled batch and many batches in a row must leave no task and no
thread behind.
"""

from __future__ import annotations

import asyncio
import gc
import math
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.reliability.conftest import wait_until
from toolcaller import ToolCaller, tool
from toolcaller.adapters.threads import ThreadRunner

ROWS = 1_000
CONCURRENCY = 100
TIMEOUT_MS = 100
DEADLINE_MS = 400
MARGIN_MS = 150.0
"""How far past its deadline a row may end on a shared, loaded machine (loop lag)."""
STUCK_S = 20.0
"""How long a stuck tool holds on, unless `RELEASE` lets it go first."""

RELEASE = threading.Event()
"""Lets the stuck tools go (set at the end of each test)."""


class Gauge:
    """Counts tool runs started, running now, and most running at once, from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started = self.running = self.peak = 0

    def enter(self) -> None:
        with self._lock:
            self.started += 1
            self.running += 1
            self.peak = max(self.peak, self.running)

    def leave(self) -> None:
        with self._lock:
            self.running -= 1


GAUGE = Gauge()


async def _hold(seconds: float, *, until_released: bool = False) -> int:
    """Ignore every cancellation for `seconds` (or until `RELEASE`); return how many came."""
    end = time.monotonic() + seconds
    swallowed = 0
    while time.monotonic() < end and not (until_released and RELEASE.is_set()):
        try:
            await asyncio.sleep(min(end - time.monotonic(), 0.05))
        except asyncio.CancelledError:
            swallowed += 1
    return swallowed


async def dispatch(mode: str, ms: float = 0.0) -> Any:
    """Behave, or misbehave, in the way `mode` names (see `MODES`)."""
    GAUGE.enter()
    try:
        if mode == "ok":
            await asyncio.sleep(ms / 1000)
            return {"ok": ms}
        if mode == "error":
            raise ValueError("bad value")
        if mode == "block":
            time.sleep(ms / 1000)  # noqa: ASYNC251 - the fault under test, under the timeout
            return {"blocked": ms}
        if mode == "nan":
            return {"value": math.nan}
        if mode == "object":
            return {"value": object()}
        if mode == "exit":
            raise SystemExit(3)
        if mode == "cancelled":  # a CancelledError nobody asked for
            loop = asyncio.get_running_loop()
            waited: asyncio.Future[None] = loop.create_future()
            loop.call_later(ms / 1000, waited.cancel)
            await waited
        try:
            await asyncio.Event().wait()  # hang (cancellably); the modes below ignore it
        except asyncio.CancelledError:
            if mode == "hang":
                raise
        if mode == "slow_cleanup":  # holds on after the cancel, then lets it through
            await _hold(ms / 1000, until_released=True)
            raise asyncio.CancelledError
        swallowed = await _hold(ms / 1000, until_released=mode == "stuck")
        if mode == "swallow_raise":
            raise ValueError("cleanup failed")
        return {"swallowed": swallowed}
    finally:
        GAUGE.leave()


def sleepy(ms: float) -> dict[str, float]:
    """A sync tool (run in a worker thread) that sleeps."""
    time.sleep(ms / 1000)
    return {"slept": ms}


# mode, ms, expected code (None: success), fewest and most attempts, a word of the message.
# Retryable failures (a raised exception, a timeout) get their one retry: RETRY_EXHAUSTED or
# TIMEOUT after 2 attempts. A stuck tool is answered at its grace's end, the deadline: 1.
# The batch's own work lags the loop by up to ~80 ms here: a row that awaits ("ok") may
# resume past its timeout and succeed on its retry.
MODES: list[tuple[str, float, str | None, int, int, str]] = [
    ("ok", 5, None, 1, 2, ""),
    ("error", 0, "RETRY_EXHAUSTED", 2, 2, "ValueError"),
    ("hang", 0, "TIMEOUT", 2, 2, "no result within"),
    ("swallow", 30, "TIMEOUT", 2, 2, "returned later"),
    ("swallow_raise", 30, "TIMEOUT", 2, 2, "no result within"),
    ("stuck", STUCK_S * 1000, "TIMEOUT", 1, 1, "ignored its cancellation"),
    ("block", 2, None, 1, 1, ""),
    ("nan", 0, "PARSE_ERROR", 1, 1, ""),
    ("object", 0, "PARSE_ERROR", 1, 1, ""),
    ("exit", 0, "RETRY_EXHAUSTED", 2, 2, "SystemExit"),
    ("cancelled", 5, "RETRY_EXHAUSTED", 2, 2, "CancelledError"),
]
EXPECTED = {mode: (code, low, high, word) for mode, _, code, low, high, word in MODES}


def mixed_rows(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """`count` rows cycling through `MODES`, shuffled with a fixed seed."""
    rows = [{"mode": MODES[i % len(MODES)][0], "ms": MODES[i % len(MODES)][1]}
            for i in range(count)]
    random.Random(seed).shuffle(rows)
    return rows


@pytest.fixture
def caller() -> Iterator[ToolCaller]:
    RELEASE.clear()
    made = ToolCaller(tools=[tool(dispatch), tool(sleepy),
                             tool(name="sleepy_idempotent", idempotent=True)(sleepy)],
                      max_history=100_000)
    yield made
    RELEASE.set()
    made.close()


@pytest.fixture(autouse=True)
def frozen_heap() -> Iterator[None]:
    """Keep the test process's heap out of the GC's full collections during timed batches.

    Under pytest the process holds ~250,000 objects (plugins, other tests' modules): a full
    collection then stops every thread for 100-150 ms, which would be counted against the
    batch's rows. The batch's own objects are still collected.
    """
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


def pool_of(caller: ToolCaller) -> ThreadRunner:
    """The worker threads of the caller's sync Python tools."""
    pool: ThreadRunner = getattr(caller.adapter_for("python"), "threads")  # noqa: B009
    return pool


async def await_until(predicate: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    """Poll a predicate on the loop until it holds or the time is up; return its last value."""
    for _ in range(int(timeout_s / 0.02)):
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return predicate()


def check_records(caller: ToolCaller, envelopes: Any, call_ids: list[str]) -> None:
    """Exactly one history record per row, with the row's call id and code; no other."""
    codes = {e.metadata.call_id: e.code for e in envelopes}
    assert list(codes) == call_ids  # unique, and the frame's
    assert caller.history.total == len(call_ids)
    records = caller.history.records()
    assert sorted(r.call_id for r in records) == sorted(call_ids)
    assert all(r.code == codes[r.call_id] for r in records)


class TestMixedFaults:
    @pytest.mark.parametrize("via", ["amap", "map"])
    def test_every_row_gets_its_code_in_time(self, caller: ToolCaller, via: str) -> None:
        """1,000 shuffled faults: each row its code, attempts and time; one record per row."""
        rows = mixed_rows(ROWS)
        stuck = sum(row["mode"] == "stuck" for row in rows)
        options: dict[str, Any] = {"concurrency": CONCURRENCY, "progress": False,
                                   "timeout": TIMEOUT_MS, "deadline": DEADLINE_MS,
                                   "retries": 1, "retryDelay": 0}
        runs, GAUGE.peak = GAUGE.started, 0

        async def via_amap() -> tuple[Any, float, int]:
            began = time.perf_counter()
            frame = await caller.amap("dispatch", rows, **options)
            wall, running = time.perf_counter() - began, GAUGE.running
            RELEASE.set()  # the stuck tools let go, and their workers left behind end
            assert await await_until(lambda: GAUGE.running == 0), GAUGE.running
            return frame, wall, running

        if via == "amap":
            frame, wall, running = asyncio.run(via_amap())
        else:
            began = time.perf_counter()
            frame = caller.map("dispatch", rows, **options)
            wall, running = time.perf_counter() - began, GAUGE.running
            RELEASE.set()
            assert wait_until(lambda: GAUGE.running == 0, 5.0), GAUGE.running
        # The batch returned while every stuck tool still held on (for 20 s): it did not wait.
        assert running == stuck
        # New workers took the stuck ones' places: more tools ran at once than the concurrency
        # (with no replacement, every stuck tool would hold one of the 100 places).
        assert GAUGE.peak > CONCURRENCY, GAUGE.peak
        assert wall < math.ceil(ROWS / CONCURRENCY) * DEADLINE_MS / 1000 + 1.0, wall
        envelopes = frame.attrs["envelopes"]
        assert len(envelopes) == len(frame) == ROWS
        for row, envelope in zip(rows, envelopes, strict=True):
            code, low, high, word = EXPECTED[row["mode"]]
            meta, seen = envelope.metadata, (row, envelope.error)
            assert envelope.code == code, seen
            assert envelope.success is (code is None), seen
            assert low <= meta.attempts <= high, (meta.attempts, seen)
            assert meta.duration <= DEADLINE_MS + MARGIN_MS, (meta.duration, seen)
            assert word in (envelope.error.message if envelope.error else ""), seen
        time.sleep(0.2)  # anything a released tool could still record, it has by now
        check_records(caller, envelopes, list(frame["call_id"]))
        # Each attempt ran the tool once; a worker left behind ran nothing more.
        assert GAUGE.started - runs == sum(e.metadata.attempts for e in envelopes)


class TestSyncTools:
    @pytest.mark.parametrize(("idempotent", "attempts"), [(False, 1), (True, 2)],
                             ids=["not-idempotent", "idempotent"])
    def test_threads_past_their_timeout_do_not_hold_the_batch(
            self, caller: ToolCaller, idempotent: bool, attempts: int) -> None:
        """Sync rows sleeping past the timeout: TIMEOUT by the deadline; their threads end.

        A tool that is not idempotent is not started again while its attempt still runs.
        """
        threads = threading.active_count()
        name = "sleepy_idempotent" if idempotent else "sleepy"
        began = time.perf_counter()
        frame = caller.map(name, [{"ms": 2_000}] * 30, concurrency=15, progress=False,
                           timeout=50, deadline=200, retries=1, retryDelay=0)
        wall = time.perf_counter() - began
        pool = pool_of(caller)
        assert wall < 2 * 0.2 + 0.6, wall  # two waves of rows, not the 2 s the threads sleep
        assert pool.busy == 30 * attempts  # every attempt still sleeps in its thread
        envelopes = frame.attrs["envelopes"]
        assert [e.code for e in envelopes] == ["TIMEOUT"] * 30
        assert {e.metadata.attempts for e in envelopes} == {attempts}
        assert max(e.metadata.duration for e in envelopes) <= 200 + MARGIN_MS
        assert all("worker thread" in (e.error.message if e.error else "") for e in envelopes)
        check_records(caller, envelopes, list(frame["call_id"]))
        assert wait_until(lambda: pool.busy == 0, 10.0), pool.busy
        caller.close()
        assert wait_until(lambda: threading.active_count() <= threads, 10.0), (
            threading.active_count(), threads)


class TestCancelUnderLoad:
    async def test_cancel_stops_the_batch_and_leaves_only_stuck_tools(
            self, caller: ToolCaller) -> None:
        """Cancel 500 slow rows after 100 ms: back within 1 s; no row, record or task after."""
        # In every 10 rows, one holds on to its cancellation for 1 s of cleanup and then lets
        # it through, and one swallows it and returns once released.
        rows = [{"mode": "slow_cleanup", "ms": 1_000} if i % 10 == 0
                else {"mode": "stuck", "ms": STUCK_S * 1000} if i % 10 == 5
                else {"mode": "ok", "ms": 2_000} for i in range(500)]
        before = asyncio.all_tasks()
        runs = GAUGE.started
        batch = asyncio.create_task(caller.amap("dispatch", rows, concurrency=100,
                                                progress=False, timeout=5_000, retries=1))
        await asyncio.sleep(0.1)
        began = time.perf_counter()
        batch.cancel()
        with pytest.raises(asyncio.CancelledError):
            await batch
        assert time.perf_counter() - began < 1.0
        assert GAUGE.started - runs == 100  # the first wave; no row ended before the cancel
        records = caller.history.total
        assert GAUGE.running == 20  # the first wave's stubborn rows, still holding on
        assert len(asyncio.all_tasks() - before) == 20  # their workers, left behind; no other
        await asyncio.sleep(0.3)
        assert (caller.history.total, GAUGE.started - runs) == (records, 100)
        assert await await_until(lambda: GAUGE.running == 10, 3.0)  # cleanups end by themselves
        await asyncio.sleep(0.05)
        assert (caller.history.total, GAUGE.started - runs) == (records, 100)
        assert len(asyncio.all_tasks() - before) == 10
        # The swallowing tools return: their workers start no other row. (Each of their rows
        # is then recorded, though the batch was cancelled: a known bug, not checked here.)
        RELEASE.set()
        assert await await_until(lambda: GAUGE.running == 0, 3.0)
        await asyncio.sleep(0.05)
        assert GAUGE.started - runs == 100
        assert asyncio.all_tasks() - before == set()


class TestManyBatches:
    def test_twenty_batches_leave_no_thread_or_task(self, caller: ToolCaller) -> None:
        """20 batches of 100 timing-out rows, async and sync: tasks and threads come back."""
        threads = threading.active_count()
        async_rows = [{"mode": mode, "ms": ms} for mode, ms in
                      [("ok", 1), ("hang", 0), ("swallow", 20), ("slow_cleanup", 300),
                       ("stuck", 300)] * 20]
        sync_rows = [{"ms": 80 if i % 2 else 1} for i in range(100)]
        options: dict[str, Any] = {"progress": False, "timeout": 50, "deadline": 150,
                                   "retries": 1, "retryDelay": 0}
        pool = pool_of(caller)
        peak = 0

        async def batches() -> None:
            nonlocal peak
            main = asyncio.current_task()
            for index in range(20):
                sync = index % 2 == 1
                # 25 sync rows in flight, each with at most one straggler: the pool's 64
                # threads are never all busy, so no attempt waits in its queue.
                frame = await caller.amap("sleepy" if sync else "dispatch",
                                          sync_rows if sync else async_rows,
                                          concurrency=25 if sync else 50, **options)
                codes = [e.code for e in frame.attrs["envelopes"]]
                assert codes.count(None) == 50 if sync else codes.count("TIMEOUT") == 80
                peak = max(peak, threading.active_count())
            assert await await_until(lambda: not (GAUGE.running or pool.busy))
            await asyncio.sleep(0.05)
            assert asyncio.all_tasks() == {main}

        asyncio.run(batches())
        assert caller.history.total == 2_000
        assert peak <= threads + pool.max_threads + 8, (peak, threads)
        caller.close()
        assert wait_until(lambda: threading.active_count() <= threads, 10.0), (
            threading.active_count(), threads)
