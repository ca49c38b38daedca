"""The issue's "Performance to hold" table, read back from the rows of one run.

`python -m benchmarks` prints it under the full table: each line names the row it comes from,
so every figure can be found in the table above it (with its reference, load and note).
"""

from __future__ import annotations

from typing import Any

from benchmarks._timing import table

PLAIN = "plain script, no __main__ guard"

# (what the issue says, section, case, figure shown: "ratio", "median" or "p99")
LINES: list[tuple[str, str, str, str]] = [
    ("`acall`, async tool, vs pydantic-ai", "peers", "toolcaller acall, async tool", "ratio"),
    ("`acall`, sync tool, vs pydantic-ai", "peers", "toolcaller acall, sync tool", "ratio"),
    ("`call`, sync tool, vs pydantic-ai (sync tool)", "peers", "toolcaller call, sync tool",
     "ratio"),
    ("burst: trivial calls ending TIMEOUT", "peers", "burst of 1,000 acall, timeout=50", "median"),
    ("`amap` 2,000 × 50 ms, 200 in flight, vs bare gather", "concurrency",
     "2,000 × 50 ms at 200: amap()", "ratio"),
    ("first call of a process-isolated tool: calls not ok", "process",
     "first call, isolation process, timeout=300", "median"),
    ("first call: worker start (ms, not charged)", "process", "first call: worker start",
     "median"),
    ("`import toolcaller` (min ms)", "startup", "python -c 'import toolcaller'", "median"),
    ("`toolcaller discover` (min ms)", "startup", "toolcaller discover", "median"),
    ("(`from toolcaller import ToolCaller`, min ms)", "startup",
     "python -c 'from toolcaller import ToolCaller'", "median"),
    ("pebble: ms past a 100 ms limit, worker killed (p99)", "process",
     "pebble ProcessPool, result(", "p99"),
    ("toolcaller pool: ms past a 100 ms limit, worker killed (p99)", "process",
     "toolcaller ProcessPool", "p99"),
    ("plain script top level runs: pebble spawn", "process", f"{PLAIN}, pebble (spawn",
     "median"),
    ("plain script top level runs: pebble forkserver", "process", f"{PLAIN}, pebble (forkserver",
     "median"),
    ("plain script top level runs: toolcaller", "process", f"{PLAIN}, toolcaller: times",
     "median"),
    ("plain script: toolcaller's first call not ok", "process", f"{PLAIN}, toolcaller: first",
     "median"),
]


def issue_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per entry of `LINES` found in `rows` (sections not run are left out)."""
    out = []
    for what, section, case, figure in LINES:
        found = next((r for r in rows if r["section"] == section
                      and str(r["case"]).startswith(case)), None)
        if found is None:
            continue
        value = found[figure]
        shown = ("skipped" if value is None else f"{value:.2f}×" if figure == "ratio"
                 else f"{value:,.1f}" if isinstance(value, float) else str(value))
        out.append({"what": what, "measured": shown, "target": found["target"],
                    "ok?": found["ok?"], "row": f"{section}: {found['case']}"[:70]})
    return out


def render(rows: list[dict[str, Any]]) -> str:
    """The issue's table as text, or an empty string when none of its rows ran."""
    lines = issue_rows(rows)
    if not lines:
        return ""
    return "issue 11, performance to hold:\n" + table(lines, ["what", "measured", "target",
                                                              "ok?", "row"])
