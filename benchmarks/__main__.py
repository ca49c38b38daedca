"""The benchmark suite: `python -m benchmarks [--quick] [--only NAME ...] [--profile NAME]`.

Prints one table (median, p99, the reference it is compared with, the target and whether it
is met) and writes it as JSON to `benchmarks/results/latest.json`. Every figure comes from
this one run; a missed target shows `NO` in the `ok?` column. Each section runs in a fresh
interpreter (`--same-process` runs them all in this one).

Sections: overhead, concurrency, timeouts, registry, history, handle, startup, peers (the
`bench` extra's libraries timed beside toolcaller; each one missing is a skipped row).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import json
import os
import platform
import pstats
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import (
    suite_concurrency,
    suite_overhead,
    suite_peers,
    suite_process,
    suite_scale,
    suite_widgets,
)
from benchmarks._timing import table
from benchmarks.issue_table import render
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
    "peers": suite_peers.run,
    "process": suite_process.run,
    "widgets": suite_widgets.run,
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
    parser.add_argument("--same-process", action="store_true",
                        help="run every section in this process (default: each in a fresh one)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.profile:
        return _profile(args.profile, args.quick)
    names = args.only or list(SECTIONS)
    load_before = os.getloadavg()
    rows: list[dict[str, Any]] = []
    timings = {}
    for name in names:
        print(f"running {name}…", file=sys.stderr, flush=True)
        started = time.perf_counter()
        if args.same_process or len(names) == 1:
            rows += SECTIONS[name](args.quick)
        else:
            rows += _in_fresh_process(name, args.quick)
        timings[name] = round(time.perf_counter() - started, 2)
    print(table(rows, COLUMNS))
    issue = render(rows)
    if issue:
        print("\n" + issue)
    before, after = (", ".join(f"{x:.2f}" for x in load) for load in (load_before,
                                                                      os.getloadavg()))
    print(f"\n{os.cpu_count()} CPUs, load average (1, 5, 15 min) {before} at the start, "
          f"{after} at the end (other processes skew the figures)")
    missed = [f"{r['section']}: {r['case']}" for r in rows if r["ok?"] == "NO"]
    print()
    print("targets missed: " + ("; ".join(missed) if missed else "none"))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"meta": _meta(args.quick, timings, load_before),
                                     "rows": rows},
                                    indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written to {args.json}")
    return 0


def _in_fresh_process(name: str, quick: bool) -> list[dict[str, Any]]:
    """Run one section in a new interpreter and return its rows.

    What a section leaves behind (servers, sessions, a 100,000-call history, imports) would
    otherwise weigh on the next: a larger heap makes every full garbage collection longer, and
    the concurrency figures move by 5-10% with the sections run before them.
    """
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / f"{name}.json"
        command = [sys.executable, "-m", "benchmarks", "--only", name, "--json", str(out)]
        done = subprocess.run(command + (["--quick"] if quick else []), capture_output=True,
                              text=True, check=False, cwd=Path(__file__).resolve().parent.parent)
        if done.returncode != 0 or not out.exists():
            sys.stderr.write(done.stdout + done.stderr)
            raise SystemExit(f"section {name!r} failed (exit {done.returncode})")
        rows: list[dict[str, Any]] = json.loads(out.read_text(encoding="utf-8"))["rows"]
        return rows


def _meta(quick: bool, timings: dict[str, float],
          load_before: tuple[float, float, float]) -> dict[str, Any]:
    return {
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in load_before],
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
