"""Success rate (SPEC rule 10): a tool failing transiently 10% of the time, 10,000 calls.

With `retries: 3` at least 99.9% of calls succeed (each call fails only if four attempts in a
row fail: 1 in 10,000); with `retries: 0` every failure is an EXECUTION_ERROR after one
attempt, about 1,000 of them. The tool draws from a seeded generator, so runs repeat.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from typing import Any

import pytest

from toolcaller import Tool, ToolCaller

CALLS = 10_000
RATE = 0.1


def flaky_tool(seed: int) -> tuple[Tool, list[int]]:
    """A sync tool failing with probability RATE (a RuntimeError: transient, retried)."""
    rng = random.Random(seed)
    lock = threading.Lock()
    attempts = [0]

    def flaky() -> dict[str, bool]:
        with lock:
            attempts[0] += 1
            failed = rng.random() < RATE
        if failed:
            raise RuntimeError("transient failure")
        return {"ok": True}

    tool = Tool(name="flaky", description="fails 10% of the time",
                params_schema={"type": "object"}, kind="python", target=flaky)
    return tool, attempts


def run_calls(retries: int, seed: int) -> tuple[Counter[str], Counter[int], int, float]:
    tool, attempts = flaky_tool(seed)
    caller = ToolCaller(tools=[tool], max_history=CALLS)
    codes: Counter[str] = Counter()
    by_attempts: Counter[int] = Counter()
    began = time.perf_counter()
    try:
        for _ in range(CALLS):
            envelope = caller.call("flaky", retries=retries, retryDelay=0)
            codes[envelope.code.value if envelope.code else "OK"] += 1
            if envelope.code:
                by_attempts[envelope.metadata.attempts] += 1
        seconds = time.perf_counter() - began
        assert caller.history.total == CALLS
    finally:
        caller.close()
    return codes, by_attempts, attempts[0], seconds


@pytest.mark.parametrize("seed", [1, 2])
def test_retries_3_succeed_at_least_999_in_1000(seed: int) -> None:
    """10,000 calls with retries 3: ≥ 99.9% succeed; the rest exhausted four attempts."""
    codes, failures, attempts, seconds = run_calls(retries=3, seed=seed)
    print(f"retries=3 seed={seed}: {dict(codes)} in {seconds:.2f} s, {attempts} attempts")
    assert codes["OK"] / CALLS >= 0.999
    assert set(codes) <= {"OK", "RETRY_EXHAUSTED"}
    assert set(failures) <= {4}
    # about 1.111 attempts per call (1 / 0.9), never more than 4
    assert CALLS * 1.09 < attempts < CALLS * 1.13


def test_retries_0_report_each_failure_once() -> None:
    """10,000 calls with retries 0: failures are EXECUTION_ERROR with attempts 1 (≈ 10%)."""
    codes, failures, attempts, seconds = run_calls(retries=0, seed=3)
    print(f"retries=0: {dict(codes)} in {seconds:.2f} s")
    assert set(codes) == {"OK", "EXECUTION_ERROR"}
    assert set(failures) == {1}
    assert attempts == CALLS
    assert 850 <= codes["EXECUTION_ERROR"] <= 1150  # 1,000 ± 5 standard deviations


def test_the_failure_keeps_its_message() -> None:
    """A transient failure's envelope says what the tool raised."""
    tool, _ = flaky_tool(seed=0)
    caller = ToolCaller(tools=[tool])
    try:
        seen: dict[str, Any] = {}
        for _ in range(200):
            envelope = caller.call("flaky", retries=0).to_dict()
            if not envelope["success"]:
                seen = envelope
                break
        assert seen["error"]["message"] == "RuntimeError: transient failure"
        assert seen["error"]["retryable"] is True
    finally:
        caller.close()
