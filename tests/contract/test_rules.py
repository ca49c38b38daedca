"""SPEC §2 rules 1–5, one class per rule (rules 6–11: test_rules_outcomes.py)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, ClassVar

import pytest

from tests.helpers import (
    LATE_MS,
    FakeClock,
    always_failing,
    check_envelope,
    code_of,
    fake_caller,
    make_tool,
    resolved,
)
from toolcaller import ExecutionError, ToolCaller, tool
from toolcaller.adapters.base import TextOutput
from toolcaller.envelope import Options

ADD = {"toolName": "math.add", "params": {"a": 1, "b": 2}}


def _with(**changes: Any) -> dict[str, Any]:
    return {**ADD, **changes}


def _opts(**options: Any) -> dict[str, Any]:
    return _with(options=options)


MALFORMED = [
    ("null", None, "object"),
    ("list", [ADD], "object"),
    ("empty-list", [], "object"),
    ("string", "math.add", "object"),
    ("number", 42, "object"),
    ("float", 1.5, "object"),
    ("bool", True, "object"),
    ("nan", float("nan"), "object"),
    ("missing-toolName", {"params": {}}, "toolName"),
    ("empty-toolName", {"toolName": ""}, "toolName"),
    ("blank-toolName", {"toolName": "   "}, "toolName"),
    ("int-toolName", {"toolName": 7}, "toolName"),
    ("list-toolName", {"toolName": ["math.add"]}, "toolName"),
    ("null-toolName", {"toolName": None}, "toolName"),
    ("params-list", _with(params=[1, 2]), "params"),
    ("params-string", _with(params="a=1"), "params"),
    ("params-number", _with(params=3), "params"),
    ("options-list", _with(options=[]), "options"),
    ("options-string", _with(options="fast"), "options"),
    ("options-number", _with(options=5), "options"),
    ("timeout-negative", _opts(timeout=-1), "timeout"),
    ("timeout-zero", _opts(timeout=0), "timeout"),
    ("timeout-nan", _opts(timeout=float("nan")), "timeout"),
    ("timeout-inf", _opts(timeout=float("inf")), "timeout"),
    ("timeout-huge", _opts(timeout=1e300), "timeout"),
    ("timeout-bool", _opts(timeout=True), "timeout"),
    ("timeout-string", _opts(timeout="100"), "timeout"),
    ("timeout-null", _opts(timeout=None), "timeout"),
    ("retries-negative", _opts(retries=-1), "retries"),
    ("retries-float", _opts(retries=1.5), "retries"),
    ("retries-huge", _opts(retries=10**9), "retries"),
    ("retries-bool", _opts(retries=True), "retries"),
    ("retryDelay-negative", _opts(retryDelay=-5), "retryDelay"),
    ("deadline-zero", _opts(deadline=0), "deadline"),
    ("unknown-option", _opts(timout=100), "did you mean 'timeout'"),
    ("unknown-format", _opts(format="xml"), "format"),
    ("unknown-isolation", _opts(isolation="vm"), "isolation"),
    ("unknown-action", {"action": "explode"}, "action"),
    ("action-number", {"action": 5}, "action"),
    ("discover-options-list", {"action": "discover", "options": []}, "options"),
    ("discover-options-string", {"action": "discover", "options": "math"}, "options"),
    ("discover-filter-number", {"action": "discover", "options": {"filter": 3}}, "filter"),
    ("discover-unknown-option", {"action": "discover", "options": {"limit": 3}}, "filter"),
    ("unknown-top-level-key", {**ADD, "parms": {}}, "parms"),
    ("tool-instead-of-toolName", {"tool": "math.add"}, "tool"),
]


class TestRule1NeverRaise:
    @pytest.mark.parametrize(("request_", "fragment"), [m[1:] for m in MALFORMED],
                             ids=[m[0] for m in MALFORMED])
    def test_malformed_request_is_invalid_params(self, demo: ToolCaller, request_: Any,
                                                 fragment: str) -> None:
        """A malformed request gives INVALID_PARAMS, attempts 0, naming what is wrong."""
        data = check_envelope(demo.handle(request_))
        assert code_of(data) == "INVALID_PARAMS"
        assert data["metadata"].get("attempts", 0) == 0
        assert fragment in data["error"]["message"]

    @pytest.mark.parametrize(("request_", "fragment"), [m[1:] for m in MALFORMED[:20]],
                             ids=[m[0] for m in MALFORMED[:20]])
    async def test_ahandle_too(self, demo: ToolCaller, request_: Any, fragment: str) -> None:
        """The async `ahandle` answers malformed requests the same way."""
        data = check_envelope(await demo.ahandle(request_))
        assert code_of(data) == "INVALID_PARAMS"
        assert fragment in data["error"]["message"]

    def test_call_with_bad_keyword_option(self, demo: ToolCaller) -> None:
        """`call()` with a bad option keyword returns an INVALID_PARAMS envelope, not raises."""
        envelope = demo.call("math.add", {"a": 1, "b": 2}, timeout=-1)
        assert envelope.code == "INVALID_PARAMS"
        assert "timeout" in envelope.error.message  # type: ignore[union-attr]

    @pytest.mark.parametrize(
        "exc", [SystemExit(3), KeyboardInterrupt(), MemoryError(), RecursionError()],
        ids=["SystemExit", "KeyboardInterrupt", "MemoryError", "RecursionError"],
    )
    def test_tool_raising_base_exceptions(self, exc: BaseException) -> None:
        """A tool raising even a BaseException gives an EXECUTION_ERROR envelope."""
        caller = ToolCaller(tools=[make_tool(always_failing([], exc), "t")])
        data = check_envelope(caller.handle({"toolName": "t", "options": {"retries": 0}}))
        assert code_of(data) == "EXECUTION_ERROR"

    def test_deeply_nested_params(self, demo: ToolCaller) -> None:
        """Params nested too deeply to validate give INVALID_PARAMS, not an internal error."""
        deep: Any = "x"
        for _ in range(5000):
            deep = [deep]
        data = check_envelope(demo.handle({"toolName": "text.echo", "params": {"text": deep}}))
        assert code_of(data) == "INVALID_PARAMS"
        assert data["metadata"]["attempts"] == 0

    def test_exception_whose_str_raises(self) -> None:
        """An exception that cannot even be printed still gives an envelope."""
        class Nasty(Exception):
            def __str__(self) -> str:
                raise RuntimeError("no str for you")

        caller = ToolCaller(tools=[make_tool(always_failing([], Nasty()), "t")])
        data = check_envelope(caller.handle({"toolName": "t", "options": {"retries": 0}}))
        assert not data["success"]


class TestRule2NotFound:
    @pytest.mark.parametrize("name", ["math.ad", "MATH.ADD", "math_add"],
                             ids=["typo", "case", "separator"])
    def test_not_found_with_suggestions(self, demo: ToolCaller, name: str) -> None:
        """An unknown name gives TOOL_NOT_FOUND, attempts 0, and suggests close names."""
        data = check_envelope(demo.handle({"toolName": name, "params": {}}))
        assert code_of(data) == "TOOL_NOT_FOUND"
        assert data["metadata"]["attempts"] == 0
        assert "math.add" in data["error"]["message"]
        assert "math.add" in data["error"]["details"]["suggestions"]

    def test_nothing_close(self, demo: ToolCaller) -> None:
        """A name close to nothing gives no suggestion, but a clear message."""
        data = demo.handle({"toolName": "zzzzqqqq"})
        assert code_of(data) == "TOOL_NOT_FOUND"
        assert "zzzzqqqq" in data["error"]["message"]
        assert "did you mean" not in data["error"]["message"]


class TestRule3ParamsValidated:
    SCHEMA: ClassVar[dict[str, Any]] = {
        "type": "object", "additionalProperties": False, "required": ["a", "b"],
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                       "n": {"type": "object", "properties": {
                           "z": {"type": "string", "pattern": "^[0-9]{5}$"}}}}}

    def test_every_violation_listed_before_any_attempt(self) -> None:
        """Invalid params give INVALID_PARAMS, attempts 0, every violation with its pointer."""
        ran: list[int] = []
        caller = ToolCaller(tools=[make_tool(lambda **kw: ran.append(1), "t", self.SCHEMA)])
        data = caller.handle({"toolName": "t",
                              "params": {"a": "x", "c": 1, "n": {"z": "12"}}})
        assert code_of(data) == "INVALID_PARAMS"
        assert data["metadata"]["attempts"] == 0
        assert ran == []
        pointers = sorted(v["pointer"] for v in data["error"]["details"]["violations"])
        assert pointers == ["/a", "/b", "/c", "/n/z"]
        assert "(and 3 more)" in data["error"]["message"]

    def test_nested_array_pointer(self, demo: ToolCaller) -> None:
        """A violation inside an array item points at the item's index."""
        data = demo.handle({"toolName": "demo.showcase", "params": {
            "title": "Hi", "color": "red", "items": [{"name": "a"}, {"name": "b", "qty": 0}]}})
        assert [v["pointer"] for v in data["error"]["details"]["violations"]] == ["/items/1/qty"]

    def test_draft07_schema_is_honoured(self) -> None:
        """A schema whose $schema says draft-07 is validated with draft-07 keywords."""
        schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                  "dependencies": {"a": ["b"]}}
        caller = ToolCaller(tools=[make_tool(lambda **kw: kw, "t", schema)])
        data = caller.handle({"toolName": "t", "params": {"a": 1}})
        assert code_of(data) == "INVALID_PARAMS"
        assert data["metadata"]["attempts"] == 0

    def test_decorated_type_mismatch_starts_no_attempt(self) -> None:
        """A @tool param that does not convert (a bad datetime) fails with attempts 0."""
        def when(moment: datetime) -> str:
            return moment.isoformat()

        caller = ToolCaller(tools=[tool(resolved(when))])
        data = caller.handle({"toolName": "when", "params": {"moment": "not a date"}})
        assert code_of(data) == "INVALID_PARAMS"
        assert data["metadata"]["attempts"] == 0


