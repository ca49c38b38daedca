"""Per-call overhead of `ToolCaller.call`/`acall` over a bare function call, and CLI start-up.

Run: python -m benchmarks.overhead [--n 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time

from benchmarks._timing import asample_us, sample_us, summary, table
from toolcaller import ToolCaller, tool


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


async def aadd(a: float, b: float) -> float:
    """Add two numbers (async)."""
    return a + b


def measure(n: int) -> list[dict[str, object]]:
    caller = ToolCaller(tools=[tool(add), tool(aadd)])
    params = {"a": 1, "b": 2}
    rows = []
    bare_sync = summary(sample_us(lambda: add(1, 2), n))
    via_call = summary(sample_us(lambda: caller.call("add", params, timeout=1000, retries=1), n))
    rows.append(_row("sync tool, call()", bare_sync, via_call))

    async def async_rows() -> list[dict[str, object]]:
        bare = summary(await asample_us(lambda: aadd(1, 2), n))
        via = summary(await asample_us(
            lambda: caller.acall("aadd", params, timeout=1000, retries=1), n))
        via_sync = summary(await asample_us(
            lambda: caller.acall("add", params, timeout=1000, retries=1), n // 4))
        return [_row("async tool, acall()", bare, via),
                _row("sync tool, acall()", bare_sync, via_sync)]

    rows += asyncio.run(async_rows())
    via_handle = summary(sample_us(
        lambda: caller.handle({"toolName": "add", "params": params}), n // 4))
    rows.append(_row("sync tool, handle()", bare_sync, via_handle))
    caller.close()
    return rows


def _row(label: str, bare: dict[str, float], via: dict[str, float]) -> dict[str, object]:
    return {
        "case": label,
        "bare median µs": bare["median"],
        "median µs": via["median"],
        "p99 µs": via["p99"],
        "overhead median µs": via["median"] - bare["median"],
    }


STARTUP_COMMANDS = {
    "discover": ["-m", "toolcaller", "discover", "--names"],
    "import": ["-c", "import toolcaller"],
    "import ToolCaller": ["-c", "from toolcaller import ToolCaller"],
    "bare python": ["-c", "pass"],
}


def cli_startup(runs: int = 10) -> dict[str, list[float]]:
    """Wall ms of each start-up command, `runs` times each, the commands taking turns.

    `discover` is `toolcaller discover --names` on the demo registry, start-up included.
    """
    times: dict[str, list[float]] = {name: [] for name in STARTUP_COMMANDS}
    for _ in range(runs):
        for name, args in STARTUP_COMMANDS.items():
            t = time.perf_counter()
            subprocess.run([sys.executable, *args], check=True, capture_output=True)
            times[name].append((time.perf_counter() - t) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    rows = measure(args.n)
    print(table(rows, list(rows[0])))
    startup = cli_startup()
    print()
    print("start-up, ms (min / median): " + ", ".join(
        f"{k} {min(v):.0f} / {sorted(v)[len(v) // 2]:.0f}" for k, v in startup.items()))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"calls": rows, "cli": startup}, handle, indent=2)


if __name__ == "__main__":
    main()
