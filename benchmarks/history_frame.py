"""Time `History.frame()` and `attempts_frame()` over 100,000 calls, and a HistoryView refresh.

Run: `python benchmarks/history_frame.py [--calls N] [--repeat R]`; prints median ms (target:
`frame()` ≤ 500 ms for 100,000 calls).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

TARGET_FRAME_MS = 500.0
TOOLS = ["math.add", "text.echo", "demo.fail", "demo.slow", "data.table", "demo.flaky"]
CODES = ["EXECUTION_ERROR", "TIMEOUT", "PARSE_ERROR"]


def make_history(count: int, seed: int = 3) -> Any:
    """Return a `History` holding `count` calls of 1 to 3 attempts each (a quarter failed)."""
    from toolcaller import History, Options
    from toolcaller.core.history import CallRecord
    from toolcaller.envelope import Attempt

    rng = random.Random(seed)
    history = History(max_calls=count)
    options = Options.model_validate({})
    start = time.time() - count
    for i in range(count):
        failed = rng.random() < 0.25
        attempts, clock, tries = [], 0.1, rng.randint(1, 3)
        for n in range(1, tries + 1):
            wait = 0.0 if n == 1 else 10.0
            duration = rng.uniform(0.1, 50.0)
            clock += wait
            code = rng.choice(CODES) if failed or n < tries else None  # retries mend a success
            attempts.append(Attempt(attempt=n, started=clock, duration=duration, wait=wait,
                                    code=code, message="boom" if code else None,
                                    retryable=bool(code)))
            clock += duration
        history.add(CallRecord(
            call_id=f"bench-{i}", tool_name=rng.choice(TOOLS), arrived=start + i,
            duration=clock, success=not failed, code=rng.choice(CODES) if failed else None,
            message="it failed" if failed else None, params={"a": i, "b": "x"},
            options=options, attempts=attempts))
    return history


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    """Run `fn` once to warm up, then `repeat` times; return the median in ms."""
    fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    start = time.perf_counter()
    history = make_history(args.calls)
    attempts = sum(len(r.attempts) for r in history.records())
    print(f"History of {len(history):,} calls, {attempts:,} attempts "
          f"(built in {time.perf_counter() - start:.1f} s)")
    frame_ms = median_ms(history.frame, args.repeat)
    verdict = "ok" if frame_ms <= TARGET_FRAME_MS else "SLOW"
    print(f"  frame()          median {frame_ms:8.1f} ms  (target ≤ {TARGET_FRAME_MS:.0f} ms: "
          f"{verdict})")
    print(f"  attempts_frame() median {median_ms(history.attempts_frame, args.repeat):8.1f} ms")
    from toolcaller.widgets import HistoryView

    view = HistoryView(history, refresh_interval=0)
    print(f"  HistoryView.refresh() (200 rows shown) median "
          f"{median_ms(view.refresh, args.repeat):8.1f} ms")
    view.failures_only.value = True
    print(f"  ... with failures only median {median_ms(view.refresh, args.repeat):8.1f} ms")
    view.close()


if __name__ == "__main__":
    main()
