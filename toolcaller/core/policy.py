"""Retry policy as a plan without I/O: whether to try again, after what wait, with what budget.

The sync and async drivers in `toolcaller.caller` only sleep and run attempts; every decision
(SPEC rules 4–6) is made here, so both drivers behave the same and tests need no real time.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolcaller.envelope import Options
from toolcaller.errors import (
    ErrorCode,
    RetryExhaustedError,
    ToolCallError,
    ToolTimeoutError,
)

__all__ = ["MIN_ATTEMPT_MS", "Attempt", "CallPlan", "Step"]

MIN_ATTEMPT_MS = 10.0
"""An attempt only starts if at least min(timeout, this) milliseconds of the deadline remain."""


@dataclass(slots=True)
class Step:
    """The next attempt: wait this long, then run with this budget (both in seconds)."""

    wait_s: float
    budget_s: float


@dataclass(slots=True)
class Attempt:
    """What happened in one attempt (times in milliseconds)."""

    number: int
    wait_ms: float
    started_ms: float
    duration_ms: float = 0.0
    error: ToolCallError | None = None


@dataclass(slots=True)
class CallPlan:
    """Plans the attempts of one call under its options and deadline."""

    options: Options
    started: float
    """Clock reading (seconds) when the request arrived."""
    clock: Callable[[], float]
    rng: Callable[[], float] = random.random
    attempts: list[Attempt] = field(default_factory=list)
    stop_reason: str = ""

    @property
    def deadline(self) -> float:
        """Clock reading at which the call must have answered."""
        return self.started + self.options.deadline / 1000.0

    def first(self) -> Step | None:
        """Return the first attempt's step, or `None` when the deadline already passed."""
        return self.fit(0.0)

    def next(self, error: ToolCallError) -> Step | None:
        """Return the step after a failed attempt, or `None` to stop (see `stop_reason`)."""
        made = len(self.attempts)
        if not error.retryable:
            self.stop_reason = "the failure is not retryable"
            return None
        if made > self.options.retries:
            self.stop_reason = f"no retries left (retries={self.options.retries})"
            return None
        wait_s = self._wait_s(made, error)
        step = self.fit(wait_s)
        if step is None:
            self.stop_reason = "the deadline leaves no time for another attempt"
        return step

    def _wait_s(self, made: int, error: ToolCallError) -> float:
        opts = self.options
        wait_ms = opts.retry_delay * opts.backoff ** (made - 1)
        if opts.jitter:
            wait_ms += opts.jitter * self.rng()
        retry_after = getattr(error, "retry_after_s", None)
        if isinstance(retry_after, int | float) and retry_after > 0:
            wait_ms = max(wait_ms, retry_after * 1000.0)
        return wait_ms / 1000.0

    def fit(self, wait_s: float) -> Step | None:
        """Return a step after `wait_s` if the deadline still leaves room for an attempt."""
        timeout_s = self.options.timeout / 1000.0
        remaining_s = self.deadline - self.clock() - wait_s
        if remaining_s < min(timeout_s, MIN_ATTEMPT_MS / 1000.0):
            return None
        return Step(wait_s, min(timeout_s, remaining_s))

    def begin(self, wait_s: float) -> Attempt:
        """Record that an attempt starts now, after a wait."""
        attempt = Attempt(len(self.attempts) + 1, wait_s * 1000.0, self.elapsed_ms())
        self.attempts.append(attempt)
        return attempt

    def end(self, attempt: Attempt, error: ToolCallError | None) -> None:
        """Record how an attempt ended."""
        attempt.duration_ms = self.elapsed_ms() - attempt.started_ms
        attempt.error = error

    def elapsed_ms(self) -> float:
        """Milliseconds since the request arrived."""
        return (self.clock() - self.started) * 1000.0

    def final_error(self, tool_name: str) -> ToolCallError:
        """Return the call's error once every attempt failed (SPEC rule 6)."""
        if not self.attempts:
            return ToolTimeoutError(
                f"tool {tool_name!r} did not start: the deadline of "
                f"{self.options.deadline:g} ms left no time for an attempt"
            )
        last = self.attempts[-1]
        error = last.error
        assert error is not None
        if error.code is ErrorCode.TIMEOUT:
            final: ToolCallError = ToolTimeoutError(
                self._timeout_message(tool_name, error), details=self._details(error)
            )
        elif len(self.attempts) > 1:
            final = RetryExhaustedError(
                f"tool {tool_name!r} failed {len(self.attempts)} times; last error: "
                f"{error.message}",
                details=self._details(error),
            )
        else:
            final = error
        final.retryable = error.retryable
        return final

    def _timeout_message(self, tool_name: str, error: ToolCallError) -> str:
        count = len(self.attempts)
        tries = "1 attempt" if count == 1 else f"{count} attempts"
        return f"tool {tool_name!r} timed out ({tries}): {error.message}"

    def _details(self, last: ToolCallError) -> dict[str, Any]:
        return {
            "attempts": [
                {
                    "attempt": a.number,
                    "code": a.error.code.value if a.error else None,
                    "message": a.error.message if a.error else None,
                    "duration": round(a.duration_ms, 3),
                    "wait": round(a.wait_ms, 3),
                }
                for a in self.attempts
            ],
            "stopped": self.stop_reason,
            "last": last.details,
        }
