"""Time CatalogTable's model update per keystroke over a catalogue of 10,000 synthetic tools.

Run: `python benchmarks/catalogue_filter.py [--tools N] [--rounds R]`; prints the median and p99
ms per keystroke for each query sequence (target: ≤ 50 ms per keystroke for 10,000 tools).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

TARGET_MS = 50.0
WORDS = ["math", "text", "data", "image", "audio", "file", "search", "web", "mail", "calendar",
         "convert", "compute", "fetch", "parse", "render", "store", "slow", "fast", "stat"]
TAGS = ["math", "text", "data", "io", "net", "slow", "demo", "beta", "admin", "ml"]
SEQUENCES = [
    ["m", "ma", "mat", "math"],
    ["t", "ta", "tag", "tag:", "tag:m", "tag:ma", "tag:mat", "tag:math"],
    ["n", "na", "name:", "name:t", "name:tool.1", "name:tool.01*"],
    ["math", "math ", "math -", "math -s", "math -sl", "math -slo", "math -slow"],
    ["math", "mat", "ma", "m", ""],
]


def _noop(**params: Any) -> dict[str, Any]:
    return params


def make_registry(count: int, seed: int = 7) -> Any:
    """Return a `Registry` of `count` synthetic python tools with words, tags and schemas."""
    from toolcaller import Registry, Tool

    rng = random.Random(seed)
    tools = []
    for i in range(count):
        words = rng.sample(WORDS, 4)
        tools.append(Tool(
            name=f"tool.{i:05d}_{words[0]}",
            description=f"{words[1].capitalize()} the {words[2]} of a {words[3]} (tool {i}).",
            params_schema={"type": "object",
                           "properties": {"x": {"type": "number"}, "y": {"type": "string"}},
                           "required": ["x"] if i % 2 else []},
            kind="python", target=_noop, metadata={"tags": rng.sample(TAGS, 2)},
        ))
    return Registry(tools)


def measure(count: int, rounds: int) -> tuple[float, list[tuple[str, list[float], int]]]:
    """Return the table's build ms and, per sequence, its label, ms per keystroke, final rows."""
    from toolcaller.widgets import CatalogTable

    registry = make_registry(count)
    start = time.perf_counter()
    table = CatalogTable(registry)
    build_ms = (time.perf_counter() - start) * 1000
    results = []
    for keys in SEQUENCES:
        samples: list[float] = []
        for _ in range(rounds):
            table.search.value = ""
            for key in keys:
                start = time.perf_counter()
                table.search.value = key
                samples.append((time.perf_counter() - start) * 1000)
        results.append((" → ".join(repr(k) for k in keys), samples, table.matches))
    table.search.value = ""
    samples = []
    for _ in range(rounds):
        for tags in (("math",), ("math", "slow"), ()):
            start = time.perf_counter()
            table.tags.value = tags
            samples.append((time.perf_counter() - start) * 1000)
    results.append(("tags: math → math+slow → none", samples, table.matches))
    table.close()
    return build_ms, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    worst = 0.0
    build_ms, results = measure(args.tools, args.rounds)
    print(f"CatalogTable over {args.tools:,} tools: built in {build_ms:.0f} ms")
    for label, samples, matches in results:
        ordered = sorted(samples)
        p99 = ordered[max(0, int(len(ordered) * 0.99) - 1)]
        worst = max(worst, p99)
        print(f"  {label:<70} median {statistics.median(ordered):6.1f} ms  p99 {p99:6.1f} ms"
              f"  ({matches:,} matches at the end)")
    verdict = "ok" if worst <= TARGET_MS else "SLOW"
    print(f"worst p99 {worst:.1f} ms per keystroke (target ≤ {TARGET_MS:.0f} ms: {verdict})")


if __name__ == "__main__":
    main()
