"""Shared timing helpers for the benchmark scripts."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any


def sample_us(fn: Callable[[], Any], n: int, warmup: int = 200) -> list[float]:
    """Run `fn` n times after a warm-up; return each run's microseconds."""
    for _ in range(warmup):
        fn()
    out = []
    clock = time.perf_counter_ns
    for _ in range(n):
        t = clock()
        fn()
        out.append((clock() - t) / 1000.0)
    return out


async def asample_us(fn: Callable[[], Awaitable[Any]], n: int, warmup: int = 200) -> list[float]:
    """Async twin of `sample_us`."""
    for _ in range(warmup):
        await fn()
    out = []
    clock = time.perf_counter_ns
    for _ in range(n):
        t = clock()
        await fn()
        out.append((clock() - t) / 1000.0)
    return out


def summary(samples: list[float]) -> dict[str, float]:
    """Median and p99 of samples."""
    ordered = sorted(samples)
    return {"median": statistics.median(ordered), "p99": ordered[int(len(ordered) * 0.99) - 1]}


def run(coro: Awaitable[Any]) -> Any:
    """Run a coroutine on a fresh loop."""
    return asyncio.run(coro)  # type: ignore[arg-type]


def table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """Format rows as a plain text table."""
    widths = {c: max(len(c), *(len(_fmt(r.get(c))) for r in rows)) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns)]
    lines.append("  ".join("-" * widths[c] for c in columns))
    lines += ["  ".join(_fmt(r.get(c)).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}"
    return "" if value is None else str(value)
