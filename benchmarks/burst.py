"""A burst of 1,000 concurrent `acall`s: do the trivial calls in it still finish in time?

600 calls of a trivial sync `add` among 400 that fail, sleep past their timeout or name no
tool, shuffled and gathered at once on the default event loop with `timeout=50, retries=0`.
The figure is how many `add` calls end TIMEOUT (target 0). Beside it, in the same loop and
interleaved round by round, the same burst written by hand: a jsonschema validation per call
(a validator compiled once per tool), then `asyncio.wait_for(loop.run_in_executor(None, add,
...), 0.05)`.

Run: python -m benchmarks.burst [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from toolcaller import ToolCaller, tool

SIZE, TRIVIAL = 1_000, 600
TIMEOUT_MS = 50
NAP_S = 0.2  # well past the timeout: these calls end TIMEOUT, as they should
EXPECTED = {"add": "ok", "boom": "EXECUTION_ERROR", "nap": "TIMEOUT",
            "no_such_tool": "TOOL_NOT_FOUND"}
SCHEMA = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
          "required": ["a", "b"], "additionalProperties": False}


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def boom(a: float, b: float) -> float:
    """Fail at once."""
    raise ValueError(f"boom: {a} + {b}")


async def nap(a: float, b: float) -> float:
    """Sleep past the timeout."""
    await asyncio.sleep(NAP_S)
    return a + b


def plan(seed: int = 7) -> list[str]:
    """The burst's tool names: 600 `add`, the rest split between the three others, shuffled."""
    rest = SIZE - TRIVIAL
    names = (["add"] * TRIVIAL + ["boom"] * (rest - 2 * (rest // 3)) + ["nap"] * (rest // 3)
             + ["no_such_tool"] * (rest // 3))
    random.Random(seed).shuffle(names)
    return names


async def via_acall(caller: ToolCaller, names: list[str]) -> tuple[Counter[tuple[str, str]], float]:
    """Gather one `acall` per name; count (name, outcome) pairs and time the burst (ms)."""
    started = time.perf_counter()
    envelopes = await asyncio.gather(*(
        caller.acall(name, {"a": i, "b": 1}, timeout=TIMEOUT_MS, retries=0)
        for i, name in enumerate(names)))
    wall = (time.perf_counter() - started) * 1000
    outcomes = Counter((name, "ok" if e.success else str(e.error.code))  # type: ignore[union-attr]
                       for name, e in zip(names, envelopes, strict=True))
    return outcomes, wall


async def by_hand(names: list[str]) -> tuple[Counter[tuple[str, str]], float]:
    """The same burst without toolcaller: validate, then `wait_for(run_in_executor(...))`."""
    import jsonschema

    tools: dict[str, Callable[..., Any]] = {"add": add, "boom": boom, "nap": nap}
    validators = {name: jsonschema.Draft202012Validator(SCHEMA) for name in tools}
    loop = asyncio.get_running_loop()

    async def one(name: str, params: dict[str, Any]) -> str:
        fn = tools.get(name)
        if fn is None:
            return "TOOL_NOT_FOUND"
        try:
            validators[name].validate(params)
        except jsonschema.ValidationError:
            return "INVALID_PARAMS"
        try:
            if asyncio.iscoroutinefunction(fn):
                await asyncio.wait_for(fn(**params), TIMEOUT_MS / 1000)
            else:
                await asyncio.wait_for(
                    loop.run_in_executor(None, functools.partial(fn, **params)), TIMEOUT_MS / 1000)
        except TimeoutError:
            return "TIMEOUT"
        except Exception:  # noqa: BLE001 - the tool failed: that is this call's outcome
            return "EXECUTION_ERROR"
        return "ok"

    started = time.perf_counter()
    outcomes = await asyncio.gather(*(one(name, {"a": i, "b": 1})
                                      for i, name in enumerate(names)))
    wall = (time.perf_counter() - started) * 1000
    return Counter(zip(names, outcomes, strict=True)), wall


def measure(rounds: int) -> dict[str, Any]:
    """Run both bursts `rounds` times each, alternating which goes first; return the tallies.

    Each side is warmed by one call of every tool first (schemas, threads), then the rounds run
    in one `asyncio.run` on the default loop and its default executor.
    """
    names = plan()
    caller = ToolCaller(tools=[tool(add), tool(boom), tool(nap)])

    async def main() -> dict[str, Any]:
        warm = list(EXPECTED)
        await via_acall(caller, warm)
        await by_hand(warm)
        tallies: dict[str, list[tuple[Counter[tuple[str, str]], float]]] = {
            "toolcaller": [], "by hand": []}
        for i in range(rounds):
            order = ["toolcaller", "by hand"] if i % 2 == 0 else ["by hand", "toolcaller"]
            for side in order:
                gc.collect()
                await asyncio.sleep(NAP_S)  # the last burst's stragglers are gone
                run = via_acall(caller, names) if side == "toolcaller" else by_hand(names)
                tallies[side].append(await run)
        return {side: summarise(runs) for side, runs in tallies.items()}

    try:
        return asyncio.run(main())
    finally:
        caller.close()


def summarise(runs: list[tuple[Counter[tuple[str, str]], float]]) -> dict[str, Any]:
    """Per side: `add` calls ending TIMEOUT per round, other unexpected outcomes, wall ms."""
    unexpected: Counter[str] = Counter()
    for outcomes, _ in runs:
        for (name, outcome), count in outcomes.items():
            if name != "add" and outcome != EXPECTED[name]:
                unexpected[f"{name} {outcome}"] += count
    return {
        "add_timeouts": [outcomes[("add", "TIMEOUT")] for outcomes, _ in runs],
        "add_failed": [sum(c for (n, o), c in outcomes.items() if n == "add" and o != "ok")
                       for outcomes, _ in runs],
        "unexpected": dict(unexpected),
        "wall_ms": [wall for _, wall in runs],
        "median_wall_ms": statistics.median(wall for _, wall in runs),
    }


def main() -> None:
    """Print both sides' tallies: `python -m benchmarks.burst --rounds 5`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    for side, tally in measure(args.rounds).items():
        print(f"{side}: {tally}")


if __name__ == "__main__":
    main()
