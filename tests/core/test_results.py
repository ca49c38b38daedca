"""`toolcaller.core.results`: outputs become strict JSON results, or PARSE_ERROR (rule 7)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum, IntEnum
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from pydantic import BaseModel

from toolcaller.adapters.base import TextOutput
from toolcaller.core.results import PREVIEW_CHARS, to_json_result, to_result
from toolcaller.errors import ErrorCode, ParseError


class Inner(BaseModel):
    n: int


class Outer(BaseModel):
    inner: Inner
    when: datetime
    tags: set[str]


@dataclass
class Pair:
    left: Any
    right: Any


class Level(IntEnum):
    HIGH = 3


class Mode(Enum):
    FAST = "fast"


CONVERSIONS = [
    ("str", "text", "text"),
    ("int", 7, 7),
    ("huge-int", 10**40, 10**40),
    ("bool", True, True),
    ("none", None, None),
    ("float", 1.5, 1.5),
    ("list", [1, "a"], [1, "a"]),
    ("tuple", (1, (2, 3)), [1, [2, 3]]),
    ("set", {3, 1, 2}, [1, 2, 3]),
    ("mixed-set", {1, "a"}, None),
    ("frozenset", frozenset({"b", "a"}), ["a", "b"]),
    ("datetime", datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC), "2024-05-06T07:08:09.123000Z"),
    ("date", date(2024, 5, 6), "2024-05-06"),
    ("time", time(1, 2, 3), "01:02:03"),
    ("timedelta", timedelta(seconds=1.5), "PT1.5S"),
    ("decimal", Decimal("3.14"), "3.14"),
    ("uuid", UUID(int=255), "00000000-0000-0000-0000-0000000000ff"),
    ("enum", Mode.FAST, "fast"),
    ("int-enum", Level.HIGH, 3),
    ("bytes", b"hi\x00", "aGkA"),
    ("bytearray", bytearray(b"ab"), "YWI="),
    ("path", Path("/a/b"), "/a/b"),
    ("dataclass", Pair(1, (2,)), {"left": 1, "right": [2]}),
    ("model", Outer(inner=Inner(n=1), when=datetime(2024, 1, 1, tzinfo=UTC), tags={"x"}),
     {"inner": {"n": 1}, "when": "2024-01-01T00:00:00Z", "tags": ["x"]}),
    ("nested", {"a": [Pair(Decimal("1"), {2})]}, {"a": [{"left": "1", "right": [2]}]}),
    ("int-key", {1: "a", 2.5: "b"}, {"1": "a", "2.5": "b"}),
    ("bool-none-keys", {True: 1, None: 2}, {"true": 1, "null": 2}),
    ("generator", (i for i in range(3)), [0, 1, 2]),
]


class TestToJsonResult:
    @pytest.mark.parametrize(("value", "expected"), [c[1:] for c in CONVERSIONS],
                             ids=[c[0] for c in CONVERSIONS])
    def test_conversion(self, value: Any, expected: Any) -> None:
        """Python values become JSON data: models, dataclasses, dates, sets, bytes (base64)…"""
        result = to_json_result(value)
        json.dumps(result, allow_nan=False)
        if expected is None and value is not None:  # order of a mixed set is not fixed
            assert sorted(map(str, result)) == ["1", "a"]
        else:
            assert result == expected

    def test_scalars_pass_through_unchanged(self) -> None:
        """Plain JSON scalars are returned as they are."""
        text = "x" * 1000
        assert to_json_result(text) is text

    @pytest.mark.parametrize(
        ("value", "pointer"), [
            (float("nan"), ""),
            ({"a": [1, {"b": float("inf")}]}, "/a/1/b"),
            ([float("-inf")], "/0"),
            ({"a/b": {"c~d": float("nan")}}, "/a~1b/c~0d"),
            ((1, {2.0: float("nan")}), "/1/2.0"),
        ],
        ids=["top-nan", "nested-inf", "list-ninf", "escaped-pointer", "tuple-float-key"],
    )
    def test_non_finite_numbers(self, value: Any, pointer: str) -> None:
        """NaN and ±Infinity anywhere give PARSE_ERROR with a JSON pointer to the value."""
        with pytest.raises(ParseError) as caught:
            to_json_result(value)
        assert caught.value.code is ErrorCode.PARSE_ERROR
        assert caught.value.details == {"pointer": pointer}
        assert caught.value.retryable is False

    @pytest.mark.parametrize(
        ("value", "fragment"), [
            (object(), "object"),
            ({"a": {(1, 2): 3}}, "tuple key"),
            ({"f": lambda: 1}, "function"),
        ],
        ids=["object", "tuple-key", "function"],
    )
    def test_unconvertible_values(self, value: Any, fragment: str) -> None:
        """Values with no JSON form give PARSE_ERROR naming their type."""
        with pytest.raises(ParseError, match=fragment):
            to_json_result(value)

    def test_self_reference(self) -> None:
        """A structure that contains itself gives PARSE_ERROR, not a crash."""
        loop: list[Any] = [1]
        loop.append(loop)
        with pytest.raises(ParseError, match=r"deeply|itself"):
            to_json_result(loop)

    def test_deep_but_finite_nesting(self) -> None:
        """Nesting a few hundred levels deep converts fine."""
        value: Any = 1
        for _ in range(300):
            value = [value]
        assert to_json_result(value) == value


class TestTextOutput:
    @pytest.mark.parametrize(
        ("data", "expected"), [
            ('{"a": 1}', {"a": 1}),
            (b'[1, 2, "\xc3\xa9"]', [1, 2, "é"]),
            ("  42 \n", 42),
            ('"text"', "text"),
            ("null", None),
        ],
        ids=["object", "utf8-bytes", "padded-number", "string", "null"],
    )
    def test_json_text_is_parsed(self, data: str | bytes, expected: Any) -> None:
        """With format json, text output is parsed as JSON."""
        assert to_result(TextOutput(data), "json") == expected

    @pytest.mark.parametrize(
        ("data", "fragment"), [
            ("<html>hello</html>", "not valid JSON"),
            ("NaN", "not valid JSON"),
            ('{"a": Infinity}', "not valid JSON"),
            ("{'a': 1}", "not valid JSON"),
            ("", "not valid JSON"),
            (b"\xff\xfe\x00", "not UTF-8"),
            ("[" * 100_000 + "]" * 100_000, "not valid JSON"),
        ],
        ids=["html", "nan", "infinity", "python-repr", "empty", "not-utf8", "too-deep"],
    )
    def test_text_that_is_not_json(self, data: str | bytes, fragment: str) -> None:
        """Text that is not strict JSON gives PARSE_ERROR with the start of the text."""
        with pytest.raises(ParseError, match=fragment) as caught:
            to_result(TextOutput(data, media_type="text/plain"), "json")
        details = caught.value.details
        assert details["mediaType"] == "text/plain"
        assert len(details["start"]) <= PREVIEW_CHARS
        if isinstance(data, str):
            assert data.startswith(details["start"])

    def test_preview_is_cut(self) -> None:
        """Only the first PREVIEW_CHARS characters of a long output are kept."""
        with pytest.raises(ParseError) as caught:
            to_result(TextOutput("x" * 10_000), "json")
        assert caught.value.details["start"] == "x" * PREVIEW_CHARS


class TestRaw:
    @pytest.mark.parametrize("data", ["<html>", '{"a": 1}'], ids=["html", "json-text"])
    def test_text_untouched(self, data: str) -> None:
        """With format raw, text output is returned as is (not parsed)."""
        assert to_result(TextOutput(data), "raw") == data

    @pytest.mark.parametrize("output", [TextOutput(b"\xfb\xff", "image/png"), b"\xfb\xff"],
                             ids=["text-output", "python-bytes"])
    def test_bytes_are_standard_base64_with_their_media_type(self, output: Any) -> None:
        """With format raw, bytes become {mediaType, base64} in standard (not URL-safe) base64."""
        media = "image/png" if isinstance(output, TextOutput) else "application/octet-stream"
        assert to_result(output, "raw") == {"mediaType": media, "base64": "+/8="}

    def test_python_value_untouched(self) -> None:
        """With format raw, a Python value is returned as is."""
        value = {"a": (1, 2)}
        assert to_result(value, "raw") is value

    def test_json_format_converts(self) -> None:
        """With format json, a Python value is converted."""
        assert to_result({"a": (1, 2)}, "json") == {"a": [1, 2]}


class TestTextRules:
    """SPEC rule 7: only output that promises JSON is parsed; text by nature is a string."""

    @pytest.mark.parametrize("text", ["On branch main\nnothing to commit", "<html>hi</html>",
                                      "", "{not json"], ids=["prose", "html", "empty", "brace"])
    def test_text_by_nature_is_a_string(self, text: str) -> None:
        """Text that promises no JSON is returned as a string, whatever it looks like."""
        assert to_result(TextOutput(text, "text/plain", promises_json=False), "json") == text

    def test_json_looking_text_by_nature_stays_a_string(self) -> None:
        """Text by nature is not parsed even when it happens to be JSON."""
        out = TextOutput('{"a": 1}', "text/plain", promises_json=False)
        assert to_result(out, "json") == '{"a": 1}'

    @pytest.mark.parametrize(("data", "expected"), [('{"a": 1}', {"a": 1}), ("hello", "hello"),
                                                    (b"[1]", [1]), (b"caf\xc3\xa9", "café")],
                             ids=["json", "text", "json-bytes", "text-bytes"])
    def test_unknown_output_is_json_when_it_parses(self, data: Any, expected: Any) -> None:
        """Output nothing is known about is JSON when it parses, else a string."""
        assert to_result(TextOutput(data, promises_json=None), "json") == expected

    @pytest.mark.parametrize("output", [TextOutput(b"\x89PNG\r\n", "image/png", False),
                                        TextOutput(b"\xff\xfe\x00", None, None)],
                             ids=["labelled-binary", "unlabelled-not-utf8"])
    def test_binary_under_json_says_use_raw(self, output: TextOutput) -> None:
        """Binary output under format json is PARSE_ERROR telling to use format raw."""
        with pytest.raises(ParseError, match="format 'raw'") as caught:
            to_result(output, "json")
        assert caught.value.details["bytes"] == len(output.data)

    def test_promised_json_that_is_not_json_is_a_parse_error(self) -> None:
        """TC-09: output that promises JSON and is not JSON is PARSE_ERROR."""
        with pytest.raises(ParseError, match="not valid JSON"):
            to_result(TextOutput("<html>", "text/html", promises_json=True), "json")

    @pytest.mark.parametrize("media", ["application/json", "application/x-ndjson",
                                       "application/vnd.api+json"])
    def test_json_lines_labelled_json_are_a_list(self, media: str) -> None:
        """A JSON-labelled body holding one JSON text per line is the list of them."""
        body = '{"id": 0}\n{"id": 1}\n'
        assert to_result(TextOutput(body, media), "json") == [{"id": 0}, {"id": 1}]

    def test_several_json_texts_from_a_script_stay_a_parse_error(self) -> None:
        """Unlabelled output (a script's stdout) must be one JSON text."""
        with pytest.raises(ParseError, match="Extra data"):
            to_result(TextOutput('{"id": 0}\n{"id": 1}\n'), "json")

    def test_broken_json_lines_keep_the_first_error(self) -> None:
        """A JSON body whose lines do not all parse is PARSE_ERROR."""
        with pytest.raises(ParseError, match="Extra data"):
            to_result(TextOutput('{"id": 0}\n{"id": 1} x\n', "application/json"), "json")

    @pytest.mark.parametrize(("declared", "output", "expected"), [
        ("text", TextOutput('{"a": 1}'), '{"a": 1}'),
        ("json", TextOutput('{"a": 1}', promises_json=False), {"a": 1}),
        ("json", '{"a": 1}', {"a": 1}),
    ], ids=["text-wins", "json-wins", "python-string"])
    def test_the_entry_declaration_wins(self, declared: Any, output: Any, expected: Any) -> None:
        """A tool entry's `output` overrides what its adapter said."""
        assert to_result(output, "json", declared) == expected

    def test_declared_json_that_is_not_json_is_a_parse_error(self) -> None:
        """A tool whose entry promises JSON and answers prose is PARSE_ERROR."""
        with pytest.raises(ParseError):
            to_result("plain words", "json", "json")
