"""The seed's acceptance cases TC-01..TC-10, through `handle()` and through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.helpers import check_envelope, code_of
from toolcaller import ToolCaller

Request = dict[str, Any]


def _tc01() -> Request:
    return {"action": "discover"}


def _tc02() -> Request:
    return {"action": "discover", "options": {"filter": "math"}}


def _tc03() -> Request:
    return {"toolName": "math.add", "params": {"a": 1, "b": 2}}


def _tc04() -> Request:
    return {"toolName": "demo.slow", "params": {"seconds": 10},
            "options": {"timeout": 100, "retries": 1, "retryDelay": 50}}


def _tc05() -> Request:
    return {"toolName": "demo.fail", "options": {"retries": 2, "retryDelay": 10}}


def _tc06() -> Request:
    return {"toolName": "no.such.tool", "params": {}}


def _tc07() -> Request:
    return {"toolName": "math.add", "params": {"a": "one"}}


def _tc08() -> Request:
    return {"toolName": "math.divide", "params": {"a": 1, "b": 0}}


def _tc09() -> Request:
    return {"toolName": "demo.not_json", "options": {"format": "json"}}


def _tc10() -> Request:
    return {"toolName": "demo.flaky",
            "params": {"failures": 1, "key": f"tc10-{uuid.uuid4().hex}"},
            "options": {"retries": 1, "retryDelay": 50}}


def _check01(env: dict[str, Any]) -> None:
    assert env["success"] is True
    tools = env["result"]["tools"]
    assert isinstance(tools, list)
    assert tools
    for item in tools:
        assert {"name", "description", "paramsSchema", "metadata"} <= set(item)
        assert isinstance(item["name"], str)
        assert isinstance(item["description"], str)
        assert isinstance(item["paramsSchema"], dict | bool)
        assert isinstance(item["metadata"], dict)


def _check02(env: dict[str, Any]) -> None:
    assert env["success"] is True
    names = {t["name"] for t in env["result"]["tools"]}
    assert names == {"math.add", "math.divide"}
    for item in env["result"]["tools"]:
        text = " ".join([item["name"], item["description"], *item["metadata"].get("tags", [])])
        assert "math" in text.lower()


def _check03(env: dict[str, Any]) -> None:
    assert env["success"] is True
    assert env["result"] == {"sum": 3}
    assert env["metadata"]["duration"] < 5000
    assert env["metadata"]["attempts"] == 1


def _check04(env: dict[str, Any]) -> None:
    assert code_of(env) == "TIMEOUT"
    assert env["metadata"]["attempts"] == 2


def _check05(env: dict[str, Any]) -> None:
    assert code_of(env) in {"RETRY_EXHAUSTED", "EXECUTION_ERROR"}
    assert code_of(env) == "RETRY_EXHAUSTED"
    assert env["metadata"]["attempts"] == 3


def _check06(env: dict[str, Any]) -> None:
    assert code_of(env) == "TOOL_NOT_FOUND"
    assert env["metadata"]["attempts"] == 0


def _check07(env: dict[str, Any]) -> None:
    assert code_of(env) == "INVALID_PARAMS"
    assert env["metadata"]["attempts"] == 0


def _check08(env: dict[str, Any]) -> None:
    assert code_of(env) == "EXECUTION_ERROR"
    message = env["error"]["message"]
    assert "division by zero" in message
    assert "Traceback" not in message
    assert "\n" not in message


def _check09(env: dict[str, Any]) -> None:
    assert code_of(env) == "PARSE_ERROR"
    assert env["metadata"]["attempts"] == 1


def _check10(env: dict[str, Any]) -> None:
    assert env["success"] is True
    assert env["metadata"]["attempts"] == 2
    assert env["metadata"]["duration"] < 5000


CASES: list[tuple[str, Callable[[], Request], Callable[[dict[str, Any]], None]]] = [
    ("TC-01", _tc01, _check01),
    ("TC-02", _tc02, _check02),
    ("TC-03", _tc03, _check03),
    ("TC-04", _tc04, _check04),
    ("TC-05", _tc05, _check05),
    ("TC-06", _tc06, _check06),
    ("TC-07", _tc07, _check07),
    ("TC-08", _tc08, _check08),
    ("TC-09", _tc09, _check09),
    ("TC-10", _tc10, _check10),
]
IDS = [case[0] for case in CASES]
FAILING = {"TC-04", "TC-05", "TC-06", "TC-07", "TC-08", "TC-09"}


@pytest.fixture
def caller() -> Iterator[ToolCaller]:
    made = ToolCaller()
    yield made
    made.close()


class TestAcceptanceThroughHandle:
    @pytest.mark.parametrize(("tc_id", "request_for", "check"), CASES, ids=IDS)
    def test_case(self, caller: ToolCaller, tc_id: str,
                  request_for: Callable[[], Request],
                  check: Callable[[dict[str, Any]], None]) -> None:
        """Each acceptance case gives the envelope the seed expects through handle()."""
        started = time.perf_counter()
        envelope = check_envelope(caller.handle(request_for()))
        elapsed = time.perf_counter() - started
        check(envelope)
        assert envelope["success"] is (tc_id not in FAILING)
        assert elapsed < 5.0

    def test_tc10_end_to_end_under_five_seconds(self, caller: ToolCaller) -> None:
        """A call that needs one retry answers, end to end, in under 5 s."""
        started = time.perf_counter()
        envelope = caller.handle(_tc10())
        elapsed = time.perf_counter() - started
        assert envelope["success"] is True
        assert envelope["metadata"]["attempts"] == 2
        assert elapsed < 5.0
        assert envelope["metadata"]["duration"] <= elapsed * 1000 + 1

    @pytest.mark.slow
    def test_tc04_with_the_seed_defaults(self, caller: ToolCaller) -> None:
        """With only `timeout: 100`, the defaults (3 retries, 1 s apart) give 4 attempts in 5 s."""
        envelope = caller.handle({"toolName": "demo.slow", "params": {"seconds": 10},
                                  "options": {"timeout": 100}})
        assert code_of(envelope) == "TIMEOUT"
        assert envelope["metadata"]["attempts"] == 4
        assert envelope["metadata"]["duration"] < 5000


def _cli(request: Request) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolcaller", "handle"],
        input=json.dumps(request), capture_output=True, text=True, timeout=30, check=False,
    )


@pytest.mark.integration
class TestAcceptanceThroughCli:
    @pytest.mark.parametrize(("tc_id", "request_for", "check"), CASES, ids=IDS)
    def test_case(self, tc_id: str, request_for: Callable[[], Request],
                  check: Callable[[dict[str, Any]], None]) -> None:
        """Each acceptance case gives the same envelope on stdout of `toolcaller handle`."""
        done = _cli(request_for())
        lines = done.stdout.splitlines()
        assert len(lines) == 1, done.stdout
        envelope = check_envelope(json.loads(lines[0]))
        check(envelope)
        assert done.returncode == (1 if tc_id in FAILING else 0)
        assert "Traceback" not in done.stderr

    def test_tc10_end_to_end_under_five_seconds(self) -> None:
        """Through the CLI, a call with one retry answers in under 5 s, process start included."""
        started = time.perf_counter()
        done = _cli(_tc10())
        elapsed = time.perf_counter() - started
        envelope = json.loads(done.stdout)
        assert done.returncode == 0
        assert envelope["success"] is True
        assert envelope["metadata"]["attempts"] == 2
        assert envelope["metadata"]["duration"] < 5000
        assert elapsed < 5.0
