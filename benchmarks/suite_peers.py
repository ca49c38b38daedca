"""toolcaller beside its peers on the same `add(a, b)`, in one process, and a burst of calls.

Per-call rows: pydantic-ai, openai-agents, LangChain, FastMCP and toolcaller each validate and
run an async and a sync `add`, no model (`benchmarks.peers` says which API of each). The cases
take turns, round-robin with the order rotated every round, and every row is the median of all
its calls in all rounds, so a load spike lands on every library alike. Each row's ratio is to
pydantic-ai's `handle_call` of the same kind of tool, the reference of the issue's targets.
Then the burst (`benchmarks.burst`). The machine's load average opens and closes the rows.

A peer that is not installed (`pip install -e ".[bench]"`) or whose API moved is a skipped row.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
from typing import Any

from benchmarks import burst, peers
from benchmarks.suite_kit import p50_p99, row, skipped

SECTION = "peers"
REFERENCE = "pydantic-ai handle_call"
TARGETS = {  # the table: toolcaller's time over pydantic-ai's, same kind of tool
    f"toolcaller acall, {peers.ASYNC}": 0.75,
    f"toolcaller acall, {peers.SYNC}": 0.75,
    f"toolcaller call, {peers.SYNC}": 0.5,
}
NOTES = {
    "pydantic-ai": "the reference: ToolManager.handle_call",
    "openai-agents": "FunctionTool.on_invoke_tool, args as JSON text",
    "LangChain": "StructuredTool",
    "FastMCP": "in-memory Client.call_tool; a tenth of the calls",
    "toolcaller": "default options",
}


def run(quick: bool) -> list[dict[str, Any]]:
    """The load, the per-call rows of every peer and of toolcaller, the burst, the load again."""
    rows = [load_row("before")]
    rows += per_call_rows(*((3, 100, 20) if quick else (15, 400, 50)))
    rows += burst_rows(2 if quick else 5)
    rows.append(load_row("after"))
    return rows


def load_row(when: str) -> dict[str, Any]:
    """The load average (1, 5, 15 min) as a row, so that it stands beside the figures."""
    load = os.getloadavg()
    return row(SECTION, f"load average {when} (1 min)", round(load[0], 2), "load",
               note=f"1/5/15 min: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} "
                    f"on {os.cpu_count()} CPUs (other processes skew the figures)")


def per_call_rows(rounds: int, calls: int, warmup: int) -> list[dict[str, Any]]:
    """Time every case `rounds` times, `calls` calls a turn; one row per case."""
    rows: list[dict[str, Any]] = []
    samples: dict[str, list[float]] = {}
    with asyncio.Runner() as runner, contextlib.ExitStack() as stack:
        cases: list[peers.Case] = []
        for peer, build in peers.BUILDERS.items():
            try:
                cases += build(runner, stack)
            except Exception as exc:  # noqa: BLE001 - a peer that cannot run is a row, not a crash
                why = str(exc) if isinstance(exc, LookupError) else f"{type(exc).__name__}: {exc}"
                rows.append(skipped(SECTION, f"{peer}, per call", why))
        order = sorted(cases, key=lambda c: c.kind != peers.ASYNC)  # stable: builders' order
        samples = {case.label: [] for case in order}
        for turn in range(rounds):
            gc.collect()
            shift = turn % max(len(order), 1)
            for case in order[shift:] + order[:shift]:
                n = max(calls // case.weight, 5)
                samples[case.label] += case.measure(n, max(warmup // case.weight, 2))
    references = {case.kind: p50_p99(samples[case.label])[0] for case in order
                  if f"{case.peer} {case.how}" == REFERENCE}
    for case in order:
        rows.append(_case_row(case, samples[case.label], references.get(case.kind), rounds))
    return rows


def _case_row(case: peers.Case, samples: list[float], reference: float | None,
              rounds: int) -> dict[str, Any]:
    median, p99 = p50_p99(samples)
    limit = TARGETS.get(case.label)
    note = f"{NOTES[case.peer]}; {rounds} rounds, {len(samples):,} calls"
    if reference is None:
        note += f"; no reference: {REFERENCE} did not run"
    return row(SECTION, case.label, median, "µs", p99=p99, reference=reference,
               target=("<=", limit) if limit is not None else None, target_on="ratio",
               note=note)


def burst_rows(rounds: int) -> list[dict[str, Any]]:
    """The burst: trivial `add` calls ending TIMEOUT (target 0), and the burst's wall time."""
    tally = burst.measure(rounds)
    ours, plain = tally["toolcaller"], tally["by hand"]
    case = (f"burst of {burst.SIZE:,} acall, timeout={burst.TIMEOUT_MS}, retries=0: "
            f"trivial add ending TIMEOUT (of {burst.TRIVIAL} a round)")
    note = (f"{rounds} rounds, per round {ours['add_timeouts']} (by hand: "
            f"{plain['add_timeouts']}); reference: wait_for(run_in_executor) + jsonschema")
    failed = sum(ours["add_failed"]) - sum(ours["add_timeouts"])
    if failed:
        note += f"; {failed} more add failed otherwise"
    for side, tallied in (("toolcaller", ours), ("by hand", plain)):
        if tallied["unexpected"]:
            note += f"; {side}, other tools: {tallied['unexpected']} (not as expected)"
    wall_note = (f"median of {rounds}; reference: the same burst by hand; "
                 f"rounds {[round(w) for w in ours['wall_ms']]} ms")
    return [
        row(SECTION, case, sum(ours["add_timeouts"]), "calls",
            reference=sum(plain["add_timeouts"]), target=("<=", 0), note=note),
        row(SECTION, f"burst of {burst.SIZE:,} acall: wall time", ours["median_wall_ms"], "ms",
            reference=plain["median_wall_ms"], note=wall_note),
    ]
