"""Many calls at once (`amap`, `map`, a raw gather of `acall`) and timeout precision per kind.

Concurrency: N calls of a 50 ms async tool at L in flight, each way timed in the same process
as a bare `asyncio.gather` of the tool under the same semaphore, in rounds with the order
rotated; every row is the median of its rounds and its ratio is to the bare gather's median.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.suite_kit import (
    http_registry,
    http_server,
    mcp_registry,
    p50_p99,
    row,
    scratch,
    script_registry,
    skipped,
)
from toolcaller import ToolCaller, tool
from toolcaller.batch import amap_calls, map_calls

TOOL_S = 0.05


async def sleep50() -> dict[str, bool]:
    """Sleep 50 ms."""
    await asyncio.sleep(TOOL_S)
    return {"ok": True}


Way = Callable[[ToolCaller, int, int], tuple[float, int]]  # (caller, n, limit) -> (s, failed)
AMAP_BUDGET = 1.05  # the target for amap(), over the bare gather
OTHER_BUDGET = 1.1


def concurrency(quick: bool) -> list[dict[str, Any]]:
    """N × 50 ms async calls at L in flight: amap, map, raw gather of acall, vs a bare gather."""
    import pandas  # noqa: F401 - the frame needs it: import it before timing, not during

    cases = [(400, 40), (1_000, 100)] if quick else [(2_000, 200), (10_000, 500)]
    rounds = 1 if quick else 3
    ways: dict[str, Way] = {"bare gather of the tool": _via_bare, "amap()": _via_amap,
                            "gather of acall()": _via_gather, "map() (sync)": _via_map}
    rows = []
    for n, limit in cases:
        ideal = n / limit * TOOL_S
        walls: dict[str, list[float]] = {name: [] for name in ways}
        failed = dict.fromkeys(ways, 0)
        with ToolCaller(tools=[tool(sleep50)], max_history=n) as caller:
            for way in ways.values():
                way(caller, limit, limit)  # warm up: one round of `limit` calls
            order = list(ways)
            for turn in range(rounds):
                for name in order[turn % len(order):] + order[:turn % len(order)]:
                    caller.history.clear()
                    gc.collect()  # each run starts owing the collector nothing
                    wall, bad = ways[name](caller, n, limit)
                    walls[name].append(wall)
                    failed[name] += bad
        bare = statistics.median(walls["bare gather of the tool"])
        label = f"{n:,} × 50 ms at {limit}"
        for name in ways:
            note = f"median of {rounds}; the ideal n / limit × 50 ms is {ideal:.2f} s"
            if failed[name]:
                note += f"; {failed[name]} calls failed"
            if name.startswith("bare"):
                rows.append(row("concurrency", f"{label}: {name}", bare, "s", reference=ideal,
                                note=f"median of {rounds}; reference: the ideal n / limit × 50 ms"))
                continue
            budget = AMAP_BUDGET if name == "amap()" else OTHER_BUDGET
            rows.append(row("concurrency", f"{label}: {name}", statistics.median(walls[name]),
                            "s", reference=bare, target=("<=", budget), target_on="ratio",
                            note=note + "; reference: the bare gather, same limit"))
    return rows


def _via_bare(caller: ToolCaller, n: int, limit: int) -> tuple[float, int]:
    return asyncio.run(_bare_gather(n, limit)), 0


async def _bare_gather(n: int, limit: int) -> float:
    gate = asyncio.Semaphore(limit)

    async def one() -> Any:
        async with gate:
            return await sleep50()

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - started


def _via_amap(caller: ToolCaller, n: int, limit: int) -> tuple[float, int]:
    async def main() -> tuple[float, int]:
        started = time.perf_counter()
        frame = await amap_calls(caller, "sleep50", [{}] * n, concurrency=limit, progress=False)
        return time.perf_counter() - started, int((~frame["success"]).sum())

    return asyncio.run(main())


def _via_map(caller: ToolCaller, n: int, limit: int) -> tuple[float, int]:
    started = time.perf_counter()
    frame = map_calls(caller, "sleep50", [{}] * n, concurrency=limit, progress=False)
    return time.perf_counter() - started, int((~frame["success"]).sum())


def _via_gather(caller: ToolCaller, n: int, limit: int) -> tuple[float, int]:
    async def main() -> tuple[float, int]:
        gate = asyncio.Semaphore(limit)

        async def one() -> bool:
            async with gate:
                return (await caller.acall("sleep50")).success

        started = time.perf_counter()
        done = await asyncio.gather(*(one() for _ in range(n)))
        return time.perf_counter() - started, done.count(False)

    return asyncio.run(main())


# -- timeout precision -----------------------------------------------------------------------

TIMEOUT_MS = 100


def timeouts(quick: bool) -> list[dict[str, Any]]:
    """How late the TIMEOUT envelope comes after a 100 ms per-attempt timeout, per kind."""
    n = 10 if quick else 50
    rows = []
    with scratch() as folder:
        python = _python_registry(folder)
        with ToolCaller.from_file(python) as caller:
            rows.append(asyncio.run(_alate("async tool, acall()", n, caller, "py.slow")))
            rows.append(_late("async tool, call()", n, _caller(caller, "py.slow")))
            rows.append(_batch_late("async tool in a batch, amap()", n,
                                    caller, "py.slow"))
            rows.append(_late("sync tool in a thread, call()", n,
                              _caller(caller, "py.slow_sync", {"seconds": 0.3})))
            rows.append(_late("sync tool, isolation process (0.3 s between calls)", n,
                              _caller(caller, "py.hang"), pause_s=0.3))
        rows.append(_kind_late("script (process group killed)", n, "script.hang",
                               lambda: script_registry(folder), "toolcaller.adapters.script"))
        with http_server() as base:
            rows.append(_kind_late("http (server answers after 1 s)", n, "http.slow",
                                   lambda: http_registry(folder, base),
                                   "toolcaller.adapters.http"))
    rows.append(_mcp_late("mcp (server sleeps 1 s, request cancelled)", n))
    return rows


def _mcp_late(case: str, n: int) -> dict[str, Any]:
    """An MCP stdio tool that sleeps past the timeout: the request is cancelled on the server."""
    with scratch() as folder:
        try:
            path = mcp_registry(folder)
        except LookupError as why:
            return skipped("timeouts", case, str(why))
        with ToolCaller.from_file(path) as caller:
            caller.call("bench.echo", {"text": "{}"}, timeout=30_000)  # the server is up
            return _late(case, n, _caller(caller, "bench.sleep", {"seconds": 1.0}))


def _python_registry(folder: Path) -> Path:
    schema = {"type": "object"}
    tools = [
        {"name": "py.slow", "description": "async sleep", "paramsSchema": schema,
         "python": "toolcaller.demo.tools:slow"},
        {"name": "py.slow_sync", "description": "sync sleep", "paramsSchema": schema,
         "python": "toolcaller.demo.tools:slow_sync", "idempotent": True},
        {"name": "py.hang", "description": "hang", "paramsSchema": schema,
         "python": "toolcaller.demo.tools:hang", "isolation": "process"},
    ]
    path = folder / "python.json"
    path.write_text(json.dumps({"tools": tools}))
    return path


Call = Callable[[], Any]


def _caller(caller: ToolCaller, name: str, params: dict[str, Any] | None = None) -> Call:
    return lambda: caller.call(name, params or {}, timeout=TIMEOUT_MS, retries=0)


async def _alate(case: str, n: int, caller: ToolCaller, name: str) -> dict[str, Any]:
    await caller.acall(name, {}, timeout=TIMEOUT_MS, retries=0)  # warm up
    late, wrong = [], 0
    for _ in range(n):
        started = time.perf_counter()
        envelope = await caller.acall(name, {}, timeout=TIMEOUT_MS, retries=0)
        late.append((time.perf_counter() - started) * 1000 - TIMEOUT_MS)
        wrong += envelope.code != "TIMEOUT"
    return _late_row(case, late, wrong)


def _batch_late(case: str, n: int, caller: ToolCaller, name: str) -> dict[str, Any]:
    """Rows one after the other in one worker: each row's duration past the timeout."""
    async def main() -> Any:
        await amap_calls(caller, name, [{}], progress=False, timeout=TIMEOUT_MS, retries=0)
        return await amap_calls(caller, name, [{}] * n, concurrency=1, progress=False,
                                timeout=TIMEOUT_MS, retries=0)

    frame = asyncio.run(main())
    late = [d - TIMEOUT_MS for d in frame["duration_ms"]]
    wrong = int((frame["code"] != "TIMEOUT").sum())
    return _late_row(case, late, wrong)


