"""Retry policy without I/O (SPEC rules 4–6): retry or not, after what wait; the final error.

The attempt loop (`toolcaller.core.attempt`) only sleeps and runs attempts; every decision is
made here from the options, the attempts so far and the time left, so tests need no real time.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolcaller.envelope import Attempt, Options
from toolcaller.errors import (
    ErrorCode,
    RetryExhaustedError,
    ToolCallError,
    ToolTimeoutError,
)

__all__ = ["MIN_ATTEMPT_MS", "RetryPolicy", "final_error"]

MIN_ATTEMPT_MS = 10.0
"""An attempt only starts if at least min(timeout, this) milliseconds of the deadline remain."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """The retry rules of one call's options."""

    options: Options
    rng: Callable[[], float] = random.random

    def wait_s(self, made: int, error: ToolCallError) -> float | str:
        """Return the wait before attempt `made + 1`, or why there is none (a reason string)."""
        opts = self.options
        if not error.retryable:
            return "the failure is not retryable"
        if made > opts.retries:
            return f"no retries left (retries={opts.retries})"
        wait_ms = opts.retry_delay * opts.backoff ** (made - 1)
        if opts.jitter:
            wait_ms += opts.jitter * self.rng()
        retry_after = getattr(error, "retry_after_s", None)
        if isinstance(retry_after, int | float) and retry_after > 0:
            wait_ms = max(wait_ms, retry_after * 1000.0)
        return wait_ms / 1000.0

    def fits(self, wait_s: float, remaining_s: float) -> bool:
        """Say whether an attempt after `wait_s` still has room before the deadline."""
        timeout_s = self.options.timeout / 1000.0
        return remaining_s - wait_s >= min(timeout_s, MIN_ATTEMPT_MS / 1000.0)


def final_error(tool_name: str, options: Options, attempts: Sequence[Attempt],
                last: ToolCallError | None, stopped: str) -> ToolCallError:
    """Return the call's error once every attempt failed (SPEC rule 6)."""
    if last is None or not attempts:
        return ToolTimeoutError(
            f"tool {tool_name!r} did not start: the deadline of {options.deadline:g} ms left "
            "no time for an attempt")
    details = _details(attempts, stopped, last)
    final: ToolCallError
    if last.code is ErrorCode.TIMEOUT:
        tries = "1 attempt" if len(attempts) == 1 else f"{len(attempts)} attempts"
        final = ToolTimeoutError(f"tool {tool_name!r} timed out ({tries}): {last.message}",
                                 details=details)
    elif len(attempts) > 1:
        final = RetryExhaustedError(
            f"tool {tool_name!r} failed {len(attempts)} times; last error: {last.message}",
            details=details)
    else:
        final = last
    final.retryable = last.retryable
    return final


def _details(attempts: Sequence[Attempt], stopped: str, last: ToolCallError) -> dict[str, Any]:
    return {
        "attempts": [a.model_dump(mode="json") for a in attempts],
        "stopped": stopped,
        "last": last.details,
    }
