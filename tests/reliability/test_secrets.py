"""Secrets (SPEC rule 8): planted in every channel, found in no envelope, record, log or frame.

Each secret is a plain string (not token-shaped), so only the mechanism under test can mask
it: a secret-looking name, a `writeOnly` or `format: password` schema field, a `${VAR}`
read by an adapter, an MCP server's environment. One token-shaped string checks the
pattern-based masking. Results of successful calls are the tool's output and are not
redacted (see SECURITY.md); every call here fails.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.conftest import (
    MCP_SERVER,
    SCRIPT,
    FaultServer,
    free_port,
)
from toolcaller import ToolCaller

SECRETS = {
    "param": "pw-PARAM-4f9a2c71e0",
    "nested_api_key": "ak-APIKEY-93be10d7c2",
    "write_only": "wo-WRITEONLY-5d2e8a11",
    "format_password": "fp-FMTPW-77c1e0a9b3",
    "header_var": "hd-HEADER-1a2b3c4d5e",
    "bearer_var": "br-BEARER-6f7e8d9c0b",
    "query_var": "qy-QUERY-2468ace0bd",
    "url_var": "ur-URL-13579bdf02",
    "script_env_var": "se-SCRIPTENV-0a1b2c3d",
    "script_env_literal": "sl-LITERAL-9f8e7d6c",
    "exception": "ex-EXC-5a6b7c8d9e",
    "mcp_env_var": "mc-MCP-1f2e3d4c5b",
    "mcp_start_stderr": "ms-MCPSTART-8b7a6c5d",
    "token_shaped": "ghp_" + "Zq7" * 12,
}
ENV = {
    "TC_REL_HEADER": SECRETS["header_var"],
    "TC_REL_BEARER": SECRETS["bearer_var"],
    "TC_REL_QUERY": SECRETS["query_var"],
    "TC_REL_URL": SECRETS["url_var"],
    "TC_REL_SCRIPT": SECRETS["script_env_var"],
    "TC_REL_MCP": SECRETS["mcp_env_var"],
    "TC_REL_MCP_START": SECRETS["mcp_start_stderr"],
}
SCHEMA = {
    "type": "object",
    "properties": {
        "password": {"type": "string"},
        "pin_code": {"type": "string", "writeOnly": True},
        "unlock": {"type": "string", "format": "password"},
        "config": {"type": "object"},
        "note": {"type": "string"},
    },
}
STRICT_SCHEMA = {"type": "object", "properties": {
    "password": {"type": "integer"},
    "pin_code": {"type": "integer", "writeOnly": True},
    "unlock": {"type": "integer", "format": "password"},
    "config": {"type": "object", "properties": {"api_key": {"type": "integer"}}},
}}
ALL_PARAMS = {"password": SECRETS["param"], "pin_code": SECRETS["write_only"],
              "unlock": SECRETS["format_password"],
              "config": {"api_key": SECRETS["nested_api_key"]}}
START_FAILS = ("import os, sys; print('cannot start, token', os.environ['API_TOKEN'], "
               "file=sys.stderr); sys.exit(1)")


@pytest.fixture(scope="module")
def environ() -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ENV}
    os.environ.update(ENV)
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def registry(server: FaultServer) -> dict[str, Any]:
    """Every channel as a registry entry."""
    http = {"headers": {"X-Trace-Context": "${TC_REL_HEADER}",
                        "Authorization": "Bearer ${TC_REL_BEARER}"},
            "query": {"q": "${TC_REL_QUERY}"}}
    return {
        "tools": [
            {"name": "http.echo500", "description": "echoes the request in a 500",
             "paramsSchema": SCHEMA,
             "http": {"method": "POST", "url": server.url + "/echo500/${TC_REL_URL}", **http}},
            {"name": "http.refused", "description": "nobody listens",
             "http": {"url": f"http://127.0.0.1:{free_port()}/" + "${TC_REL_URL}", **http}},
            {"name": "script.stderr", "description": "prints secrets to stderr",
             "paramsSchema": SCHEMA,
             "script": {"command": [sys.executable, str(SCRIPT)],
                        "env": {"TC_SECRET_ENV": "${TC_REL_SCRIPT}",
                                "SERVICE_API_KEY": SECRETS["script_env_literal"]}}},
            {"name": "py.leak", "description": "raises with the password",
             "python": "tests.reliability.tools_faulty:leak_secret", "paramsSchema": SCHEMA},
            {"name": "py.leak.process", "description": "the same in a child",
             "python": "tests.reliability.tools_faulty:leak_secret", "paramsSchema": SCHEMA,
             "isolation": "process"},
            {"name": "py.aleak", "description": "async",
             "python": "tests.reliability.tools_faulty:aleak_secret", "paramsSchema": SCHEMA},
            {"name": "py.echo_fail", "description": "raises with every param",
             "python": "tests.reliability.tools_faulty:echo_fail", "paramsSchema": SCHEMA},
            {"name": "py.strict", "description": "rejects every secret",
             "python": "tests.reliability.tools_faulty:echo_fail",
             "paramsSchema": STRICT_SCHEMA},
        ],
        "mcpServers": {
            "f": {"command": sys.executable, "args": [str(MCP_SERVER)],
                  "env": {"FAULTY_TOKEN": "${TC_REL_MCP}"}},
            "broken": {"command": sys.executable, "args": ["-c", START_FAILS],
                       "env": {"API_TOKEN": "${TC_REL_MCP_START}"}},
        },
    }


# name, params, options
CALLS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("py.leak", {"password": SECRETS["exception"]}, {"retries": 1}),
    ("py.leak.process", {"password": SECRETS["exception"]}, {"retries": 1}),
    ("py.aleak", {"password": SECRETS["exception"]}, {"retries": 1}),
    ("py.echo_fail", {**ALL_PARAMS, "note": f"see {SECRETS['token_shaped']}"}, {"retries": 1}),
    ("py.strict", ALL_PARAMS, {}),
    ("http.echo500", {**ALL_PARAMS}, {"retries": 1}),
    ("http.refused", {}, {"retries": 1}),
    ("script.stderr", {"mode": "stderr_secret", "password": SECRETS["param"],
                       "names": ["TC_SECRET_ENV", "SERVICE_API_KEY"]}, {"retries": 1}),
    ("f.leak", {"text": "x"}, {"retries": 1}),
    ("broken.anything", {"password": SECRETS["param"]}, {}),
    ("no.such.tool", {"password": SECRETS["param"]}, {}),
    ("py.leak", {"password": SECRETS["param"]}, {"timeout": -1}),
]


@pytest.fixture(scope="module")
def leaked(environ: None, fault_server: FaultServer,
           tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Make every call through `call`, `handle` and `ahandle`, and collect every output."""
    pytest.importorskip("mcp")
    path = tmp_path_factory.mktemp("secrets") / "tools.json"
    path.write_text(json.dumps(registry(fault_server)))
    caller = ToolCaller.from_file(path)
    handler = _Capture()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    logging.getLogger("toolcaller").setLevel(logging.DEBUG)
    outputs: dict[str, Any] = {"envelopes": []}
    try:
        for name, params, options in CALLS:
            options = {"retryDelay": 0, **options}
            outputs["envelopes"].append(caller.call(name, params, options).to_dict())
            outputs["envelopes"].append(caller.handle(
                {"toolName": name, "params": params, "options": options}))
            outputs["envelopes"].append(asyncio.run(caller.ahandle(
                {"toolName": name, "params": params, "options": options})))
        outputs["envelopes"].append(caller.handle({"action": "discover"}))
        outputs["records"] = [r.to_dict() for r in caller.history.records()]
        jsonl = io.StringIO()
        caller.history.to_jsonl(jsonl)
        outputs["jsonl"] = jsonl.getvalue()
        frame, attempts = caller.history.frame(), caller.history.attempts_frame()
        outputs["frames"] = [frame.to_string(), frame.to_json(date_format="iso"),
                             attempts.to_string(),
                             attempts.to_json(), frame.to_csv(), attempts.to_csv()]
    finally:
        caller.close()
        root.removeHandler(handler)
        root.setLevel(old_level)
    outputs["logs"] = handler.text()
    return outputs


