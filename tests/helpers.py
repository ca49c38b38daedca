"""Shared test helpers: a fake clock, an envelope shape check, small tool factories."""

from __future__ import annotations

import asyncio
import json
import re
import typing
from collections.abc import Callable
from typing import Any

from toolcaller import ExecutionError, Tool, ToolCaller, testing
from toolcaller.envelope import Attempt

CODES = frozenset(
    {"TIMEOUT", "RETRY_EXHAUSTED", "TOOL_NOT_FOUND", "INVALID_PARAMS", "EXECUTION_ERROR",
     "PARSE_ERROR"}
)
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")
LATE_MS = 250.0
"""How far past its deadline a call may answer in a test that uses real time. The engine is
late by about a millisecond (`python -m benchmarks --only timeouts` measures it); a loaded
2-core machine, or a test suite run as a background job, can add a few hundred. Tests that
check the rules to the millisecond use the fake clock instead (tests/core/test_attempt.py)."""


class FakeClock(testing.FakeClock):
    """The public fake clock, with the names these tests read: `sleeps`, `clock()`."""

    @property
    def sleeps(self) -> list[float]:
        """The waits slept, in seconds."""
        return self.slept

    def clock(self) -> float:
        """Return the current reading in seconds."""
        return self.now()


class JumpyWall(FakeClock):
    """A fake clock whose wall-clock reading is `wall[0]`, whatever its monotonic time does."""

    def __init__(self, wall: list[float]) -> None:
        super().__init__()
        self._walls = wall

    def wall(self) -> float:
        """Return `wall[0]`."""
        return self._walls[0]


def attempt_of(attempt: int, started: float, duration: float, wait: float,
               code: str | None = None, message: str | None = None,
               retryable: bool | None = None) -> Attempt:
    """An `Attempt` record from positional values (as the history tests write them)."""
    return Attempt(attempt=attempt, started=started, duration=duration, wait=wait,
                   code=code, message=message, retryable=retryable)


def fake_caller(tools: list[Any], clock: FakeClock, **kwargs: Any) -> ToolCaller:
    """Build a caller whose clock (readings, sleeps, timers) is the fake clock."""
    return ToolCaller(tools=tools, clock=clock, **kwargs)


def make_tool(fn: Callable[..., Any], name: str, schema: dict[str, Any] | None = None,
              **settings: Any) -> Tool:
    """Wrap a callable as a python `Tool` with an open params schema (or the one given)."""
    return Tool(name=name, description=f"test tool {name}",
                params_schema=schema if schema is not None else {"type": "object"},
                kind="python", target=fn, **settings)


def always_failing(counter: list[int],
                   error: BaseException | None = None) -> Callable[[], None]:
    """A sync tool that appends to `counter` and raises `error` (a RuntimeError by default)."""
    def fails() -> None:
        counter.append(1)
        raise error if error is not None else RuntimeError(f"failure {len(counter)}")
    return fails


def sequence_tool(*steps: str, clock: FakeClock | None = None,
                  ) -> tuple[Callable[..., Any], list[int]]:
    """An async tool whose n-th call does steps[n] ('fail', 'hang' or 'permanent'); its calls.

    With a fake clock, 'hang' moves it by 0.1 s (past the tests' 30 ms timeouts), then waits
    until cancelled.
    """
    calls: list[int] = []

    async def run() -> None:
        calls.append(1)
        step = steps[min(len(calls), len(steps)) - 1]
        if step == "hang":
            if clock is None:
                await asyncio.sleep(10)
            else:
                clock.advance(0.1)
                await asyncio.Event().wait()
        raise ExecutionError(f"{step} {len(calls)}", permanent=step == "permanent")

    return run, calls


def wait_until(predicate: Callable[[], bool], timeout_s: float = 2.0) -> bool:
    """Poll `predicate` every 5 ms until it holds or `timeout_s` passes; return whether it held."""
    import time

    end = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


def resolved(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Replace a function's postponed (string) annotations by the objects they name.

    Test modules use `from __future__ import annotations`; this lets a test of another
    behaviour not depend on whether `@tool` resolves string annotations itself (tested apart).
    """
    fn.__annotations__ = typing.get_type_hints(fn)
    return fn


def check_envelope(envelope: Any) -> dict[str, Any]:
    """Assert that a value is a well-formed envelope dict (either kind); return it."""
    assert isinstance(envelope, dict), f"not a dict: {envelope!r}"
    json.dumps(envelope, allow_nan=False)  # strict JSON
    assert isinstance(envelope.get("success"), bool)
    metadata = envelope["metadata"]
    assert isinstance(metadata, dict)
    assert isinstance(metadata["duration"], float | int)
    assert not isinstance(metadata["duration"], bool)
    assert metadata["duration"] >= 0
    if envelope["success"]:
        assert set(envelope) == {"success", "result", "metadata"}, sorted(envelope)
    else:
        assert set(envelope) == {"success", "result", "error", "metadata"}, sorted(envelope)
        assert envelope["result"] is None
        error = envelope["error"]
        assert {"code", "message", "details"} <= set(error)
        assert error["code"] in CODES
        assert isinstance(error["message"], str)
        assert error["message"].strip()
        assert isinstance(error.get("retryable", False), bool)
    if "total" in metadata:  # discovery
        assert isinstance(metadata["total"], int)
        assert isinstance(envelope["result"]["tools"], list)
        assert metadata["total"] == len(envelope["result"]["tools"])
    else:
        assert {"duration", "attempts", "toolName", "timestamp"} <= set(metadata)
        assert isinstance(metadata["attempts"], int)
        assert not isinstance(metadata["attempts"], bool)
        assert metadata["attempts"] >= 0
        assert metadata["toolName"] is None or isinstance(metadata["toolName"], str)
        assert TIMESTAMP.match(metadata["timestamp"]), metadata["timestamp"]
    for key in (*envelope, *metadata, *(envelope.get("error") or {})):
        assert CAMEL.match(key), f"key {key!r} is not camelCase"
    return envelope


def code_of(envelope: dict[str, Any]) -> str | None:
    """Return the envelope's error code, or None on success."""
    return None if envelope["success"] else envelope["error"]["code"]


def all_strings(value: Any) -> str:
    """Return every string and key inside a JSON-like value, joined (to search for leaks)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(f"{k}\n{all_strings(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return "\n".join(all_strings(v) for v in value)
    return repr(value)