class TestRule4Retries:
    @pytest.mark.parametrize("retries", [0, 1, 3, 7], ids=lambda r: f"retries={r}")
    def test_retries_count(self, clock: FakeClock, retries: int) -> None:
        """An always failing tool runs exactly 1 + retries times."""
        counter: list[int] = []
        caller = fake_caller([make_tool(always_failing(counter), "t")], clock)
        data = caller.handle({"toolName": "t", "options": {"retries": retries,
                                                           "deadline": 600_000}})
        assert data["metadata"]["attempts"] == len(counter) == retries + 1

    @pytest.mark.parametrize(
        ("make", "code"), [
            (lambda: TextOutput("<html>"), "PARSE_ERROR"),
            (lambda: {"x": float("nan")}, "PARSE_ERROR"),
            (lambda: (_ for _ in ()).throw(ExecutionError("404", permanent=True)),
             "EXECUTION_ERROR"),
        ],
        ids=["text-not-json", "nan", "permanent"],
    )
    def test_not_retried(self, clock: FakeClock, make: Callable[[], Any], code: str) -> None:
        """PARSE_ERROR and a permanent EXECUTION_ERROR are not retried."""
        counter: list[int] = []

        def once() -> Any:
            counter.append(1)
            return make()

        caller = fake_caller([make_tool(once, "t")], clock)
        data = caller.handle({"toolName": "t", "options": {"retries": 3}})
        assert code_of(data) == code
        assert len(counter) == 1
        assert clock.sleeps == []

    def test_timeout_is_retried(self) -> None:
        """A TIMEOUT is retried (an async tool that hangs each time)."""
        async def hangs() -> None:
            await asyncio.sleep(10)

        caller = ToolCaller(tools=[make_tool(hangs, "t")])
        data = caller.handle({"toolName": "t", "options": {"retries": 2, "timeout": 20}})
        assert code_of(data) == "TIMEOUT"
        assert data["metadata"]["attempts"] == 3

    def test_transient_failures_mended(self, clock: FakeClock) -> None:
        """A tool failing twice then working succeeds on the third attempt."""
        counter: list[int] = []

        def flaky() -> str:
            counter.append(1)
            if len(counter) < 3:
                raise ConnectionError("reset")
            return "ok"

        data = fake_caller([make_tool(flaky, "t")], clock).handle({"toolName": "t"})
        assert data["success"] is True
        assert data["result"] == "ok"
        assert data["metadata"]["attempts"] == 3

    @pytest.mark.parametrize(
        ("options", "waits"), [
            ({"retryDelay": 1000}, [1.0, 1.0, 1.0]),
            ({"retryDelay": 1000, "backoff": 2}, [1.0, 2.0, 4.0]),
            ({"retryDelay": 100, "backoff": 3}, [0.1, 0.3, 0.9]),
            ({"retryDelay": 0}, []),
            ({"retryDelay": 1000, "jitter": 200}, [1.1, 1.1, 1.1]),
        ],
        ids=["fixed", "backoff-2", "backoff-3", "no-delay", "jitter"],
    )
    @pytest.mark.parametrize("driver", ["sync", "async"])
    async def test_waits(self, clock: FakeClock, options: dict[str, Any], waits: list[float],
                         driver: str) -> None:
        """Waits are retryDelay, times backoff each time, plus jitter × a random fraction."""
        caller = fake_caller([make_tool(always_failing([]), "t")], clock, rng=lambda: 0.5)
        request = {"toolName": "t", "options": {"retries": 3, "deadline": 60_000, **options}}
        data = caller.handle(request) if driver == "sync" else await caller.ahandle(request)
        assert data["metadata"]["attempts"] == 4
        assert clock.sleeps == pytest.approx(waits)
        assert [t["wait"] for t in data["metadata"]["trail"]] == pytest.approx(
            [0.0, *(w * 1000 for w in waits)] if waits else [0.0] * 4)

    def test_retry_after_lengthens_the_wait(self, clock: FakeClock) -> None:
        """A failure asking for a 3 s Retry-After waits 3 s, not the shorter retryDelay."""
        error = ExecutionError("busy", retry_after_s=3.0)
        caller = fake_caller([make_tool(always_failing([], error), "t")], clock)
        caller.handle({"toolName": "t", "options": {"retries": 1, "retryDelay": 100}})
        assert clock.sleeps == [3.0]


