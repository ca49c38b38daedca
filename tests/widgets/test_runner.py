"""CallRunner and Job: one call at a time, never blocking, followed live, cancellable."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from toolcaller import ToolCaller
from toolcaller.core.events import CallEvent
from toolcaller.widgets._runner import CallRunner, Job
from toolcaller.widgets.result import running_html


@pytest.fixture
def caller() -> Iterator[ToolCaller]:
    with ToolCaller() as made:
        yield made


def _event(kind: str, attempt: int, **values: object) -> CallEvent:
    return CallEvent(kind, "c-1", "demo.fail", attempt, 3, 10.0, **values)  # type: ignore[arg-type]


class TestJob:
    def test_events_say_the_attempt_and_the_wait_before_the_next(self) -> None:
        """attempt 1 failed, then a wait: "attempt 1 of 3 · waiting … before attempt 2"."""
        job = Job("demo.fail", {}, {})
        job.hear(_event("attempt", 1))
        assert "attempt 1 of 3" in running_html(job)
        job.hear(_event("attempt_end", 1, code="EXECUTION_ERROR"))
        job.hear(_event("wait", 2, wait_ms=1000.0))
        shown = running_html(job)
        assert "waiting 1.0 s before attempt 2 after EXECUTION_ERROR" in shown
        job.hear(_event("attempt", 2))
        assert "attempt 2 of 3" in running_html(job)
        assert "waiting" not in running_html(job)

    def test_progress_and_log_messages_are_shown(self) -> None:
        """Progress shows as "progress n of m" with a bar; messages as lines (escaped)."""
        job = Job("t", {}, {})
        job.hear(_event("progress", 1, progress=2.0, total=4.0, message="step <2>"))
        job.hear(_event("log", 1, message="connected"))
        shown = running_html(job)
        assert "progress 2 of 4" in shown
        assert "width:50.0%" in shown
        assert "step &lt;2&gt;" in shown
        assert "connected" in shown

    def test_the_request_is_what_was_sent(self) -> None:
        """`request` is the JSON request: toolName, params, options."""
        job = Job("math.add", {"a": 1}, {"retries": 0})
        assert job.request == {"toolName": "math.add", "params": {"a": 1},
                               "options": {"retries": 0}}


class TestRunner:
    async def test_start_returns_at_once_and_wait_gets_the_envelope(self,
                                                                   caller: ToolCaller) -> None:
        """A call is a task: `start` returns before it ends; listeners hear start and done."""
        runner = CallRunner(caller)
        heard: list[str] = []
        runner.listen(lambda what, job: heard.append(what))
        assert runner.start(Job("demo.slow", {"seconds": 0.3}, {}))
        assert runner.running
        assert not runner.start(Job("math.add", {"a": 1, "b": 2}, {}))  # one at a time
        job = await runner.wait()
        assert job is not None
        assert job.envelope is not None
        assert job.envelope.success
        assert heard[0] == "start"
        assert heard[-1] == "done"
        assert "tick" in heard  # the elapsed time moves while it runs
        assert not runner.running

    async def test_cancel_records_a_cancelled_call(self, caller: ToolCaller) -> None:
        """Cancel ends the job as cancelled; the history has a `cancelled` row."""
        runner = CallRunner(caller)
        runner.start(Job("demo.slow", {"seconds": 30}, {"timeout": 60000, "deadline": 60000}))
        await asyncio.sleep(0.05)
        assert runner.cancel()
        job = await runner.wait()
        assert job is not None
        assert job.cancelled
        assert job.envelope is None
        assert caller.history.last().status == "cancelled"  # type: ignore[union-attr]

    def test_run_now_calls_synchronously(self, caller: ToolCaller) -> None:
        """`run_now` is for scripts without a loop: the job ends with its envelope."""
        job = CallRunner(caller).run_now(Job("math.add", {"a": 1, "b": 2}, {}))
        assert job.envelope is not None
        assert job.envelope.result == {"sum": 3}
        assert job.ended is not None

    async def test_a_broken_listener_does_not_break_the_call(self, caller: ToolCaller) -> None:
        """A listener that raises is skipped; the call and other listeners go on."""
        runner = CallRunner(caller)
        seen: list[str] = []

        def broken(what: str, job: Job) -> None:
            raise RuntimeError("view on fire")

        runner.listen(broken)
        runner.listen(lambda what, job: seen.append(what))
        runner.start(Job("math.add", {"a": 1, "b": 2}, {}))
        job = await runner.wait()
        assert job is not None
        assert job.envelope is not None
        assert job.envelope.success
        assert seen[-1] == "done"
