"""Many timed-out calls of one kind, with what they leave behind measured (tests and benchmark).

`KINDS` names each scenario: a tool that finishes soon after its timeout (its thread or child
is reusable) or never finishes, for every tool kind. `churn()` runs N calls and returns
`Figures`: child processes, threads, descriptors, memory and history, before, at most and
after.
"""

from __future__ import annotations

import gc
import json
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.reliability import tools_faulty
from tests.reliability.conftest import (
    MCP_SERVER,
    http_tool,
    live_children,
    open_fds,
    py_tool,
    rss_mb,
    script_tool,
    wait_until,
)
from toolcaller import Tool, ToolCaller

TIMEOUT_MS = 20
MAX_HISTORY = 100


@dataclass
class Kind:
    """One scenario: the tool, its params, and whether the tool ever ends by itself."""

    tool: Tool
    params: dict[str, Any]
    finishes: bool
    needs: str = ""
    """"http" or "mcp": the scenario needs the fault server or the MCP server."""


def kinds(http_url: str = "", key: str = "") -> dict[str, Kind]:
    """Every scenario; `key` names the event that releases never-ending thread tools."""
    key = key or uuid.uuid4().hex
    return {
        "thread-soon": Kind(py_tool("sleep", "t"), {"seconds": 0.04}, True),
        "thread-never": Kind(py_tool("block_until", "t"), {"key": key}, False),
        "async-soon": Kind(py_tool("asleep", "t"), {"seconds": 0.04}, True),
        "async-never": Kind(py_tool("ahang", "t"), {}, False),
        "process-soon": Kind(py_tool("sleep", "t", isolation="process"), {"seconds": 0.04},
                             True),
        "process-never": Kind(py_tool("hang", "t", isolation="process"), {}, False),
        "script-never": Kind(script_tool("t"), {"mode": "hang"}, False),
        "http-never": Kind(http_tool("t", f"{http_url}/hang"), {}, False, "http"),
        "mcp-never": Kind(Tool(name="t", description="hang", params_schema={"type": "object"},
                               kind="mcp", target={"server": "f", "tool": "hang"}),
                          {}, False, "mcp"),
    }


def make_caller(kind: Kind, folder: Path) -> ToolCaller:
    """A caller for one scenario (MCP scenarios go through a registry file)."""
    if kind.needs != "mcp":
        return ToolCaller(tools=[kind.tool], max_history=MAX_HISTORY)
    registry = {"tools": [{"name": "t", "description": "hang", "paramsSchema": {},
                           "mcp": {"server": "f", "tool": "hang"}}],
                "mcpServers": {"f": {"command": sys.executable, "args": [str(MCP_SERVER)]}}}
    path = folder / "tools.json"
    path.write_text(json.dumps(registry))
    return ToolCaller.from_file(path, max_history=MAX_HISTORY)


def os_threads() -> int:
    """Threads of this process as the kernel counts them."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


@dataclass
class Figures:
    """What N timed-out calls left behind."""

    kind: str
    calls: int
    seconds: float = 0.0
    codes: dict[str, int] = field(default_factory=dict)
    max_duration_ms: float = 0.0
    children: tuple[int, int, int] = (0, 0, 0)
    """Live descendant processes: before, at most during, after settling."""
    threads: tuple[int, int, int] = (0, 0, 0)
    """Python threads: before, at most, after."""
    os_threads: tuple[int, int, int] = (0, 0, 0)
    pool_threads: tuple[int, int, int] = (0, 0, 0)
    """The python adapter's worker threads (bounded by `ThreadRunner.max_threads`)."""
    fds: tuple[int, int, int] = (0, 0, 0)
    rss_mb: tuple[float, float, float] = (0.0, 0.0, 0.0)
    history: tuple[int, int] = (0, 0)
    """`len(history)` and `history.total` after the run."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Meter:
    """Samples children, threads and descriptors while calls run."""

    def __init__(self, caller: ToolCaller) -> None:
        self.pool = caller.adapter_for("python").threads  # type: ignore[attr-defined]
        self.before = self.sample()
        self.peak = list(self.before)
        self.total_before = caller.history.total

    def sample(self) -> tuple[int, int, int, int, int, float]:
        return (len(live_children()), threading.active_count(), os_threads(),
                self.pool.alive, open_fds(), rss_mb())

    def update(self) -> None:
        self.peak = [max(p, s) for p, s in zip(self.peak, self.sample(), strict=True)]


def churn(name: str, kind: Kind, caller: ToolCaller, calls: int, *, warmup: int = 5,
          sample_every: int = 10, settle_s: float = 5.0, timeout_ms: float = TIMEOUT_MS,
          ) -> Figures:
    """Run `calls` timed-out calls of one scenario and measure what they leave."""
    # The deadline bounds the wait for a worker (64 threads all hung, a process starting),
    # which is not the tool's time and so not bounded by its timeout.
    options = {"timeout": timeout_ms, "deadline": 15 * timeout_ms, "retries": 0}
    for _ in range(warmup):  # pools, loops, clients and sessions exist before the baseline
        caller.call("t", kind.params, **options)
    # A killed child is reaped, and its warm spare started, in the background: let both finish
    # so that the baseline is a settled state, like the one measured after the run.
    time.sleep(0.2)
    gc.collect()
    meter = _Meter(caller)
    codes: Counter[str] = Counter()
    worst = 0.0
    began = time.perf_counter()
    for index in range(calls):
        envelope = caller.call("t", kind.params, **options)
        codes[envelope.code.value if envelope.code else "OK"] += 1
        worst = max(worst, envelope.metadata.duration)
        if index % sample_every == 0:
            meter.update()
    seconds = time.perf_counter() - began
    meter.update()
    before = meter.before
    if kind.finishes or kind.tool.kind != "python" or kind.tool.isolation:
        # never-ending thread tools keep their threads until the caller releases them
        wait_until(lambda: _settled(meter, before), settle_s)
    gc.collect()
    after = meter.sample()
    return Figures(
        kind=name, calls=calls, seconds=round(seconds, 3), codes=dict(codes),
        max_duration_ms=worst,
        children=(before[0], meter.peak[0], after[0]),
        threads=(before[1], meter.peak[1], after[1]),
        os_threads=(before[2], meter.peak[2], after[2]),
        pool_threads=(before[3], meter.peak[3], after[3]),
        fds=(before[4], meter.peak[4], after[4]),
        rss_mb=(round(before[5], 1), round(meter.peak[5], 1), round(after[5], 1)),
        history=(len(caller.history), caller.history.total - meter.total_before),
    )


def _settled(meter: _Meter, before: tuple[int, int, int, int, int, float]) -> bool:
    gc.collect()  # a killed child's sentinel descriptor is closed when its Process is collected
    now = meter.sample()
    return now[0] <= before[0] and now[1] <= before[1] + 2 and now[4] <= before[4] + 4


def release(key: str) -> None:
    """Let never-ending thread tools of this key return."""
    tools_faulty.event(key).set()