class TestRule5Deadline:
    def test_default_deadline_is_5000(self) -> None:
        """The default deadline is 5000 ms."""
        assert Options().deadline == 5000

    @pytest.mark.parametrize(("deadline", "attempts"), [(None, 3), (10_000, 5), (1_000, 1)],
                             ids=["default", "10s", "1s"])
    def test_attempts_fit_the_deadline(self, clock: FakeClock, deadline: int | None,
                                       attempts: int) -> None:
        """Attempts of 2 s each stop when the deadline (default 5 s) has no room left."""
        def slow_failure() -> None:
            clock.advance(2.0)
            raise RuntimeError("slow failure")

        options: dict[str, Any] = {"retries": 20, "retryDelay": 0}
        if deadline is not None:
            options["deadline"] = deadline
        caller = fake_caller([make_tool(slow_failure, "t")], clock)
        data = caller.handle({"toolName": "t", "options": options})
        assert data["metadata"]["attempts"] == attempts

    def test_no_wait_or_attempt_the_budget_cannot_hold(self, clock: FakeClock) -> None:
        """A retry whose wait would eat the rest of the deadline is neither waited nor run."""
        def quick_failure() -> None:
            clock.advance(0.1)
            raise RuntimeError("quick failure")

        caller = fake_caller([make_tool(quick_failure, "t")], clock)
        data = caller.handle({"toolName": "t", "options": {
            "retries": 5, "retryDelay": 400, "deadline": 1000}})
        assert data["metadata"]["attempts"] == 2
        assert clock.sleeps == [pytest.approx(0.4)]
        assert "deadline" in json.dumps(data["error"]["details"])

    @pytest.mark.parametrize("kind", ["async", "sync-idempotent", "sync"])
    def test_envelope_within_the_deadline(self, kind: str) -> None:
        """Whatever the tool does, the envelope comes back by the deadline (see LATE_MS)."""
        release = threading.Event()

        async def hang_async() -> None:
            await asyncio.sleep(10)

        def hang_sync() -> None:
            release.wait(10)

        fn = hang_async if kind == "async" else hang_sync
        caller = ToolCaller(tools=[make_tool(fn, "t", idempotent=kind != "sync")])
        try:
            started = time.perf_counter()
            data = caller.handle({"toolName": "t", "options": {
                "deadline": 150, "timeout": 5000, "retries": 3, "retryDelay": 0}})
            elapsed_ms = (time.perf_counter() - started) * 1000
        finally:
            release.set()
        assert code_of(data) == "TIMEOUT"
        assert data["metadata"]["duration"] <= 150 + LATE_MS
        assert elapsed_ms <= 150 + LATE_MS
