"""Process isolation: the first call's worker start, and toolcaller's pool beside pebble's.

- First call of a process-isolated tool, each in a fresh interpreter, `timeout=300,
  retries=0`: it must succeed (starting the worker is not the tool's time), and the worker's
  start (`ProcessPool.start_times_s`) is reported beside the call's duration.
- A tool that hangs, limit 100 ms: how long after the limit each pool answers, and whether the
  worker process was killed. pebble: `future.result(timeout=0.1)` then `future.cancel()` (the
  way the issue measured it), and pebble's own `schedule(..., timeout=0.1)`; toolcaller:
  `call(timeout=100, retries=0)`. A pause between calls lets each pool replace its worker.
- A plain script without `if __name__ == "__main__":` that makes one call in a worker: how
  many times its top level runs. pebble with the fork, spawn and forkserver starts; toolcaller.

toolcaller's pool is the one `PythonAdapter` uses for `isolation: "process"` (it calls
`ProcessPool().run(ctx, tool, params)`); the caller keeps that pool private, so `PoolAdapter`
below owns one the same way, through the public adapter protocol, to read its start times.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from benchmarks import pool_tools
from benchmarks.suite_kit import p50_p99, row, scratch, skipped
from toolcaller import ToolCaller, tool
from toolcaller.adapters.base import AttemptContext
from toolcaller.adapters.process import ProcessPool
from toolcaller.core.tool import Tool

SECTION = "process"
LIMIT_MS = 100
SETTLE_S = 0.3  # between hanging calls: the killed worker's replacement starts meanwhile
ROOT = Path(__file__).resolve().parent.parent


class PoolAdapter:
    """The `python` kind on a `ProcessPool` this benchmark can read (`pool.start_times_s`)."""

    kind = "python"

    def __init__(self) -> None:
        self.pool = ProcessPool()

    async def invoke(self, tool: Tool, params: dict[str, Any], ctx: AttemptContext) -> object:
        """Run the attempt in a worker process, as `PythonAdapter` does for isolation process."""
        return await self.pool.run(ctx, tool, params)

    async def aclose(self) -> None:
        """Kill the workers."""
        await self.pool.aclose()


def run(quick: bool) -> list[dict[str, Any]]:
    """First calls, the kill comparison with pebble, and the plain-script comparison."""
    rows = first_call_rows(2 if quick else 5)
    rows += kill_rows(5 if quick else 20)
    rows += plain_script_rows()
    return rows


# -- the first call ----------------------------------------------------------------------------

FIRST_CALL = textwrap.dedent("""\
    import json
    from benchmarks.pool_tools import add
    from benchmarks.suite_process import PoolAdapter
    from toolcaller import ToolCaller, tool

    adapter = PoolAdapter()
    with ToolCaller(tools=[tool(isolation="process")(add)], adapters={"python": adapter}) as c:
        first = c.call("add", {"a": 1, "b": 2}, timeout=300, retries=0)
        second = c.call("add", {"a": 1, "b": 2}, timeout=300, retries=0)
        starts = list(adapter.pool.start_times_s)
    print(json.dumps({"ok": first.success, "code": first.code, "ms": first.metadata.duration,
                      "second_ms": second.metadata.duration, "start_s": starts[0]}))
