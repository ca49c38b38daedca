"""`toolcaller.core.policy`: retry decisions and the final error, without I/O (rules 4–6)."""

from __future__ import annotations

from typing import Any

import pytest

from toolcaller.core.policy import MIN_ATTEMPT_MS, RetryPolicy, final_error
from toolcaller.envelope import Attempt, Options
from toolcaller.errors import (
    ErrorCode,
    ExecutionError,
    InvalidParamsError,
    ParseError,
    ToolCallError,
    ToolTimeoutError,
)


def policy(rng: float = 0.0, **options: Any) -> RetryPolicy:
    return RetryPolicy(Options(**options), lambda: rng)


def attempts_of(errors: list[ToolCallError], duration: float = 10.0,
                wait: float = 0.0) -> list[Attempt]:
    return [Attempt(attempt=n, code=e.code, message=e.message, retryable=e.retryable,
                    duration=duration, wait=wait if n > 1 else 0.0)
            for n, e in enumerate(errors, start=1)]


class TestWhetherToRetry:
    @pytest.mark.parametrize(
        "error", [ExecutionError("x"), ToolTimeoutError("t")], ids=["execution", "timeout"])
    def test_retryable_errors_get_a_wait(self, error: ToolCallError) -> None:
        """TIMEOUT and a plain EXECUTION_ERROR are retried."""
        assert policy(retries=1, retryDelay=0).wait_s(1, error) == 0.0

    @pytest.mark.parametrize(
        "error", [ExecutionError("404", permanent=True), ParseError("p"), InvalidParamsError("i")],
        ids=["permanent", "parse", "invalid"],
    )
    def test_other_errors_stop(self, error: ToolCallError) -> None:
        """Permanent, PARSE_ERROR and INVALID_PARAMS failures are not retried, and say why."""
        assert "not retryable" in str(policy(retries=3).wait_s(1, error))

    @pytest.mark.parametrize("retries", [0, 1, 2, 5])
    def test_retries_bound_the_attempts(self, retries: int) -> None:
        """After 1 + retries attempts there is no further wait."""
        rules = policy(retries=retries, retryDelay=0)
        error = ExecutionError("x")
        made = 1
        while isinstance(rules.wait_s(made, error), float):
            made += 1
        assert made == retries + 1
        assert "no retries left" in str(rules.wait_s(made, error))


class TestWaits:
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
    def test_waits(self, options: dict[str, Any], rng: float, waits: list[float]) -> None:
        """Waits are retryDelay × backoff^(n-1) plus jitter × a random fraction."""
        rules = policy(rng=rng, retries=3, **options)
        seen = [rules.wait_s(made, ExecutionError("x")) for made in (1, 2, 3)]
        assert seen == pytest.approx(waits)

    def test_retry_after_is_respected(self) -> None:
        """An error's retry_after_s lengthens a shorter wait, never shortens a longer one."""
        rules = policy(retries=2, retryDelay=2000)
        assert rules.wait_s(1, ExecutionError("x", retry_after_s=0.5)) == pytest.approx(2.0)
        assert rules.wait_s(1, ExecutionError("x", retry_after_s=7.0)) == pytest.approx(7.0)


class TestRoomBeforeTheDeadline:
    def test_wait_beyond_the_deadline_does_not_fit(self) -> None:
        """A wait that leaves less than the minimum attempt time does not fit."""
        assert not policy(retryDelay=1000).fits(1.0, 0.999)

    def test_small_remainder_still_fits(self) -> None:
        """A remainder of at least MIN_ATTEMPT_MS still holds an attempt."""
        assert policy().fits(0.0, 2 * MIN_ATTEMPT_MS / 1000)

    def test_remainder_below_the_minimum_does_not_fit(self) -> None:
        """Less than MIN_ATTEMPT_MS left: no attempt starts."""
        assert not policy().fits(0.0, MIN_ATTEMPT_MS / 2000)

    def test_short_timeout_needs_only_its_own_length(self) -> None:
        """A 5 ms timeout needs only 5 ms of room, not MIN_ATTEMPT_MS."""
        assert policy(timeout=5).fits(0.0, 0.006)


class TestFinalError:
    def test_no_attempt_is_a_timeout(self) -> None:
        """A call that started no attempt ends with TIMEOUT naming the deadline."""
        error = final_error("t", Options(deadline=100), [], None, "")
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
    def test_rule_6(self, errors: list[ToolCallError], code: ErrorCode) -> None:
        """TIMEOUT if the last attempt timed out; RETRY_EXHAUSTED after several; else the error."""
        assert final_error("t", Options(), attempts_of(errors), errors[-1], "").code is code

    def test_details_list_every_attempt(self) -> None:
        """Details list each attempt as its trail entry: number, code, message, duration, wait."""
        errors: list[ToolCallError] = [ExecutionError("first"), ToolTimeoutError("second")]
        attempts = attempts_of(errors, duration=100.0, wait=500.0)
        details = final_error("t", Options(), attempts, errors[-1], "done").details
        assert details["attempts"] == [a.model_dump(mode="json") for a in attempts]
        assert [(a["code"], a["message"], a["wait"]) for a in details["attempts"]] == [
            ("EXECUTION_ERROR", "first", 0.0), ("TIMEOUT", "second", 500.0)]
        assert details["stopped"] == "done"

    def test_retry_exhausted_message_names_the_last_error(self) -> None:
        """RETRY_EXHAUSTED's message counts the attempts and quotes the last error."""
        errors: list[ToolCallError] = [ExecutionError("one"), ExecutionError("two")]
        error = final_error("my.tool", Options(), attempts_of(errors), errors[-1], "")
        assert "my.tool" in error.message
        assert "2 times" in error.message
        assert "two" in error.message

    def test_retryable_follows_the_last_error(self) -> None:
        """The final error is retryable when the last attempt's error was."""
        errors: list[ToolCallError] = [ExecutionError("x"), ExecutionError("y", permanent=True)]
        assert final_error("t", Options(), attempts_of(errors), errors[-1], "").retryable is False
