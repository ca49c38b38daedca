"""Defects found by using the engine as users do (issue 11), each through the public API."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import LATE_MS
from toolcaller import ExecutionError, Tool, ToolCaller, tool

ROOT = Path(__file__).resolve().parents[2]


class TestDefaultOptions:
    @pytest.mark.slow
    def test_an_async_tool_slower_than_the_deadline_gets_one_timed_attempt(self) -> None:
        """`call()` with no options: TIMEOUT with attempts 1 and its trail, by the deadline.

        It used to answer `attempts: 0`, an empty trail and "a tool is blocking the caller's
        event loop" for every well-behaved async tool slower than 5 s (every MCP tool).
        """
        async def slow() -> str:
            await asyncio.sleep(8)
            return "late"

        with ToolCaller(tools=[tool(slow)]) as caller:
            envelope = caller.call("slow")
        assert envelope.code == "TIMEOUT"
        assert envelope.metadata.attempts == 1
        assert [a.code for a in envelope.metadata.trail] == ["TIMEOUT"]
        assert "blocking" not in envelope.error.message  # type: ignore[union-attr]
        assert 5000 <= envelope.metadata.duration <= 5000 + LATE_MS


class TestBurst:
    async def test_a_burst_does_not_time_out_trivial_calls(self) -> None:
        """1,000 concurrent `acall`s, `timeout=50`: no trivial sync call ends TIMEOUT.

        600 `add`s among failing, async-sleeping and unknown tools used to end TIMEOUT, all of
        them, every round: the timer counted the wait for the loop and for a worker thread.
        """
        def add(a: int, b: int) -> int:
            return a + b

        def fails() -> None:
            raise RuntimeError("boom")

        async def naps() -> str:
            await asyncio.sleep(0.01)
            return "rested"

        with ToolCaller(tools=[tool(add), tool(fails), tool(naps)]) as caller:
            for _ in range(3):
                calls = ([caller.acall("add", {"a": i, "b": 1}, timeout=50, retries=0)
                          for i in range(600)]
                         + [caller.acall("fails", timeout=50, retries=0) for _ in range(150)]
                         + [caller.acall("naps", timeout=50, retries=0) for _ in range(150)]
                         + [caller.acall("nope", timeout=50, retries=0) for _ in range(100)])
                envelopes = await asyncio.gather(*calls)
                adds = envelopes[:600]
                assert [e.code for e in adds].count("TIMEOUT") == 0
                assert [e.result for e in adds] == [i + 1 for i in range(600)]
                assert {e.code for e in envelopes[600:750]} == {"EXECUTION_ERROR"}
                assert {e.code for e in envelopes[900:]} == {"TOOL_NOT_FOUND"}


SCRIPT = textwrap.dedent("""\
    import json, os
    from toolcaller import ToolCaller
    print("top level runs in", os.getpid(), flush=True)
    caller = ToolCaller()
    first = caller.call("math.add", {"a": 1, "b": 2}, isolation="process", timeout=300)
    second = caller.call("math.add", {"a": 2, "b": 3}, isolation="process")
    print(json.dumps([first.to_dict(), second.to_dict()]), flush=True)
    caller.close()
