"""`toolcaller.core.policy`: the retry plan, without I/O (rules 4–6)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import FakeClock
from toolcaller.core.policy import MIN_ATTEMPT_MS, CallPlan
from toolcaller.envelope import Options
from toolcaller.errors import (
    ErrorCode,
    ExecutionError,
    InvalidParamsError,
    ParseError,
    ToolCallError,
    ToolTimeoutError,
)


def plan_for(clock: FakeClock, rng: float = 0.0, **options: Any) -> CallPlan:
    return CallPlan(Options(**options), clock.clock(), clock.clock, lambda: rng)


def run_attempt(plan: CallPlan, clock: FakeClock, wait_s: float, takes_s: float,
                error: ToolCallError | None) -> None:
    """Simulate one attempt: wait, run for `takes_s`, end with `error`."""
    clock.advance(wait_s)
    attempt = plan.begin(wait_s)
    clock.advance(takes_s)
    plan.end(attempt, error)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


class TestFirstStep:
    def test_first_attempt_has_no_wait_and_the_timeout_as_budget(self, clock: FakeClock) -> None:
        """The first step waits 0 and may use the whole per-attempt timeout."""
        step = plan_for(clock, timeout=2000).first()
        assert step is not None
        assert step.wait_s == 0
        assert step.budget_s == pytest.approx(2.0)

    def test_budget_is_cut_to_the_deadline(self, clock: FakeClock) -> None:
        """When the deadline is nearer than the timeout, the budget is what is left."""
        step = plan_for(clock, timeout=5000, deadline=300).first()
        assert step is not None
        assert step.budget_s == pytest.approx(0.3)

    def test_no_step_past_the_deadline(self, clock: FakeClock) -> None:
        """No first step when the deadline already passed."""
        plan = plan_for(clock, deadline=100)
        clock.advance(0.2)
        assert plan.first() is None


class TestNextStep:
    @pytest.mark.parametrize(
        "error", [ExecutionError("x"), ToolTimeoutError("t")], ids=["execution", "timeout"])
    def test_retryable_errors_get_another_step(self, clock: FakeClock,
                                               error: ToolCallError) -> None:
        """TIMEOUT and a plain EXECUTION_ERROR are retried."""
        plan = plan_for(clock, retries=1, retryDelay=0)
        run_attempt(plan, clock, 0, 0.01, error)
        assert plan.next(error) is not None

    @pytest.mark.parametrize(
        "error", [ExecutionError("404", permanent=True), ParseError("p"), InvalidParamsError("i")],
        ids=["permanent", "parse", "invalid"],
    )
    def test_other_errors_stop(self, clock: FakeClock, error: ToolCallError) -> None:
        """Permanent, PARSE_ERROR and INVALID_PARAMS failures are not retried."""
        plan = plan_for(clock, retries=3, retryDelay=0)
        run_attempt(plan, clock, 0, 0.01, error)
        assert plan.next(error) is None
        assert "not retryable" in plan.stop_reason

    @pytest.mark.parametrize("retries", [0, 1, 2, 5])
    def test_retries_bound_the_attempts(self, clock: FakeClock, retries: int) -> None:
        """At most `retries` steps follow the first attempt."""
        plan = plan_for(clock, retries=retries, retryDelay=0, deadline=60_000)
        error = ExecutionError("x")
        step = plan.first()
        while step is not None:
            run_attempt(plan, clock, step.wait_s, 0.001, error)
            step = plan.next(error)
        assert len(plan.attempts) == retries + 1
        assert "no retries left" in plan.stop_reason

    @pytest.mark.parametrize(
        ("options", "rng", "waits"), [
            ({"retryDelay": 1000}, 0.0, [1.0, 1.0, 1.0]),
            ({"retryDelay": 500, "backoff": 2}, 0.0, [0.5, 1.0, 2.0]),
            ({"retryDelay": 100, "backoff": 10}, 0.0, [0.1, 1.0, 10.0]),
            ({"retryDelay": 100, "jitter": 1000}, 0.25, [0.35, 0.35, 0.35]),
            ({"retryDelay": 0, "jitter": 100}, 1.0, [0.1, 0.1, 0.1]),
        ],
        ids=["fixed", "backoff-2", "backoff-10", "jitter", "jitter-only"],
    )
    def test_waits(self, clock: FakeClock, options: dict[str, Any], rng: float,
                   waits: list[float]) -> None:
        """Waits are retryDelay × backoff^(n-1) plus jitter × a random fraction."""
        plan = plan_for(clock, rng=rng, retries=3, deadline=600_000, **options)
        error = ExecutionError("x")
        seen = []
        step = plan.first()
        while step is not None:
            run_attempt(plan, clock, step.wait_s, 0.0, error)
            step = plan.next(error)
            if step is not None:
                seen.append(step.wait_s)
        assert seen == pytest.approx(waits)

    def test_retry_after_is_respected(self, clock: FakeClock) -> None:
        """An error's retry_after_s lengthens a shorter wait, never shortens a longer one."""
        plan = plan_for(clock, retries=2, retryDelay=2000, deadline=60_000)
        short = ExecutionError("x", retry_after_s=0.5)
        long = ExecutionError("x", retry_after_s=7.0)
        run_attempt(plan, clock, 0, 0, short)
        assert plan.next(short).wait_s == pytest.approx(2.0)  # type: ignore[union-attr]
        assert plan.next(long).wait_s == pytest.approx(7.0)  # type: ignore[union-attr]


