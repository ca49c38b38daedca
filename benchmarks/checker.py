"""Compare the compiled checker with a prebuilt jsonschema validator on valid params.

Run: `python benchmarks/checker.py` (from the repository root). Prints median µs per call.
"""

from __future__ import annotations

import statistics
import timeit
from collections.abc import Callable
from typing import Any

import jsonschema

from toolcaller.core.checker import compile_checker

TWO_NUMBERS = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
TEN_FIELDS = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "city": {"type": "string"},
        "unit": {"enum": ["metric", "imperial"]},
        "lang": {"type": "string", "enum": ["en", "fr", "de"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 16},
        "limit": {"type": "integer", "minimum": 0},
        "offset": {"type": "integer"},
        "query": {"type": "string", "maxLength": 200},
        "mode": {"enum": ["fast", "exact"]},
        "verbose": {"type": "boolean"},
    },
    "required": ["name", "city", "days"],
    "additionalProperties": False,
}
NESTED = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "points": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x", "y"],
            },
            "maxItems": 100,
        },
        "owner": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "email": {"type": "string"}},
            "required": ["id"],
        },
    },
    "required": ["title", "points"],
}
CASES: list[tuple[str, dict[str, Any], Any]] = [
    ("two numbers", TWO_NUMBERS, {"a": 1, "b": 2.5}),
    (
        "10-field object",
        TEN_FIELDS,
        {
            "name": "Ada",
            "city": "Paris",
            "unit": "metric",
            "lang": "fr",
            "days": 3,
            "limit": 10,
            "offset": 0,
            "query": "rain",
            "mode": "fast",
            "verbose": False,
        },
    ),
    (
        "nested + arrays",
        NESTED,
        {
            "title": "route",
            "tags": ["a", "b", "c"],
            "points": [{"x": i, "y": i / 2} for i in range(5)],
            "owner": {"id": 7, "email": "a@b.c"},
        },
    ),
]


def median_us(call: Callable[[], object], number: int) -> float:
    """Median over 7 runs of the time of one call, in microseconds."""
    runs = timeit.repeat(call, number=number, repeat=7)
    return statistics.median(runs) / number * 1e6


def main() -> None:
    """Time each case and print one table row per schema."""
    print(f"{'schema':<18}{'checker µs':>12}{'jsonschema µs':>15}{'speed-up':>10}")
    for name, schema, params in CASES:
        check = compile_checker(schema)
        assert check is not None, name
        assert check(params), name
        validator = jsonschema.Draft202012Validator(schema)
        assert validator.is_valid(params), name
        fast = median_us(lambda check=check, params=params: check(params), 20_000)
        slow = median_us(lambda v=validator, params=params: v.is_valid(params), 2_000)
        print(f"{name:<18}{fast:>12.2f}{slow:>15.2f}{slow / fast:>9.0f}x")


if __name__ == "__main__":
    main()