class _Capture(logging.Handler):
    """Keeps every record, formatted with its arguments and any traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    def text(self) -> str:
        return "\n".join(self.lines)


def found_in(text: str) -> list[str]:
    return sorted(name for name, secret in SECRETS.items() if secret in text)


class TestNoSecretLeaves:
    def test_the_calls_failed_and_saw_the_secrets(self, leaked: dict[str, Any]) -> None:
        """Every call failed (so its message and details are what is checked)."""
        calls = leaked["envelopes"][:-1]
        assert len(calls) == 3 * len(CALLS)
        assert all(envelope["success"] is False for envelope in calls)

    @pytest.mark.parametrize("index", range(len(CALLS)), ids=[c[0] for c in CALLS])
    def test_envelopes(self, leaked: dict[str, Any], index: int) -> None:
        """No secret in any envelope (call, handle and ahandle), details and trail included."""
        for envelope in leaked["envelopes"][3 * index: 3 * index + 3]:
            assert found_in(json.dumps(envelope)) == [], envelope

    def test_discovery(self, leaked: dict[str, Any]) -> None:
        """The discovery envelope (a server that failed to start, its stderr) holds none."""
        discovery = leaked["envelopes"][-1]
        assert discovery["result"]["problems"]  # the broken server is reported
        assert found_in(json.dumps(discovery)) == []

    def test_history_records(self, leaked: dict[str, Any]) -> None:
        """No secret in `records()` (params, messages, attempts)."""
        assert found_in(json.dumps(leaked["records"])) == []

    def test_jsonl(self, leaked: dict[str, Any]) -> None:
        assert found_in(leaked["jsonl"]) == []

    def test_frames(self, leaked: dict[str, Any]) -> None:
        """No secret in `frame()` or `attempts_frame()`, rendered as text, JSON and CSV."""
        for rendered in leaked["frames"]:
            assert found_in(rendered) == []

    def test_logs(self, leaked: dict[str, Any]) -> None:
        """No secret in any log record, at DEBUG, of toolcaller or anything else."""
        assert found_in(leaked["logs"]) == []


def test_the_plants_are_real(environ: None, fault_server: FaultServer, tmp_path: Path) -> None:
    """Control: the secrets really reach the tools (so their absence above means masking)."""
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(registry(fault_server)))
    caller = ToolCaller.from_file(path)
    try:
        shown = caller.call("script.stderr", {"mode": "env", "name": "TC_SECRET_ENV"})
        assert shown.result == SECRETS["script_env_var"]  # results are not redacted
        echoed = caller.call("f.getenv", {"name": "FAULTY_TOKEN"})
        assert echoed.result == {"result": SECRETS["mcp_env_var"]}
    finally:
        caller.close()

