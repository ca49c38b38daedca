"""Notebook widgets: a 200-field `ParamForm`, and `CatalogTable` keystrokes over 10,000 tools.

The figures come from `benchmarks.form_build` and `benchmarks.catalogue_filter` (each also a
script of its own); a section of its own so that ipywidgets is imported only here.
"""

from __future__ import annotations

import importlib.util
import statistics
from typing import Any

from benchmarks.suite_kit import p50_p99, row, skipped

SECTION = "widgets"


def run(quick: bool) -> list[dict[str, Any]]:
    """The form's build and set-value times, then each catalogue keystroke sequence."""
    if importlib.util.find_spec("ipywidgets") is None:
        return [skipped(SECTION, "ParamForm, CatalogTable", "no ipywidgets (notebook extra)")]
    from benchmarks import catalogue_filter, form_build

    repeat = 2 if quick else 7
    ms = form_build.measure(repeat)
    fields = form_build.FIELD_COUNT
    rows = [
        row(SECTION, f"ParamForm({fields}-field schema): build", ms["build"], "ms",
            target=("<=", form_build.TARGET_BUILD_MS),
            note=f"median of {repeat}; CPU {ms['build_cpu']:.0f} ms"),
        row(SECTION, f"ParamForm({fields} fields): set .value", ms["set"], "ms",
            note=f"median of {repeat}; CPU {ms['set_cpu']:.0f} ms"),
    ]
    tools = 10_000
    build_ms, results = catalogue_filter.measure(tools, 3 if quick else 15)
    rows.append(row(SECTION, f"CatalogTable over {tools:,} tools: build", build_ms, "ms",
                    note="one build"))
    for label, samples, matches in results:
        median, p99 = p50_p99(samples)
        rows.append(row(SECTION, f"CatalogTable keystroke: {label}", median, "ms", p99=p99,
                        target=("<=", catalogue_filter.TARGET_MS), target_on="p99",
                        note=f"{len(samples)} keystrokes; {matches:,} rows at the end; "
                             f"max {max(samples):.1f} ms, mean {statistics.fmean(samples):.1f}"))
    return rows
