"""The benchmark suite: `python -m benchmarks [--quick] [--only NAME ...] [--profile NAME]`.

Prints one table (median, p99, the reference it is compared with, the target and whether it
is met) and writes it as JSON to `benchmarks/results/latest.json`. Every figure comes from
this one run; a missed target shows `NO` in the `ok?` column.

Sections: overhead, concurrency, timeouts, registry, history, handle, startup.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import json
import os
import platform
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import suite_concurrency, suite_overhead, suite_scale
from benchmarks._timing import table
from benchmarks.suite_kit import COLUMNS

Section = Callable[[bool], list[dict[str, Any]]]
SECTIONS: dict[str, Section] = {
    "overhead": suite_overhead.run,
    "concurrency": suite_concurrency.concurrency,
    "timeouts": suite_concurrency.timeouts,
    "registry": suite_scale.registry,
    "history": suite_scale.history,
    "handle": suite_scale.handle,
    "startup": suite_scale.startup,
}
RESULTS = Path(__file__).resolve().parent / "results" / "latest.json"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", metavar="NAME", choices=sorted(SECTIONS),
                        help="run only this section (repeatable)")
    parser.add_argument("--quick", action="store_true", help="fewer runs: a smoke test")
    parser.add_argument("--json", type=Path, default=RESULTS, metavar="FILE",
                        help=f"where to write the results (default {RESULTS})")
    parser.add_argument("--profile", metavar="NAME", choices=sorted(SECTIONS),
                        help="run one section under cProfile and print the top functions")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.profile:
        return _profile(args.profile, args.quick)
    names = args.only or list(SECTIONS)
    rows: list[dict[str, Any]] = []
    timings = {}
    for name in names:
        print(f"running {name}…", file=sys.stderr, flush=True)
        started = time.perf_counter()
        rows += SECTIONS[name](args.quick)
        timings[name] = round(time.perf_counter() - started, 2)
    print(table(rows, COLUMNS))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\n{os.cpu_count()} CPUs, load average {load} (other processes skew the figures)")
    missed = [f"{r['section']}: {r['case']}" for r in rows if r["ok?"] == "NO"]
    print()
    print("targets missed: " + ("; ".join(missed) if missed else "none"))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"meta": _meta(args.quick, timings), "rows": rows},
                                    indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written to {args.json}")
    return 0


def _meta(quick: bool, timings: dict[str, float]) -> dict[str, Any]:
    return {
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "quick": quick,
        "section_seconds": timings,
    }


def _profile(name: str, quick: bool) -> int:
    profiler = cProfile.Profile()
    profiler.enable()
    rows = SECTIONS[name](quick)
    profiler.disable()
    print(table(rows, COLUMNS))
    stats = pstats.Stats(profiler).strip_dirs()
    for key in ("tottime", "cumulative"):
        print(f"\ntop 25 by {key} (this thread only: the loop and worker threads are not seen)")
        stats.sort_stats(key).print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