def _late(case: str, n: int, call: Call, pause_s: float = 0.0) -> dict[str, Any]:
    """Time `n` calls that end TIMEOUT; `pause_s` between them lets a killed worker's
    replacement start (otherwise the next call waits for it, and that wait is in its figure)."""
    call()  # warm: imports, a first child process, connections
    late, wrong = [], 0
    for _ in range(n):
        time.sleep(pause_s)
        started = time.perf_counter()
        envelope = call()
        late.append((time.perf_counter() - started) * 1000 - TIMEOUT_MS)
        wrong += envelope.code != "TIMEOUT"
    return _late_row(case, late, wrong)


def _late_row(case: str, late: list[float], wrong: int) -> dict[str, Any]:
    p50, p99 = p50_p99(late)
    n = len(late)
    note = f"{wrong} of {n} not TIMEOUT" if wrong else f"{n} calls, timeout {TIMEOUT_MS} ms"
    return row("timeouts", case, p50, "ms late", p99=p99, target=("<=", 15), target_on="p99",
               note=note)


def _kind_late(case: str, n: int, name: str, registry: Callable[[], Path],
               module: str) -> dict[str, Any]:
    try:
        __import__(module)
    except ImportError as exc:
        return skipped("timeouts", case, f"no adapter ({exc})")
    with ToolCaller.from_file(registry()) as caller:
        return _late(case, n, _caller(caller, name))