""")


def first_call_rows(runs: int) -> list[dict[str, Any]]:
    """Each run a fresh interpreter: its first process-isolated call, timeout 300 ms."""
    found = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True,
                              text=True, cwd=ROOT, timeout=120, check=False)
        if done.returncode != 0:
            return [skipped(SECTION, "first call, isolation process", done.stderr[-300:])]
        found.append(json.loads(done.stdout.splitlines()[-1]))
    failed = [f"{f['code']} after {f['ms']:.0f} ms" for f in found if not f["ok"]]
    starts = [f["start_s"] * 1000 for f in found]
    calls = [f["ms"] for f in found]
    over = sum(s > 300 for s in starts)
    note = (f"{runs} fresh interpreters; worker starts {[round(s) for s in starts]} ms "
            f"({over} over the 300 ms timeout); second call median "
            f"{statistics.median(f['second_ms'] for f in found):.1f} ms")
    return [
        row(SECTION, "first call, isolation process, timeout=300: calls not ok",
            len(failed), "calls", target=("<=", 0),
            note="; ".join(failed) if failed else "every first call succeeded; " + note),
        row(SECTION, "first call, isolation process: envelope duration", statistics.median(calls),
            "ms", p99=max(calls), reference=statistics.median(starts),
            note="reference: the worker's start (ProcessPool.start_times_s), within the call"),
        row(SECTION, "first call: worker start (ProcessPool.start_times_s)",
            statistics.median(starts), "ms", p99=max(starts), note="p99 column: the slowest"),
    ]


# -- a hanging tool, killed at its limit ---------------------------------------------------------

def kill_rows(n: int) -> list[dict[str, Any]]:
    """Answer latency past a 100 ms limit and worker kills: pebble's two ways, toolcaller."""
    rows = []
    try:
        import pebble  # noqa: F401
    except ImportError as exc:
        rows.append(skipped(SECTION, "pebble ProcessPool", f"not installed ({exc})"))
    else:
        rows.append(_kill_row("pebble ProcessPool, result(timeout=0.1) + cancel()",
                              _pebble_kills(n, own_timeout=False), None))
        rows.append(_kill_row("pebble ProcessPool, schedule(timeout=0.1)",
                              _pebble_kills(n, own_timeout=True), None))
    reference = rows[0]["median"] if rows and rows[0]["median"] is not None else None
    rows.append(_kill_row("toolcaller ProcessPool, call(timeout=100, retries=0)",
                          _toolcaller_kills(n), reference))
    return rows


Kill = tuple[float, float | None]  # ms past the limit, ms until the worker was gone (None: alive)


def _pebble_kills(n: int, *, own_timeout: bool) -> list[Kill]:
    import pebble

    pool = pebble.ProcessPool(max_workers=1)
    try:
        pool.schedule(pool_tools.add, args=(1, 2)).result(timeout=60)  # a worker is up
        out = []
        with scratch() as folder:
            for i in range(n):
                time.sleep(SETTLE_S)
                pid_file = folder / f"{i}.pid"
                started = time.perf_counter()
                if own_timeout:
                    future = pool.schedule(pool_tools.hang, args=(str(pid_file),),
                                           timeout=LIMIT_MS / 1000)
                    with contextlib.suppress(TimeoutError):
                        future.result()
                else:
                    future = pool.schedule(pool_tools.hang, args=(str(pid_file),))
                    try:
                        future.result(timeout=LIMIT_MS / 1000)
                    except TimeoutError:
                        future.cancel()  # type: ignore[no-untyped-call]
                late = (time.perf_counter() - started) * 1000 - LIMIT_MS
                out.append((late, _worker_gone(pid_file)))
        return out
    finally:
        pool.stop()  # type: ignore[no-untyped-call]
        pool.join(10)


def _toolcaller_kills(n: int) -> list[Kill]:
    adapter = PoolAdapter()
    made = tool(isolation="process")(pool_tools.hang)
    with ToolCaller(tools=[made, tool(isolation="process")(pool_tools.add)],
                    adapters={"python": adapter}) as caller:
        assert caller.call("add", {"a": 1, "b": 2}, timeout=60_000).success  # a worker is up
        out = []
        with scratch() as folder:
            for i in range(n):
                time.sleep(SETTLE_S)
                _wait_for_starts(adapter.pool, i + 1)  # the last kill's replacement is ready
                pid_file = folder / f"{i}.pid"
                started = time.perf_counter()
                envelope = caller.call("hang", {"pid_file": str(pid_file)}, timeout=LIMIT_MS,
                                       retries=0)
                late = (time.perf_counter() - started) * 1000 - LIMIT_MS
                assert envelope.code == "TIMEOUT", envelope
                out.append((late, _worker_gone(pid_file)))
        return out


def _wait_for_starts(pool: ProcessPool, count: int, limit_s: float = 30.0) -> None:
    """Wait until the pool has started `count` workers (each kill starts one replacement)."""
    until = time.monotonic() + limit_s
    while len(pool.start_times_s) < count and time.monotonic() < until:
        time.sleep(0.01)


def _worker_gone(pid_file: Path) -> float | None:
    """Ms until the worker that wrote `pid_file` ended (None: still alive after 2 s, or -1
    when the tool never started, so no worker ran it)."""
    until = time.monotonic() + 0.5
    while not pid_file.exists() and time.monotonic() < until:
        time.sleep(0.005)
    if not pid_file.exists():
        return -1.0
    return pool_tools.gone_within(int(pid_file.read_text(encoding="utf-8")), 2.0)