class TestDeadline:
    def test_wait_beyond_the_deadline_stops(self, clock: FakeClock) -> None:
        """A wait that leaves less than the minimum attempt time stops the plan."""
        plan = plan_for(clock, retries=3, retryDelay=1000, deadline=1000)
        error = ExecutionError("x")
        run_attempt(plan, clock, 0, 0.001, error)
        assert plan.next(error) is None
        assert "deadline" in plan.stop_reason

    def test_small_remainder_still_starts_an_attempt(self, clock: FakeClock) -> None:
        """A remainder of at least MIN_ATTEMPT_MS still starts an attempt with that budget."""
        plan = plan_for(clock, retries=3, retryDelay=0, deadline=1000)
        error = ExecutionError("x")
        run_attempt(plan, clock, 0, 1.0 - 2 * MIN_ATTEMPT_MS / 1000, error)
        step = plan.next(error)
        assert step is not None
        assert step.budget_s == pytest.approx(2 * MIN_ATTEMPT_MS / 1000)

    def test_remainder_below_the_minimum_stops(self, clock: FakeClock) -> None:
        """Less than MIN_ATTEMPT_MS left: no attempt starts."""
        plan = plan_for(clock, retries=3, retryDelay=0, deadline=1000)
        error = ExecutionError("x")
        run_attempt(plan, clock, 0, 1.0 - MIN_ATTEMPT_MS / 2000, error)
        assert plan.next(error) is None

    def test_short_timeout_needs_only_its_own_length(self, clock: FakeClock) -> None:
        """A 5 ms timeout needs only 5 ms of room, not MIN_ATTEMPT_MS."""
        plan = plan_for(clock, timeout=5, retries=3, retryDelay=0, deadline=1000)
        error = ToolTimeoutError("t")
        run_attempt(plan, clock, 0, 1.0 - 0.006, error)
        assert plan.next(error) is not None

    def test_deadline_property(self, clock: FakeClock) -> None:
        """The deadline is the arrival reading plus options.deadline."""
        assert plan_for(clock, deadline=2500).deadline == pytest.approx(clock.now + 2.5)


class TestFinalError:
    def test_no_attempt_is_a_timeout(self, clock: FakeClock) -> None:
        """A plan that started no attempt ends with TIMEOUT naming the deadline."""
        error = plan_for(clock, deadline=100).final_error("t")
        assert error.code is ErrorCode.TIMEOUT
        assert "100" in error.message

    @pytest.mark.parametrize(
        ("errors", "code"), [
            ([ExecutionError("a")], ErrorCode.EXECUTION_ERROR),
            ([ToolTimeoutError("a")], ErrorCode.TIMEOUT),
            ([ExecutionError("a"), ToolTimeoutError("b")], ErrorCode.TIMEOUT),
            ([ToolTimeoutError("a"), ExecutionError("b")], ErrorCode.RETRY_EXHAUSTED),
            ([ExecutionError("a"), ExecutionError("b"), ExecutionError("c")],
             ErrorCode.RETRY_EXHAUSTED),
            ([ExecutionError("a", permanent=True)], ErrorCode.EXECUTION_ERROR),
            ([ParseError("a")], ErrorCode.PARSE_ERROR),
        ],
        ids=["one-failure", "one-timeout", "last-timeout", "last-failure", "three-failures",
             "permanent", "parse"],
    )
    def test_rule_6(self, clock: FakeClock, errors: list[ToolCallError],
                    code: ErrorCode) -> None:
        """TIMEOUT if the last attempt timed out; RETRY_EXHAUSTED after several; else the error."""
        plan = plan_for(clock)
        for error in errors:
            run_attempt(plan, clock, 0, 0.01, error)
        assert plan.final_error("t").code is code

    def test_details_list_every_attempt(self, clock: FakeClock) -> None:
        """Details list each attempt's number, code, message, duration and wait."""
        plan = plan_for(clock)
        run_attempt(plan, clock, 0, 0.1, ExecutionError("first"))
        run_attempt(plan, clock, 0.5, 0.2, ToolTimeoutError("second"))
        plan.stop_reason = "done"
        details = plan.final_error("t").details
        assert details["attempts"] == [
            {"attempt": 1, "code": "EXECUTION_ERROR", "message": "first", "duration": 100.0,
             "wait": 0.0},
            {"attempt": 2, "code": "TIMEOUT", "message": "second", "duration": 200.0,
             "wait": 500.0},
        ]
        assert details["stopped"] == "done"

    def test_retry_exhausted_message_names_the_last_error(self, clock: FakeClock) -> None:
        """RETRY_EXHAUSTED's message counts the attempts and quotes the last error."""
        plan = plan_for(clock)
        run_attempt(plan, clock, 0, 0, ExecutionError("one"))
        run_attempt(plan, clock, 0, 0, ExecutionError("two"))
        error = plan.final_error("my.tool")
        assert "my.tool" in error.message
        assert "2 times" in error.message
        assert "two" in error.message

    def test_retryable_follows_the_last_error(self, clock: FakeClock) -> None:
        """The final error is retryable when the last attempt's error was."""
        plan = plan_for(clock)
        run_attempt(plan, clock, 0, 0, ExecutionError("x"))
        run_attempt(plan, clock, 0, 0, ExecutionError("y", permanent=True))
        assert plan.final_error("t").retryable is False


class TestTiming:
    def test_begin_and_end_record_times_in_ms(self, clock: FakeClock) -> None:
        """Attempts record start (since arrival), duration and wait in milliseconds."""
        plan = plan_for(clock)
        clock.advance(0.25)
        attempt = plan.begin(0.25)
        clock.advance(0.125)
        plan.end(attempt, None)
        assert (attempt.number, attempt.started_ms, attempt.duration_ms, attempt.wait_ms) == (
            1, pytest.approx(250.0), pytest.approx(125.0), pytest.approx(250.0))
        assert attempt.error is None
        assert plan.elapsed_ms() == pytest.approx(375.0)
