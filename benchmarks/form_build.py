"""Time building a ParamForm for a 200-field schema, and setting its value.

Run: `python benchmarks/form_build.py [--repeat N]`; prints medians in ms (target: build
≤ 300 ms on the project's 2-core machine).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

FIELD_COUNT = 200
TARGET_BUILD_MS = 300.0

KINDS: list[tuple[dict[str, Any], Any]] = [  # (property schema, a valid value)
    ({"type": "string", "description": "a name"}, "text"),
    ({"type": "integer", "minimum": 0, "maximum": 1000}, 7),
    ({"type": "number"}, 2.5),
    ({"type": "boolean", "default": False}, True),
    ({"enum": ["red", "green", "blue", 3, None]}, 3),
    ({"type": "string", "format": "date"}, "2024-05-06"),
    ({"type": "array", "items": {"type": "string"}}, ["a", "b"]),
    ({"type": "array", "items": {"enum": ["x", "y", "z"]}, "uniqueItems": True}, ["y", "x"]),
    (
        {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "string"}},
            "required": ["x"],
        },
        {"x": 1, "y": "q"},
    ),
    ({"type": ["string", "null"]}, None),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, 5),
    ({"type": "string", "writeOnly": True}, "secret"),
]


def make_schema(count: int = FIELD_COUNT) -> dict[str, Any]:
    """Return an object schema with `count` properties of mixed kinds, half of them required."""
    properties = {f"field_{i:03d}": KINDS[i % len(KINDS)][0] for i in range(count)}
    required = [name for i, name in enumerate(properties) if i % 2 == 0]
    return {"type": "object", "properties": properties, "required": required}


def make_value(count: int = FIELD_COUNT) -> dict[str, Any]:
    """Return a valid value for `make_schema(count)` that sets every field."""
    return {f"field_{i:03d}": KINDS[i % len(KINDS)][1] for i in range(count)}


def measure(repeat: int) -> dict[str, float]:
    """Return medians in ms: build and set-value, wall clock and CPU time of this process.

    CPU time is given too because a shared machine's load inflates the wall clock.
    """
    from toolcaller.widgets import ParamForm

    schema, value = make_schema(), make_value()
    ParamForm(schema).close()  # warm up: imports, jsonschema's validator classes
    samples: dict[str, list[float]] = {"build": [], "build_cpu": [], "set": [], "set_cpu": []}
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        form = ParamForm(schema)
        samples["build"].append((time.perf_counter() - wall) * 1000)
        samples["build_cpu"].append((time.process_time() - cpu) * 1000)
        wall, cpu = time.perf_counter(), time.process_time()
        form.value = value
        samples["set"].append((time.perf_counter() - wall) * 1000)
        samples["set_cpu"].append((time.process_time() - cpu) * 1000)
        assert form.value == value, "the value did not round-trip"
        form.close()
    return {name: statistics.median(times) for name, times in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    ms = measure(args.repeat)
    verdict = "ok" if ms["build"] <= TARGET_BUILD_MS else "SLOW"
    print(
        f"ParamForm, {FIELD_COUNT} fields, median of {args.repeat}: "
        f"build {ms['build']:.1f} ms (CPU {ms['build_cpu']:.1f} ms; "
        f"target ≤ {TARGET_BUILD_MS:.0f} ms: {verdict}); "
        f"set .value {ms['set']:.1f} ms (CPU {ms['set_cpu']:.1f} ms)"
    )


if __name__ == "__main__":
    main()
