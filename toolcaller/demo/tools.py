"""Implementations of the demo tools (see `registry.json` beside this file)."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Any

from toolcaller.core.results import TextOutput
from toolcaller.errors import ExecutionError

_flaky_counts: dict[str, int] = {}
_flaky_lock = threading.Lock()


def add(a: float, b: float) -> dict[str, float]:
    """Add two numbers."""
    return {"sum": a + b}


def divide(a: float, b: float) -> dict[str, float]:
    """Divide a by b (b = 0 raises ZeroDivisionError: EXECUTION_ERROR)."""
    return {"quotient": a / b}


def echo(text: str, upper: bool = False, repeat: int = 1) -> dict[str, Any]:
    """Echo text back."""
    out = " ".join([text.upper() if upper else text] * repeat)
    return {"text": out, "length": len(out)}


def word_count(text: str) -> dict[str, int]:
    """Count words, lines and characters."""
    return {"words": len(text.split()), "lines": len(text.splitlines()), "chars": len(text)}


async def slow(seconds: float = 10.0) -> dict[str, float]:
    """Sleep asynchronously (cancelled on timeout)."""
    await asyncio.sleep(seconds)
    return {"slept": seconds}


def slow_sync(seconds: float = 10.0) -> dict[str, float]:
    """Sleep in a worker thread (a thread cannot be stopped: see isolation 'process')."""
    time.sleep(seconds)
    return {"slept": seconds}


def flaky(failures: int = 2, key: str = "default", failure_rate: float = 0.0) -> dict[str, Any]:
    """Fail the first `failures` calls for `key` (or randomly at `failure_rate`), then succeed."""
    if failure_rate > 0 and random.random() < failure_rate:
        raise ExecutionError(f"transient failure (rate {failure_rate})")
    with _flaky_lock:
        seen = _flaky_counts.get(key, 0)
        _flaky_counts[key] = seen + 1
    if seen < failures:
        raise ConnectionError(f"transient failure {seen + 1} of {failures} for key {key!r}")
    return {"ok": True, "attempt": seen + 1}


def reset_flaky(key: str | None = None) -> dict[str, bool]:
    """Forget the flaky tool's counters."""
    with _flaky_lock:
        if key is None:
            _flaky_counts.clear()
        else:
            _flaky_counts.pop(key, None)
    return {"reset": True}


def fail(message: str = "this tool always fails") -> None:
    """Always raise RuntimeError."""
    raise RuntimeError(message)


def not_found(item: str = "x") -> None:
    """Fail permanently, like an HTTP 404: never retried."""
    raise ExecutionError(f"item {item!r} does not exist", permanent=True)


def not_json() -> TextOutput:
    """Promise JSON and produce HTML (PARSE_ERROR with format json; returned as is with raw).

    Like a script's stdout, the output promises JSON: text by nature (an HTTP `text/html`
    body) would be a string and a success (SPEC rule 7).
    """
    return TextOutput("<html><body>not JSON</body></html>", media_type="text/html",
                      promises_json=True)


def nan() -> dict[str, float]:
    """Return NaN, which strict JSON cannot hold (PARSE_ERROR)."""
    return {"value": float("nan")}


def login(username: str, password: str) -> dict[str, str]:
    """Pretend to log in; a wrong password raises an error that mentions it (masked)."""
    if password != "open sesame":
        raise PermissionError(f"login failed for {username} with password {password}")
    return {"user": username, "session": "demo-session"}


def table(rows: int = 5) -> list[dict[str, Any]]:
    """Return a list of records (shown as a DataFrame in notebooks)."""
    return [{"id": i, "square": i * i, "even": i % 2 == 0} for i in range(rows)]


def hang() -> None:
    """Block forever (give it isolation 'process' so that a timeout really stops it)."""
    threading.Event().wait()


def showcase(**params: Any) -> dict[str, Any]:
    """Return the params it got (its schema shows every kind of form field)."""
    return {"received": params}