def _kill_row(case: str, kills: list[Kill], reference: float | None) -> dict[str, Any]:
    late = [k[0] for k in kills]
    gone = [k[1] for k in kills if k[1] is not None and k[1] >= 0]
    alive = sum(k[1] is None for k in kills)
    never = sum(k[1] is not None and k[1] < 0 for k in kills)
    p50, p99 = p50_p99(late)
    note = (f"{len(kills)} calls; workers alive 2 s after the answer: {alive}; "
            f"gone after median {statistics.median(gone) if gone else float('nan'):.0f} ms")
    if never:
        note += f"; {never} never reached a worker"
    target = ("<=", 15) if case.startswith("toolcaller") else None
    return row(SECTION, case + ": ms past the limit", p50, "ms late", p99=p99,
               reference=reference, target=target, target_on="p99", note=note)


# -- a plain script, no __main__ guard -----------------------------------------------------------

PEBBLE_SCRIPT = textwrap.dedent("""\
    import json, multiprocessing, os, sys
    import pebble
    from benchmarks.pool_tools import add
    print("top level runs in", os.getpid(), flush=True)
    pool = pebble.ProcessPool(max_workers=1, context=multiprocessing.get_context(sys.argv[1]))
    try:
        out = ["ok", pool.schedule(add, args=(1, 2)).result(timeout=60)]
    except BaseException as exc:
        out = ["error", f"{type(exc).__name__}: {exc}"]
    pool.stop()
    pool.join(10)
    print(json.dumps(out), flush=True)
""")
TOOLCALLER_SCRIPT = textwrap.dedent("""\
    import json, os
    from toolcaller import ToolCaller
    print("top level runs in", os.getpid(), flush=True)
    caller = ToolCaller()
    envelope = caller.call("math.add", {"a": 1, "b": 2}, isolation="process", timeout=300)
    caller.close()
    print(json.dumps(["ok" if envelope.success else "error",
                      envelope.result if envelope.success else envelope.error.message,
                      envelope.metadata.duration]), flush=True)
""")


def plain_script_rows() -> list[dict[str, Any]]:
    """How many times a guard-less script's top level runs when it makes one worker call.

    For toolcaller, also whether that first call (the demo's `math.add`, `timeout=300`, as in
    `tests/contract/test_defects.py::TestProcessIsolation`) succeeded.
    """
    rows = []
    with scratch() as folder:
        (folder / "pebble_plain.py").write_text(PEBBLE_SCRIPT, encoding="utf-8")
        (folder / "toolcaller_plain.py").write_text(TOOLCALLER_SCRIPT, encoding="utf-8")
        for method in ("fork", "spawn", "forkserver"):
            runs, ok, said = _plain_run(folder, ["pebble_plain.py", method])
            rows.append(row(SECTION, f"{PLAIN}, pebble ({method} start): times its top level ran",
                            runs, "runs", note=said))
        runs, ok, said = _plain_run(folder, ["toolcaller_plain.py"])
        rows.append(row(SECTION, f"{PLAIN}, toolcaller: times its top level ran", runs, "runs",
                        target=("<=", 1), note=said))
        rows.append(row(SECTION, f"{PLAIN}, toolcaller: first call (math.add, timeout=300) "
                        "not ok", int(not ok), "calls", target=("<=", 0), note=said))
    return rows


PLAIN = "plain script, no __main__ guard"


def _plain_run(folder: Path, argv: list[str]) -> tuple[int, bool, str]:
    """Run a script; return how often its top level ran, whether its call succeeded, a note."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, *argv], cwd=folder, capture_output=True, text=True,
                          timeout=180, check=False, env={**os.environ, "PYTHONPATH": path})
    lines = done.stdout.splitlines()
    runs = sum(line.startswith("top level runs in") for line in lines)
    answers = [json.loads(line) for line in lines if line.startswith("[")]
    if not answers:
        return runs, False, f"no answer (exit {done.returncode})"
    mine = answers[-1]  # the script's own answer comes last; earlier ones are its copies'
    said = f"the call: {mine[0]} {' '.join(str(mine[1]).split())[:100]!r}"
    if len(mine) > 2:
        said += f" after {mine[2]:.0f} ms (timeout 300)"
    for copy in answers[:-1]:
        said += (f"; the copy of the script in the worker made its own call: {copy[0]} "
                 f"{' '.join(str(copy[1]).split())[:80]!r}")
    tracebacks = done.stderr.count("Traceback")
    if tracebacks:
        said += f"; {tracebacks} traceback(s) on stderr"
    return runs, mine[0] == "ok", said