""")


class TestProcessIsolation:
    @pytest.mark.integration
    def test_a_plain_script_runs_once(self, tmp_path: Path) -> None:
        """A script without a `__main__` guard is not run again by the worker process.

        It used to be re-executed in the worker (its own calls made there, the first call
        failing with RETRY_EXHAUSTED and EOFError tracebacks); the worker's start, slow
        under load, was charged to the tool's timeout.
        """
        (tmp_path / "plain.py").write_text(SCRIPT, encoding="utf-8")
        done = subprocess.run([sys.executable, "plain.py"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert sum(line.startswith("top level runs in") for line in lines) == 1, done.stdout
        first, second = json.loads(lines[-1])
        assert first["success"]
        assert first["result"] == {"sum": 3}, first
        assert second["success"]
        assert second["result"] == {"sum": 5}, second
        assert "EOFError" not in done.stderr
        assert "Traceback" not in done.stderr

    @pytest.mark.integration
    def test_a_tool_defined_in_main_is_refused_clearly(self, tmp_path: Path) -> None:
        """A `__main__` function cannot reach a worker that never imports `__main__`: a clear,
        permanent EXECUTION_ERROR instead of a crash."""
        code = textwrap.dedent("""\
            from toolcaller import ToolCaller, tool
            def double(x: int) -> int:
                return 2 * x
            with ToolCaller(tools=[tool(double, isolation="process")]) as caller:
                envelope = caller.call("double", {"x": 2})
            print(envelope.error.code, envelope.metadata.attempts, envelope.error.message)
        """)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("EXECUTION_ERROR 1 ")
        assert "__main__" in done.stdout
        assert "module" in done.stdout


class TestParams:
    def test_an_integral_float_reaches_an_int_param_as_an_int(self) -> None:
        """`2.0` passes JSON Schema's `integer`; the tool gets `2`, not a float it cannot use."""
        def repeat(text: str, times: int) -> str:
            return text * times

        with ToolCaller(tools=[tool(repeat)]) as caller:
            envelope = caller.call("repeat", {"text": "ab", "times": 2.0})
            assert envelope.success, envelope.error
            assert envelope.result == "abab"
            assert caller.call("repeat", {"text": "ab", "times": 2.5}).code == "INVALID_PARAMS"

    def test_nested_integers_too(self) -> None:
        """Integer-typed items and properties deep in the params are ints as well."""
        seen: list[Any] = []

        def take(**params: Any) -> bool:
            seen.append(params)
            return True

        schema = {"type": "object", "properties": {
            "rows": {"type": "array", "items": {"type": "object", "properties": {
                "n": {"type": "integer"}, "x": {"type": "number"}}}}}}
        made = Tool("take", "", schema, "python", take)
        with ToolCaller(tools=[made]) as caller:
            assert caller.call("take", {"rows": [{"n": 3.0, "x": 3.0}]}).success
        assert seen == [{"rows": [{"n": 3, "x": 3.0}]}]
        assert type(seen[0]["rows"][0]["n"]) is int
        assert type(seen[0]["rows"][0]["x"]) is float


class TestBugsAreNotRetried:
    @pytest.mark.parametrize("bug", [TypeError, AttributeError, NameError, ImportError,
                                     NotImplementedError], ids=lambda e: e.__name__)
    def test_a_programming_error_is_permanent(self, bug: type[Exception]) -> None:
        """A tool's bug ends after one attempt (EXECUTION_ERROR, not retryable)."""
        runs: list[int] = []

        def buggy() -> None:
            runs.append(1)
            raise bug("a bug in the tool")

        with ToolCaller(tools=[tool(buggy)]) as caller:
            envelope = caller.call("buggy", retries=3, retryDelay=10)
        assert envelope.code == "EXECUTION_ERROR"
        assert envelope.metadata.attempts == len(runs) == 1
        assert envelope.error.retryable is False  # type: ignore[union-attr]
        assert "not retried" in envelope.error.message  # type: ignore[union-attr]

    def test_a_tool_can_choose_which_errors_are_permanent(self) -> None:
        """`permanent_errors=()` retries even a TypeError; a chosen error is not retried."""
        def flaky_bug() -> None:
            raise TypeError("sometimes")

        def missing() -> None:
            raise KeyError("gone")

        with ToolCaller(tools=[tool(flaky_bug, permanent_errors=()),
                               tool(missing, permanent_errors=(KeyError,))]) as caller:
            retried = caller.call("flaky_bug", retries=2, retryDelay=0)
            kept = caller.call("missing", retries=2, retryDelay=0)
        assert (retried.code, retried.metadata.attempts) == ("RETRY_EXHAUSTED", 3)
        assert (kept.code, kept.metadata.attempts) == ("EXECUTION_ERROR", 1)

    def test_other_failures_are_still_retried(self) -> None:
        """A runtime failure (not a bug) is retried as before."""
        def unlucky() -> None:
            raise ExecutionError("try again")

        with ToolCaller(tools=[tool(unlucky)]) as caller:
            envelope = caller.call("unlucky", retries=2, retryDelay=0)
        assert (envelope.code, envelope.metadata.attempts) == ("RETRY_EXHAUSTED", 3)
