"""Execution, honestly (SPEC §4): threads, processes, cancellation, loops, concurrency."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import check_envelope, code_of, make_tool, wait_until
from toolcaller import Tool, ToolCaller
from toolcaller.sources.registry_file import tools_from_data


class Probe:
    """A sync tool that blocks on an event and counts calls and how many run at once."""

    def __init__(self, hold_s: float = 10.0) -> None:
        self.hold_s = hold_s
        self.release = threading.Event()
        self.started = threading.Event()
        self.finished = threading.Event()
        self.calls = 0
        self.running = 0
        self.max_running = 0
        self._lock = threading.Lock()

    def __call__(self) -> str:
        with self._lock:
            self.calls += 1
            self.running += 1
            self.max_running = max(self.max_running, self.running)
        self.started.set()
        try:
            self.release.wait(self.hold_s)
        finally:
            with self._lock:
                self.running -= 1
            self.finished.set()
        return "done"


@pytest.fixture
def probe() -> Iterator[Probe]:
    made = Probe()
    yield made
    made.release.set()


class TestSyncToolInAThread:
    def test_timeout_says_the_thread_goes_on(self, probe: Probe) -> None:
        """A sync tool that times out gives TIMEOUT and the message says its thread goes on."""
        caller = ToolCaller(tools=[make_tool(probe, "t")])
        started = time.perf_counter()
        data = check_envelope(caller.handle({"toolName": "t", "options": {
            "timeout": 50, "retries": 0}}))
        assert time.perf_counter() - started < 0.5
        assert code_of(data) == "TIMEOUT"
        assert "thread" in data["error"]["message"]
        assert "running" in data["error"]["message"]
        assert probe.started.is_set()
        assert not probe.finished.is_set()  # really still running
        probe.release.set()
        assert probe.finished.wait(2)


def _handle(caller: ToolCaller, request: dict[str, Any], driver: str,
            probe: Probe) -> dict[str, Any]:
    """Answer through handle() or ahandle(); the async loop stays open until the probe ends."""
    if driver == "sync":
        return caller.handle(request)

    async def main() -> dict[str, Any]:
        answer = await caller.ahandle(request)
        probe.release.set()
        await asyncio.to_thread(wait_until, lambda: probe.running == 0)
        await asyncio.sleep(0.01)  # let the worker's completion callback reach this loop
        return answer

    return asyncio.run(main())


class TestStragglers:
    @pytest.mark.parametrize("driver", ["sync", "async"])
    def test_not_idempotent_is_not_retried_while_running(self, probe: Probe,
                                                         driver: str) -> None:
        """A non-idempotent sync tool is not started again while its timed-out run goes on."""
        caller = ToolCaller(tools=[make_tool(probe, "t")])
        data = _handle(caller, {"toolName": "t", "options": {
            "timeout": 30, "retries": 3, "retryDelay": 0, "deadline": 250}}, driver, probe)
        assert code_of(data) == "TIMEOUT"
        assert data["metadata"]["attempts"] == 1
        assert probe.calls == 1
        assert "idempotent" in str(data["error"]["details"])
        probe.release.set()
        assert probe.finished.wait(2)
        assert probe.calls == 1

    @pytest.mark.parametrize("driver", ["sync", "async"])
    def test_not_idempotent_is_retried_after_the_straggler_ends(self, driver: str) -> None:
        """Once the timed-out run ends, the retry starts; two runs never overlap."""
        probe = Probe(hold_s=0.08)
        caller = ToolCaller(tools=[make_tool(probe, "t")])
        data = _handle(caller, {"toolName": "t", "options": {
            "timeout": 30, "retries": 1, "retryDelay": 0, "deadline": 2000}}, driver, probe)
        assert code_of(data) == "TIMEOUT"
        assert data["metadata"]["attempts"] == 2
        assert probe.max_running == 1
        assert data["metadata"]["trail"][1]["duration"] > 0

    def test_straggler_ending_after_its_loop_closed(self, probe: Probe,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
        """A sync tool that ends after its acall's event loop closed breaks no worker thread."""
        crashes: list[BaseException | None] = []
        monkeypatch.setattr(threading, "excepthook", lambda args: crashes.append(args.exc_value))
        caller = ToolCaller(tools=[make_tool(probe, "t", idempotent=True)])
        envelope = asyncio.run(caller.acall("t", timeout=30, retries=0))
        assert envelope.code == "TIMEOUT"
        probe.release.set()
        assert probe.finished.wait(2)
        pool = caller.adapters["python"].threads  # type: ignore[attr-defined]
        wait_until(lambda: pool.busy == 0 or bool(crashes))
        assert crashes == []
        assert pool.busy == 0  # the worker went back to the pool
        assert caller.handle({"toolName": "t", "options": {"timeout": 1000}})["success"]

    def test_idempotent_is_retried_at_once(self, probe: Probe) -> None:
        """An idempotent sync tool is retried while the timed-out run still goes on."""
        caller = ToolCaller(tools=[make_tool(probe, "t", idempotent=True)])
        data = caller.handle({"toolName": "t", "options": {
            "timeout": 30, "retries": 2, "retryDelay": 0, "deadline": 2000}})
        assert code_of(data) == "TIMEOUT"
        assert data["metadata"]["attempts"] == 3
        assert probe.calls == 3
        assert probe.max_running == 3


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie is gone too; the file vanishes when the child is reaped meanwhile
        return "zombie" in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True


