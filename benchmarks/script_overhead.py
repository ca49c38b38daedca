"""Overhead of ScriptAdapter.invoke, and of ToolCaller.call, over a bare subprocess.run.

The adapter alone is `toolcaller.testing.invoke(ScriptAdapter(), tool, params)` (one attempt
as the engine runs it), awaited on an event loop of this thread. Runs the same command the
three ways, interleaved, and prints medians in ms:

    /work/venv/bin/python benchmarks/script_overhead.py [-n 300] [--check]

Both run the same argv with the same JSON on stdin, and the bare way captures stdout and
stderr too. `--check` exits 1 when the median overhead of `ToolCaller.call` (or of the adapter
alone) exceeds 3 ms, the budget.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from toolcaller.adapters.script import ScriptAdapter
from toolcaller.core.tool import Tool
from toolcaller.testing import invoke

BUDGET_MS = 3.0
PARAMS = {"text": "hello world", "n": 3}
COMMANDS = {
    "cat": ["cat"],
    "python": [sys.executable, "-S", "-c", "import sys; sys.stdout.write(sys.stdin.read())"],
}


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def engine_runner(tool: Tool) -> tuple[Callable[[], object] | None, str]:
    try:
        from toolcaller import ToolCaller

        caller = ToolCaller(tools=[tool])
        envelope = caller.call(tool.name, PARAMS)
        if not envelope.success:
            return None, f"call failed: {envelope.error}"
    except Exception as exc:  # noqa: BLE001 - report why the engine could not be measured
        return None, f"{type(exc).__name__}: {exc}"
    return (lambda: caller.call(tool.name, PARAMS)), ""


def bench(label: str, command: list[str], n: int, loop: asyncio.Runner) -> float:
    tool = Tool(
        name=f"bench.{label}",
        description="echo",
        params_schema={"type": "object"},
        kind="script",
        target={"command": command},
    )
    adapter = ScriptAdapter()
    stdin = json.dumps(PARAMS).encode()
    runners: dict[str, Callable[[], object]] = {
        "subprocess.run": lambda: subprocess.run(command, input=stdin, capture_output=True),
        "ScriptAdapter.invoke": lambda: loop.run(invoke(adapter, tool, PARAMS, timeout=10_000)),
    }
    engine, why = engine_runner(tool)
    if engine is None:
        raise SystemExit(f"ToolCaller.call cannot be measured: {why}")
    runners["ToolCaller.call"] = engine
    for run in runners.values():  # warm up
        for _ in range(5):
            run()
    samples: dict[str, list[float]] = {name: [] for name in runners}
    order = list(runners)
    for _ in range(n):
        random.shuffle(order)  # no way always follows another (a dying child costs the next)
        for name in order:
            samples[name].append(timed(runners[name]))
    base = statistics.median(samples["subprocess.run"])
    print(f"\n{label}: {' '.join(command)}  ({n} runs each, shuffled)")
    for name, values in samples.items():
        median = statistics.median(values)
        p90 = statistics.quantiles(values, n=10)[-1]
        extra = median - base
        print(f"  {name:<18} median {median:7.3f} ms  p90 {p90:7.3f} ms  overhead {extra:+.3f} ms")
    return max(statistics.median(samples[way]) - base for way in runners if way != "subprocess.run")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=300, help="runs per way and command")
    parser.add_argument("--check", action="store_true", help=f"fail over {BUDGET_MS} ms")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    with asyncio.Runner() as loop:
        worst = max(bench(label, command, args.n, loop) for label, command in COMMANDS.items())
    print(f"\nworst overhead (adapter or engine) {worst:+.3f} ms (budget {BUDGET_MS} ms)")
    return 1 if args.check and worst > BUDGET_MS else 0


if __name__ == "__main__":
    sys.exit(main())
