"""Time params validation per call: `ParamsValidator` on the demo registry's schemas.

Run: `python benchmarks/validation.py` (from the repository root). Prints the median µs of one
`violations(params)` call on valid params (what every call pays) and on invalid ones (listing
the violations), and of building the validator (a new schema each time: no cache helps).
The same script runs against any version of toolcaller that has
`toolcaller.core.schema.ParamsValidator`, for a before/after comparison.
"""

from __future__ import annotations

import itertools
import json
import statistics
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import toolcaller
from toolcaller.core.schema import ParamsValidator

DEMO = Path(toolcaller.__file__).resolve().parent / "demo" / "registry.json"
CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("math.add", {"a": 1, "b": 2.5}, {"a": "1", "c": 3}),
    ("text.echo", {"text": "hello"}, {"text": 5}),
    ("demo.showcase",
     {"title": "Route", "count": 3, "ratio": 0.5, "enabled": True, "color": "red",
      "tags": ["a", "b"], "when": "2026-03-10", "address": {"street": "Main", "zip": "12345"},
      "items": [{"name": "x", "qty": 2}, {"name": "y", "qty": 1}],
      "contact": {"email": "a@b.c"}, "note": None},
     {"title": "route", "count": 300, "color": "pink", "when": "10/03/2026",
      "address": {"zip": "1"}, "items": [{"qty": 0}], "contact": {}}),
]


def median_us(call: Callable[[], object], number: int) -> float:
    """Median over 7 runs of the time of one call, in microseconds."""
    runs = timeit.repeat(call, number=number, repeat=7)
    return statistics.median(runs) / number * 1e6


def main() -> None:
    """Time each demo schema and print one row per schema."""
    tools = {t["name"]: t for t in json.loads(DEMO.read_text(encoding="utf-8"))["tools"]}
    print(f"{'schema':<16}{'valid µs':>10}{'invalid µs':>12}{'violations':>12}{'build µs':>10}")
    for name, good, bad in CASES:
        schema = tools[name]["paramsSchema"]
        validator = ParamsValidator(schema)
        assert validator.violations(good) == [], (name, validator.violations(good))
        found = validator.violations(bad)
        valid = median_us(lambda v=validator, p=good: v.violations(p), 2000)
        invalid = median_us(lambda v=validator, p=bad: v.violations(p), 200)
        fresh = ({**schema, "$comment": str(n)} for n in itertools.count())
        build = median_us(lambda f=fresh: ParamsValidator(next(f)), 200)
        print(f"{name:<16}{valid:>10.1f}{invalid:>12.1f}{len(found):>12}{build:>10.1f}")


if __name__ == "__main__":
    main()