@pytest.fixture
def process_caller(tmp_path: Path) -> Iterator[ToolCaller]:
    data = {"tools": [
        {"name": "proc.pid", "description": "pid", "python": "tests.tools_for_tests:pid",
         "isolation": "process"},
        {"name": "proc.boom", "description": "raise", "python": "tests.tools_for_tests:boom",
         "isolation": "process", "options": {"retries": 0}},
        {"name": "thread.pid", "description": "pid", "python": "tests.tools_for_tests:pid"},
    ]}
    hang = Tool(name="proc.hang", description="hang", kind="python",
                target="tests.tools_for_tests:write_pid_and_hang", isolation="process",
                params_schema={"type": "object", "properties": {"path": {"type": "string"}}},
                options={"retries": 0})
    caller = ToolCaller(tools=[*tools_from_data(data), hang])
    warm = caller.handle({"toolName": "proc.pid", "options": {"timeout": 10_000,
                                                              "deadline": 20_000}})
    assert warm["success"], warm
    yield caller
    caller.close()


@pytest.mark.integration
class TestProcessIsolation:
    def test_runs_in_another_process(self, process_caller: ToolCaller) -> None:
        """A tool with isolation 'process' runs in a child process."""
        data = process_caller.handle({"toolName": "proc.pid"})
        assert data["success"] is True
        assert data["result"]["pid"] != os.getpid()

    def test_isolation_option_on_the_call(self, process_caller: ToolCaller) -> None:
        """options.isolation 'process' moves a thread tool into a child for this call only."""
        moved = process_caller.handle({"toolName": "thread.pid",
                                       "options": {"isolation": "process"}})
        here = process_caller.handle({"toolName": "thread.pid"})
        assert moved["result"]["pid"] != os.getpid()
        assert here["result"]["pid"] == os.getpid()

    def test_hung_child_is_killed(self, process_caller: ToolCaller, tmp_path: Path) -> None:
        """A hung tool's child process is killed when the TIMEOUT envelope is back."""
        pid_file = tmp_path / "pid"
        data = process_caller.handle({"toolName": "proc.hang",
                                      "params": {"path": str(pid_file)},
                                      "options": {"timeout": 500}})
        assert code_of(data) == "TIMEOUT"
        assert "killed" in data["error"]["message"]
        pid = int(pid_file.read_text())
        assert pid != os.getpid()
        # SIGKILL went before the envelope; the kernel's teardown of the child (~10 ms, more for a
        # big one) is not waited for, so that it never pushes the envelope past the deadline.
        assert wait_until(lambda: _gone(pid), 2.0)

    async def test_hung_child_is_killed_from_acall(self, process_caller: ToolCaller,
                                                   tmp_path: Path) -> None:
        """Through `acall`, the timeout kills the child too."""
        pid_file = tmp_path / "pid"
        envelope = await process_caller.acall("proc.hang", {"path": str(pid_file)},
                                              timeout=500)
        assert envelope.code == "TIMEOUT"
        pid = int(pid_file.read_text())
        assert wait_until(lambda: _gone(pid), 2.0)

    def test_child_exception(self, process_caller: ToolCaller) -> None:
        """An exception in the child gives EXECUTION_ERROR with its type and message."""
        data = process_caller.handle({"toolName": "proc.boom", "params": {"message": "bad x"}})
        assert code_of(data) == "EXECUTION_ERROR"
        assert "ValueError" in data["error"]["message"]
        assert "bad x" in data["error"]["message"]

    def test_next_call_after_a_kill_works(self, process_caller: ToolCaller,
                                          tmp_path: Path) -> None:
        """After a child was killed, the next call gets a fresh child and succeeds."""
        process_caller.handle({"toolName": "proc.hang", "params": {"path": str(tmp_path / "p")},
                               "options": {"timeout": 500}})
        data = process_caller.handle({"toolName": "proc.pid",
                                      "options": {"timeout": 10_000, "deadline": 20_000}})
        assert data["success"] is True


