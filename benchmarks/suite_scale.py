"""Scale: a 10,000-tool registry, 100,000 history records, `handle` throughput, CLI start-up."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import overhead
from benchmarks.suite_kit import row, scratch, timed_ms
from toolcaller import History, ToolCaller
from toolcaller.core.history import CallRecord
from toolcaller.envelope import Attempt

REGISTRY_TOOLS = 10_000
HISTORY_CALLS = 100_000

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
     "required": ["a", "b"], "additionalProperties": False},
    {"type": "object", "properties": {"text": {"type": "string", "maxLength": 1000},
                                      "upper": {"type": "boolean", "default": False}},
     "required": ["text"]},
    {"type": "object", "properties": {"color": {"enum": ["red", "green", "blue"]},
                                      "size": {"type": "integer", "minimum": 1, "maximum": 10}}},
    {"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "string"}, "maxItems": 50},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}},
    {"type": "object", "properties": {"where": {
        "type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
        "required": ["lat", "lon"]}}},
    {"type": "object", "$defs": {"point": {"type": "object", "properties": {
        "x": {"type": "number"}, "y": {"type": "number"}}}},
     "properties": {"start": {"$ref": "#/$defs/point"}, "end": {"$ref": "#/$defs/point"}}},
    {"type": "object", "properties": {
        "id": {"anyOf": [{"type": "string", "pattern": "^[a-z]+$"}, {"type": "integer"}]},
        "when": {"type": "string", "format": "date-time"}}},
    {"type": "object", "properties": {"user": {"type": "string"},
                                      "password": {"type": "string", "writeOnly": True}},
     "required": ["user", "password"]},
]


def registry_data(count: int = REGISTRY_TOOLS) -> dict[str, Any]:
    """A registry of `count` tools in 100 groups (group 0 is `math`), schemas and kinds varied."""
    tools = []
    for i in range(count):
        group = "math" if i % 100 == 0 else f"g{i % 100:02d}"
        schema = json.loads(json.dumps(SCHEMAS[i % len(SCHEMAS)]))
        first = next(iter(schema["properties"].values()))
        first["description"] = f"first param of tool {i}"
        entry: dict[str, Any] = {
            "name": f"{group}.tool{i}", "description": f"Tool {i} of group {group}.",
            "paramsSchema": schema,
            "metadata": {"tags": [group if group == "math" else f"tag{i % 20}", "bench"]},
        }
        kind = i % 3
        if kind == 0:
            entry["python"] = "toolcaller.demo.tools:add"
        elif kind == 1:
            entry["script"] = {"command": ["python3", "scripts/run.py", str(i)]}
        else:
            entry["http"] = {"method": "GET", "url": f"http://127.0.0.1:9/items/{i}"}
        tools.append(entry)
    return {"tools": tools}


def registry(quick: bool) -> list[dict[str, Any]]:
    """Load a 10,000-tool registry file; discover with a filter on it."""
    runs = 2 if quick else 5
    with scratch() as folder:
        path = folder / "tools.json"
        path.write_text(json.dumps(registry_data()))
        ToolCaller.from_file(_small_registry(folder)).close()  # imports, not timed
        loads = []
        caller = None
        for _ in range(runs):  # one caller alive at a time: earlier ones would slow the GC
            if caller is not None:
                caller.close()
            started = time.perf_counter()
            caller = ToolCaller.from_file(path)
            loads.append((time.perf_counter() - started) * 1000)
        assert caller is not None
    label = f"{REGISTRY_TOOLS:,} tools"
    out = [
        row("registry", f"from_file, {label} (first load)", loads[0], "ms",
            target=("<=", 300)),
        row("registry", f"from_file, {label} (median of {runs})", statistics.median(loads),
            "ms", target=("<=", 300)),
    ]
    cases: list[tuple[str, Callable[[], Any], int]] = [
        ("discover('math') (first: builds search text)", lambda: caller.discover("math"), 1),
        ("discover('math')", lambda: caller.discover("math"), 100),
        ("registry.search('tag:math')", lambda: caller.registry.search("tag:math"), 100),
        ("registry.search('name:g1*.tool* -tag:tag3')",
         lambda: caller.registry.search("name:g1*.tool* -tag:tag3"), 100),
        ("discover() (no filter)", lambda: caller.discover(), 20),
    ]
    for case, fn, n in cases:
        found = _count(fn())
        samples = timed_ms(fn, n)
        out.append(row("registry", f"{case} on {label}", statistics.median(samples), "ms",
                       target=("<=", 5), note=f"{found} tools found; median of {n}"))
    caller.close()
    return out


def _count(found: Any) -> int:
    if isinstance(found, tuple):
        return len(found[0])
    return int(found.metadata.total)


def _small_registry(folder: Path) -> Path:
    path = folder / "small.json"
    path.write_text(json.dumps(registry_data(3)))
    return path


def history(quick: bool) -> list[dict[str, Any]]:
    """`History.frame()` and `attempts_frame()` on 100,000 calls."""
    import pandas  # noqa: F401 - imported before timing, like a notebook that uses it

    store = History(HISTORY_CALLS)
    now = time.time()
    for i in range(HISTORY_CALLS):
        ok = i % 10 != 0
        store.add(CallRecord(
            f"bench-{i}", f"g{i % 100:02d}.tool{i}", now + i / 1000, 1.5, ok,
            None if ok else "EXECUTION_ERROR", None if ok else "boom", {"a": i, "b": 2}, None,
            [Attempt(attempt=1, duration=1.2, code=None if ok else "EXECUTION_ERROR")],
        ))
    runs = 1 if quick else 3
    frame = statistics.median(timed_ms(store.frame, runs))
    attempts = statistics.median(timed_ms(store.attempts_frame, runs))
    note = f"median of {runs}; records built directly (one attempt each)"
    return [row("history", f"frame() on {HISTORY_CALLS:,} calls", frame, "ms",
                target=("<=", 500), note=note),
            row("history", f"attempts_frame() on {HISTORY_CALLS:,} calls", attempts, "ms",
                note=note)]


def handle(quick: bool) -> list[dict[str, Any]]:
    """Calls per second of one `toolcaller handle` process fed JSON Lines of math.add."""
    n = 2_000 if quick else 20_000
    data = "".join(json.dumps({"toolName": "math.add", "params": {"a": i, "b": 1}}) + "\n"
                   for i in range(n)).encode()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "toolcaller", "handle"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None
    assert proc.stdout is not None

    def feed() -> None:
        assert proc.stdin is not None
        proc.stdin.write(data)
        proc.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    first = last = 0.0
    answered = ok = 0
    for line in proc.stdout:
        last = time.perf_counter()
        if not answered:
            first = last
        answered += 1
        ok += b'"success": true' in line
    proc.wait()
    writer.join()
    rate = (answered - 1) / (last - first) if answered > 1 else 0.0
    note = (f"{answered:,} answers ({ok:,} ok); first answer after "
            f"{(first - started) * 1000:.0f} ms; timed from first to last answer")
    return [row("handle", f"toolcaller handle, {n:,} JSON Lines", rate, "calls/s",
                target=(">=", 5_000), note=note)]


def startup(quick: bool) -> list[dict[str, Any]]:
    """Wall time of `toolcaller discover`, `import toolcaller` and a bare python (minimums).

    The issue's targets are on the minimum, the figure least moved by other processes; the
    median is in the note. `from toolcaller import ToolCaller` is shown too: `import
    toolcaller` imports its public names on first use, so that row is what using it costs.
    """
    runs = 3 if quick else 15
    figures = overhead.cli_startup(runs)
    bare = min(figures["bare python"])

    def startup_row(case: str, key: str, limit: float | None) -> dict[str, Any]:
        samples = figures[key]
        return row("startup", case, min(samples), "ms", reference=bare,
                   target=("<=", limit) if limit is not None else None,
                   note=f"min of {runs} (median {statistics.median(samples):.0f} ms), "
                        "subprocess wall time; reference: bare python")

    return [
        startup_row("python -c 'import toolcaller'", "import", 150),
        startup_row("toolcaller discover --names (python -m)", "discover", 200),
        startup_row("python -c 'from toolcaller import ToolCaller'", "import ToolCaller", None),
        row("startup", "python -c pass", bare, "ms",
            note=f"min of {runs} (median {statistics.median(figures['bare python']):.0f} ms)"),
    ]
