"""Long reliability runs: `python -m benchmarks.reliability [--calls N] [--only NAME ...]`.

Sections (each prints its figures and all go to `benchmarks/results/reliability.json`):

- leaks: N timed-out calls (default 1,000) of every scenario of `tests.reliability.churn`
  (thread, async, process, script, HTTP, MCP; tools that end soon after or never), with child
  processes, threads, descriptors, memory and history before / at most / after.
- deadlines: 100 calls per kind of a tool that never answers (timeout 100 ms, deadline
  300 ms, retries 2), with how far past the deadline the envelope came (p50, p99, max).
- success: 100,000 calls of a tool failing 10% of the time with retries 3, and 10,000 with
  retries 0.
- load: 20 threads × 50 `call`s and 1,000 `acall` tasks at once, twice.
- fuzz: the generated-input tests of `tests/reliability/test_fuzz_inputs.py` scaled to
  `--fuzz` cases (default 100,000).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.reliability import churn, tools_faulty  # noqa: E402
from tests.reliability.conftest import (  # noqa: E402
    MCP_SERVER,
    FaultServer,
    http_tool,
    py_tool,
    script_tool,
)
from toolcaller import Tool, ToolCaller  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "reliability.json"


def leaks(calls: int, server: FaultServer) -> list[dict[str, Any]]:
    rows = []
    for name in churn.kinds():
        key = f"bench-{name}"
        kind = churn.kinds(server.url, key)[name]
        with tempfile.TemporaryDirectory() as folder:
            caller = churn.make_caller(kind, Path(folder))
            try:
                figures = churn.churn(name, kind, caller, calls)
            finally:
                churn.release(key)
                caller.close()
        row = figures.to_dict()
        rows.append(row)
        print(f"  {name:14} {row['seconds']:6.1f} s  codes={row['codes']}  "
              f"children={row['children']} threads={row['threads']} "
              f"pool={row['pool_threads']} fds={row['fds']} rss={row['rss_mb']} "
              f"history={row['history']}", flush=True)
    return rows


def deadlines(server: FaultServer, runs: int = 100) -> list[dict[str, Any]]:
    folder = tempfile.mkdtemp()
    registry = {"tools": [{"name": "mcp", "description": "hang", "paramsSchema": {},
                           "mcp": {"server": "f", "tool": "hang"}}],
                "mcpServers": {"f": {"command": sys.executable, "args": [str(MCP_SERVER)]}}}
    Path(folder, "tools.json").write_text(json.dumps(registry))
    caller = ToolCaller.from_file(Path(folder, "tools.json"))
    for tool in [py_tool("hang", "thread"), py_tool("ahang", "async"),
                 py_tool("hang", "process", isolation="process"), script_tool("script"),
                 http_tool("http", f"{server.url}/hang")]:
        caller.add(tool)
    options = {"timeout": 100, "deadline": 300, "retries": 2, "retryDelay": 0}
    rows = []
    try:
        for name in ["thread", "async", "process", "script", "http", "mcp"]:
            params = {"mode": "hang"} if name == "script" else {}
            caller.call(name, params, timeout=3000, deadline=3000, retries=0)  # warm up
            over, wall_over = [], []
            for _ in range(runs):
                began = time.perf_counter()
                envelope = caller.call(name, params, **options)
                wall_over.append((time.perf_counter() - began) * 1000 - 300)
                over.append(envelope.metadata.duration - 300)
            row = {"kind": name, "runs": runs, **_spread("over_ms", over),
                   **_spread("wall_over_ms", wall_over)}
            rows.append(row)
            print(f"  {name:8} past the deadline: p50 {row['over_ms_p50']:6.2f} ms  "
                  f"p99 {row['over_ms_p99']:6.2f} ms  max {row['over_ms_max']:6.2f} ms "
                  f"(wall max {row['wall_over_ms_max']:.2f})", flush=True)
    finally:
        tools_faulty.RELEASE.set()
        caller.close()
    return rows


def _spread(prefix: str, values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {f"{prefix}_p50": round(statistics.median(ordered), 3),
            f"{prefix}_p99": round(ordered[int(len(ordered) * 0.99) - 1], 3),
            f"{prefix}_max": round(ordered[-1], 3)}


def success(calls_retried: int = 100_000, calls_plain: int = 10_000) -> list[dict[str, Any]]:
    rows = [_success_run(3, calls_retried), _success_run(0, calls_plain)]
    for row in rows:
        print(f"  retries={row['retries']}: {row['calls']} calls, success "
              f"{row['success_rate']:.5f}, codes {row['codes']}, {row['seconds']:.1f} s",
              flush=True)
    return rows


def _success_run(retries: int, calls: int) -> dict[str, Any]:
    rng = random.Random(retries)
    lock = threading.Lock()

    def flaky() -> dict[str, bool]:
        with lock:
            failed = rng.random() < 0.1
        if failed:
            raise RuntimeError("transient failure")
        return {"ok": True}

    tool = Tool(name="flaky", description="10% failures", params_schema={"type": "object"},
                kind="python", target=flaky)
    codes: Counter[str] = Counter()
    attempts: Counter[int] = Counter()
    with ToolCaller(tools=[tool], max_history=1000) as caller:
        began = time.perf_counter()
        for _ in range(calls):
            envelope = caller.call("flaky", retries=retries, retryDelay=0)
            codes[envelope.code.value if envelope.code else "OK"] += 1
            attempts[envelope.metadata.attempts] += 1
        seconds = time.perf_counter() - began
    return {"retries": retries, "calls": calls, "codes": dict(codes),
            "success_rate": codes["OK"] / calls, "attempts": dict(attempts),
            "seconds": round(seconds, 2)}


def load(server: FaultServer, rounds: int = 2) -> list[dict[str, Any]]:
    rows = []
    for round_ in range(rounds):
        row = _load_round(server)
        row["round"] = round_
        rows.append(row)
        print(f"  round {round_}: {row['calls']} calls in {row['seconds']:.2f} s, "
              f"{row['records']} records, codes {row['codes']}", flush=True)
    return rows


def _load_round(server: FaultServer) -> dict[str, Any]:
    from tests.reliability.test_load import PLAN

    caller = ToolCaller(tools=[
        py_tool("add", "ok"), py_tool("aadd", "aok"), py_tool("raise_system_exit", "fail"),
        py_tool("araise_custom_base", "afail"), py_tool("asleep", "aslow"),
        py_tool("nan", "nan"), http_tool("http", f"{server.url}/add"),
    ], max_history=100_000)
    caller.call("http", {"a": 1, "b": 1})
    caller.history.clear()
    codes: Counter[str] = Counter()
    lock = threading.Lock()

    def note(envelope: Any) -> None:
        with lock:
            codes[envelope.code.value if envelope.code else "OK"] += 1

    def worker(first: int) -> None:
        for index in range(first, first + 50):
            name, params, options, _, _ = PLAN[index % len(PLAN)]
            note(caller.call(name, params, **options))

    async def task(index: int) -> None:
        name, params, options, _, _ = PLAN[index % len(PLAN)]
        note(await caller.acall(name, params, **options))

    async def tasks() -> None:
        await asyncio.gather(*(task(1000 + i) for i in range(1000)))

    began = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(t * 50,)) for t in range(20)]
    for thread in threads:
        thread.start()
    asyncio.run(tasks())
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    row = {"calls": 2000, "records": caller.history.total, "codes": dict(codes),
           "seconds": round(seconds, 2)}
    caller.close()
    return row


def fuzz(examples: int) -> list[dict[str, Any]]:
    env = {**os.environ, "TOOLCALLER_FUZZ_EXAMPLES": str(examples)}
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/reliability/test_fuzz_inputs.py", "-q",
         "-p", "no:cacheprovider", "--timeout", "3600", "-k", "not Edges"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
    print(f"  {examples} cases: {summary} ({seconds:.0f} s)", flush=True)
    return [{"examples": examples, "summary": summary, "returncode": done.returncode,
             "seconds": round(seconds, 1)}]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reliability",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="timed-out calls per kind")
    parser.add_argument("--fuzz", type=int, default=100_000, help="generated cases in all")
    parser.add_argument("--only", action="append",
                        choices=["leaks", "deadlines", "success", "load", "fuzz"])
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    server = FaultServer()
    sections: dict[str, Callable[[], list[dict[str, Any]]]] = {
        "leaks": lambda: leaks(args.calls, server),
        "deadlines": lambda: deadlines(server),
        "success": success,
        "load": lambda: load(server),
        "fuzz": lambda: fuzz(args.fuzz),
    }
    results: dict[str, Any] = {"python": platform.python_version(),
                               "machine": platform.machine(), "cpus": os.cpu_count()}
    try:
        for name in args.only or list(sections):
            print(f"{name}:", flush=True)
            results[name] = sections[name]()
    finally:
        tools_faulty.RELEASE.set()
        server.close()
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2))
    print(f"written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