class TestAsyncCancellation:
    @staticmethod
    def _cancellable() -> tuple[Any, dict[str, bool]]:
        seen = {"cancelled": False, "finished": False}

        async def wait_long() -> None:
            try:
                await asyncio.sleep(10)
                seen["finished"] = True
            except asyncio.CancelledError:
                seen["cancelled"] = True
                raise

        return wait_long, seen

    def test_call_cancels(self) -> None:
        """An async tool that times out under `call()` is cancelled before the envelope."""
        fn, seen = self._cancellable()
        caller = ToolCaller(tools=[make_tool(fn, "t")])
        envelope = caller.call("t", timeout=30, retries=0)
        assert envelope.code == "TIMEOUT"
        assert seen == {"cancelled": True, "finished": False}
        assert "thread" not in envelope.error.message  # type: ignore[union-attr]

    async def test_acall_cancels(self) -> None:
        """An async tool that times out under `acall()` is cancelled before the envelope."""
        fn, seen = self._cancellable()
        caller = ToolCaller(tools=[make_tool(fn, "t")])
        envelope = await caller.acall("t", timeout=30, retries=0)
        assert envelope.code == "TIMEOUT"
        assert seen["cancelled"] is True


async def _double_async(x: int) -> int:
    await asyncio.sleep(0.001)
    return 2 * x


def _double_sync(x: int) -> int:
    return 2 * x


@pytest.fixture
def both() -> Iterator[ToolCaller]:
    caller = ToolCaller(tools=[make_tool(_double_async, "a"), make_tool(_double_sync, "s")])
    yield caller
    caller.close()


class TestCallInsideARunningLoop:
    @pytest.mark.parametrize("name", ["s", "a"], ids=["sync-tool", "async-tool"])
    async def test_from_a_coroutine(self, both: ToolCaller, name: str) -> None:
        """`call()` works from inside a coroutine on a running loop."""
        asyncio.get_running_loop()
        envelope = both.call(name, {"x": 21})
        assert envelope.success is True
        assert envelope.result == 42

    @pytest.mark.parametrize("name", ["s", "a"], ids=["sync-tool", "async-tool"])
    async def test_from_a_loop_callback(self, both: ToolCaller, name: str) -> None:
        """`call()` works from a plain callback the loop runs (a widget handler, say)."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Any] = loop.create_future()

        def callback() -> None:
            try:
                answer.set_result(both.call(name, {"x": 5}))
            except BaseException as exc:
                answer.set_exception(exc)

        loop.call_soon(callback)
        envelope = await asyncio.wait_for(answer, 5)
        assert envelope.result == 10

    async def test_handle_in_a_loop(self, both: ToolCaller) -> None:
        """`handle()` also works inside a running loop, for an async tool."""
        assert both.handle({"toolName": "a", "params": {"x": 1}})["result"] == 2


class TestConcurrency:
    async def test_acall_runs_async_calls_concurrently(self) -> None:
        """100 acall()s of a 50 ms async tool finish together in well under 1 s."""
        async def nap(i: int) -> int:
            await asyncio.sleep(0.05)
            return i

        caller = ToolCaller(tools=[make_tool(nap, "nap")])
        started = time.perf_counter()
        envelopes = await asyncio.gather(*(caller.acall("nap", {"i": i}) for i in range(100)))
        elapsed = time.perf_counter() - started
        assert [e.result for e in envelopes] == list(range(100))
        assert elapsed < 0.8
        assert len(caller.history) == 100

    async def test_acall_runs_sync_tools_in_threads(self) -> None:
        """20 acall()s of a 50 ms sync tool overlap in worker threads."""
        def nap(i: int) -> int:
            time.sleep(0.05)
            return i

        caller = ToolCaller(tools=[make_tool(nap, "nap", idempotent=True)])
        started = time.perf_counter()
        envelopes = await asyncio.gather(*(caller.acall("nap", {"i": i}) for i in range(20)))
        assert all(e.success for e in envelopes)
        assert time.perf_counter() - started < 0.8

    def test_thread_safety(self) -> None:
        """1,000 calls from 20 threads give 1,000 correct envelopes and history records."""
        caller = ToolCaller(tools=[make_tool(_double_sync, "s"), make_tool(_double_async, "a")])

        def one(i: int) -> dict[str, Any]:
            return caller.handle({"toolName": "s" if i % 2 else "a", "params": {"x": i}})

        with ThreadPoolExecutor(max_workers=20) as pool:
            results = list(pool.map(one, range(1000)))
        assert [r["result"] for r in results] == [2 * i for i in range(1000)]
        records = caller.history.records()
        assert len(records) == 1000
        assert caller.history.total == 1000
        assert len({r.call_id for r in records}) == 1000
        assert {r["metadata"]["callId"] for r in results} == {r.call_id for r in records}
        caller.close()
