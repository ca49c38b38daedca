"""The embedded demo registry: each tool does what its description says, through `handle`, and
each kind of tool (python, script, http) produces each of the six error codes."""

from __future__ import annotations

import json
import os
import sys
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from toolcaller import ToolCaller
from toolcaller.core.tool import Tool
from toolcaller.demo import DEMO_URL_VAR, demo_tools
from toolcaller.demo.server import demo_url

pytestmark = pytest.mark.integration

CODES = ("TIMEOUT", "RETRY_EXHAUSTED", "TOOL_NOT_FOUND", "INVALID_PARAMS", "EXECUTION_ERROR",
         "PARSE_ERROR")  # fmt: skip
KEY = uuid.uuid4().hex  # flaky-tool counters are per process: keep this run's apart


@dataclass(frozen=True)
class Case:
    """One call of a demo tool and what must come back."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    """The whole result on success (compared when `code` is None and `check` is None)."""
    code: str | None = None
    attempts: int | None = None
    check: Any = None
    """A predicate over the envelope, for results that are not compared whole."""

    @property
    def id(self) -> str:
        return f"{self.name}-{self.code or 'ok'}-{json.dumps(self.params, sort_keys=True)[:40]}"


def _contains(text: str) -> Any:
    return lambda env: isinstance(env["result"], str) and text in env["result"]


NO_RETRY = {"retries": 0}
CASES = [
    # -- python ---------------------------------------------------------------------------
    Case("math.add", {"a": 1, "b": 2.5}, result={"sum": 3.5}),
    Case("math.add", {"a": 1}, code="INVALID_PARAMS", attempts=0),
    Case("math.ad", {"a": 1, "b": 2}, code="TOOL_NOT_FOUND", attempts=0,
         check=lambda env: "math.add" in env["error"]["details"]["suggestions"]),
    Case("math.divide", {"a": 6, "b": 3}, result={"quotient": 2.0}),
    Case("math.divide", {"a": 1, "b": 0}, code="EXECUTION_ERROR", attempts=1),
    Case("text.echo", {"text": "hi", "upper": True, "repeat": 2},
         result={"text": "HI HI", "length": 5}),
    Case("text.wordcount", {"text": "a b\nc"}, result={"words": 3, "lines": 2, "chars": 5}),
    Case("demo.slow", {"seconds": 0.01}, result={"slept": 0.01}),
    Case("demo.slow", {"seconds": 5}, {"timeout": 100, "retries": 0}, code="TIMEOUT",
         attempts=1),
    Case("demo.slow_sync", {"seconds": 0.01}, result={"slept": 0.01}),
    Case("demo.slow_sync", {"seconds": 0.3}, {"timeout": 50, "retries": 0}, code="TIMEOUT"),
    Case("demo.hang", {}, {"timeout": 200}, code="TIMEOUT", attempts=1),
    Case("demo.flaky", {"failures": 2, "key": KEY + "a"}, result={"ok": True, "attempt": 3},
         attempts=3),
    Case("demo.flaky", {"failures": 5, "key": KEY + "b"}, {"retries": 1},
         code="RETRY_EXHAUSTED", attempts=2),
    Case("demo.reset_flaky", {"key": KEY + "a"}, result={"reset": True}),
    Case("demo.fail", {"message": "nope"}, NO_RETRY, code="EXECUTION_ERROR", attempts=1,
         check=lambda env: "nope" in env["error"]["message"]),
    Case("demo.fail", {}, {"retries": 2}, code="RETRY_EXHAUSTED", attempts=3),
    Case("demo.not_found", {"item": "x"}, {"retries": 3}, code="EXECUTION_ERROR", attempts=1),
    Case("demo.not_json", {}, {"retries": 2}, code="PARSE_ERROR", attempts=1),
    Case("demo.not_json", {}, {"format": "raw"}, check=_contains("not JSON")),
    Case("demo.nan", {}, code="PARSE_ERROR", attempts=1),
    Case("demo.login", {"username": "ann", "password": "open sesame"},
         result={"user": "ann", "session": "demo-session"}),
    Case("demo.login", {"username": "ann", "password": "hunter2-wrong"}, code="EXECUTION_ERROR",
         check=lambda env: "hunter2-wrong" not in json.dumps(env)
         and "***" in env["error"]["message"]),
    Case("data.table", {"rows": 3}, result=[{"id": 0, "square": 0, "even": True},
                                            {"id": 1, "square": 1, "even": False},
                                            {"id": 2, "square": 4, "even": True}]),
    Case("demo.showcase", {"title": "Hi", "color": "red"},
         result={"received": {"title": "Hi", "color": "red"}}),
    Case("demo.showcase", {"title": "lower", "color": "red"}, code="INVALID_PARAMS", attempts=0),
    # -- script ---------------------------------------------------------------------------
    Case("script.wc", {"text": "héllo wörld\nx"},
         result={"lines": 2, "words": 3, "chars": 13, "bytes": 15}),
    Case("script.wc", {}, code="INVALID_PARAMS", attempts=0),
    Case("script.wcc", {"text": "x"}, code="TOOL_NOT_FOUND", attempts=0,
         check=lambda env: "script.wc" in env["error"]["details"]["suggestions"]),
    Case("script.not_json", {"name": "Ann"}, {"retries": 2}, code="PARSE_ERROR", attempts=1),
    Case("script.not_json", {"name": "Ann"}, {"format": "raw"},
         check=_contains("Hello, Ann! This line is plain text")),
    Case("script.fail", {"status": 3, "message": "boom"}, NO_RETRY, code="EXECUTION_ERROR",
         attempts=1,
         check=lambda env: env["error"]["details"] == {"exitStatus": 3, "stderr": "boom\n"}),
    Case("script.fail", {}, {"retries": 1}, code="RETRY_EXHAUSTED", attempts=2),
    Case("script.slow", {"seconds": 0}, result={"slept": 0}),
    Case("script.slow", {"seconds": 5}, {"timeout": 300, "retries": 0}, code="TIMEOUT",
         attempts=1),
    # -- http -----------------------------------------------------------------------------
    Case("http.echo", {"text": "a b", "count": 3, "tags": ["x", "y"]},
         result={"text": "a b", "count": "3", "tags": ["x", "y"]}),
    Case("http.echo", {"text": 1}, code="INVALID_PARAMS", attempts=0),
    Case("http.echoo", {"text": "x"}, code="TOOL_NOT_FOUND", attempts=0,
         check=lambda env: "http.echo" in env["error"]["details"]["suggestions"]),
    Case("http.status", {"code": 200}, result={"status": 200}),
    Case("http.status", {"code": 204}, result=None),
    Case("http.status", {"code": 503}, {"retries": 2}, code="RETRY_EXHAUSTED", attempts=3),
    Case("http.status", {"code": 404}, {"retries": 3}, code="EXECUTION_ERROR", attempts=1,
         check=lambda env: env["error"]["details"]["status"] == 404),
    Case("http.status", {"code": 600}, code="INVALID_PARAMS", attempts=0),
    Case("http.slow", {"seconds": 0.05}, result={"slept": 0.05}),
    Case("http.slow", {"seconds": 3}, {"timeout": 200, "retries": 0}, code="TIMEOUT",
         attempts=1),
    Case("http.html", {}, {"retries": 2}, code="PARSE_ERROR", attempts=1),
    Case("http.html", {}, {"format": "raw"}, check=_contains("<h1>Not JSON</h1>")),
]  # fmt: skip


@pytest.fixture(scope="module")
def caller() -> Iterator[ToolCaller]:
    with ToolCaller() as caller:
        yield caller


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_demo_tool_does_what_it_says(caller: ToolCaller, case: Case) -> None:
    """Each case gets its result or its code, with the attempts it says, through `handle`."""
    envelope = caller.handle({"toolName": case.name, "params": case.params,
                              "options": case.options})  # fmt: skip
    assert envelope["success"] is (case.code is None), envelope
    if case.code is not None:
        assert envelope["error"]["code"] == case.code
    elif case.check is None:
        assert envelope["result"] == case.result
    if case.attempts is not None:
        assert envelope["metadata"]["attempts"] == case.attempts
    if case.check is not None:
        assert case.check(envelope), envelope


def test_every_demo_tool_has_a_case(caller: ToolCaller) -> None:
    """No demo tool goes untested, and every one of them has at least one success or failure."""
    names = {t.name for t in caller.registry.static_tools()}
    assert names - {c.name for c in CASES} == set()


def test_every_kind_produces_every_code(caller: ToolCaller) -> None:
    """Python, script and HTTP demo tools each produce all six codes (TOOL_NOT_FOUND by a
    misspelled name in the kind's namespace)."""
    kinds = {t.name: t.kind for t in caller.registry.static_tools()}
    produced: dict[str, set[str]] = {"python": set(), "script": set(), "http": set()}
    kind: str
    for case in CASES:
        kind = kinds.get(case.name) or kinds[{"math.ad": "math.add", "script.wcc": "script.wc",
                                              "http.echoo": "http.echo"}[case.name]]
        produced[kind].add(case.code or "ok")
    for kind, codes in produced.items():
        assert set(CODES) | {"ok"} <= codes, (kind, set(CODES) - codes)


def test_demo_descriptions_tags_and_schemas(caller: ToolCaller) -> None:
    """Script and HTTP demo tools carry their kind's tag, a sentence, and a closed schema."""
    for tool in caller.registry.static_tools():
        if tool.kind in ("script", "http"):
            assert {tool.kind, "demo"} <= set(tool.tags), tool.name
            assert tool.description.endswith("."), tool.name
            assert len(tool.description) > 40, tool.name
            assert isinstance(tool.params_schema, dict)
            assert tool.params_schema.get("additionalProperties") is False, tool.name


class TestDemoServer:
    def test_one_server_per_process(self, caller: ToolCaller) -> None:
        """Every demo registry in a process points at the one server `demo_url()` started."""
        url = demo_url()
        assert url.startswith("http://127.0.0.1:")
        assert demo_url() == url
        other = ToolCaller()
        for registry in (caller.registry, other.registry):
            http = [t for t in registry.static_tools() if t.kind == "http"]
            assert http
            assert all(t.target["url"].startswith(url + "/") for t in http)
        other.close()
        assert httpx.get(f"{url}/headers", headers={"X-Demo": "1"}).json()["headers"]["X-Demo"]
        assert httpx.get(f"{url}/nowhere").status_code == 404

    def test_a_user_server_is_read_from_the_environment(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With TOOLCALLER_DEMO_URL set, the URL keeps `${VAR}` and the call reads it then."""
        monkeypatch.setenv(DEMO_URL_VAR, demo_url())
        with ToolCaller() as caller:
            tool = caller.registry.get("http.echo")
            assert tool is not None
            assert tool.target["url"] == "${TOOLCALLER_DEMO_URL}/echo"
            assert caller.call("http.echo", {"text": "env"}).result == {"text": "env"}

    def test_discovery_survives_a_server_that_cannot_start(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """No loopback socket: the demo still loads, and an HTTP call names the variable."""

        def refuse() -> str:
            raise OSError("no loopback here")

        monkeypatch.delenv(DEMO_URL_VAR, raising=False)
        monkeypatch.setattr("toolcaller.demo.server.demo_url", refuse)
        with ToolCaller(tools=demo_tools()) as caller:
            assert len(caller.discover("tag:http").result["tools"]) == 4
            envelope = caller.handle({"toolName": "http.echo", "params": {"text": "x"}})
        assert envelope["error"]["code"] == "EXECUTION_ERROR"
        assert DEMO_URL_VAR in envelope["error"]["message"]
        assert envelope["metadata"]["attempts"] == 1

    def test_a_forked_child_starts_its_own(self) -> None:
        """After a fork the child's `demo_url()` is a new server of its own, that answers."""
        parent = demo_url()
        read, write = os.pipe()
        with warnings.catch_warnings():  # 3.12+ warns about forking a process with threads
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: report and leave without running pytest's cleanup
            try:
                url = demo_url()
                ok = httpx.get(f"{url}/echo?a=1", trust_env=False).json() == {"a": "1"}
                os.write(write, json.dumps([url, ok]).encode())
            finally:
                os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            url, ok = json.loads(pipe.read() or '["", false]')
        os.waitpid(pid, 0)
        assert ok
        assert url != parent


@pytest.mark.parametrize(
    "program",
    ["python", "python3", "python{}.{}".format(*sys.version_info[:2])],
)
def test_python_in_a_script_command_is_the_callers_interpreter(program: str) -> None:
    """`python`, `python3` and `python3.N` (this version) run `sys.executable`, not PATH's."""
    code = "import json, sys; print(json.dumps(sys.executable))"
    tool = Tool(name="py.where", description="where", params_schema={"type": "object"},
                kind="script", target={"command": [program, "-c", code]})  # fmt: skip
    with ToolCaller(tools=[tool]) as caller:
        assert caller.call("py.where").result == sys.executable
