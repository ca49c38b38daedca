"""@modelcontextprotocol/server-everything from npm: every tool with default options.

Skipped with the reason where node or npm is missing (or the package cannot be installed);
.ci/run installs it into a project-local folder and makes it required.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.real_servers.conftest import everything_js, write_registry
from toolcaller import ToolCaller

pytestmark = [pytest.mark.integration, pytest.mark.mcp]

CALLS: dict[str, dict[str, Any]] = {
    "echo": {"message": "hello"},
    "get-annotated-message": {"messageType": "success", "includeImage": True},
    "get-env": {},
    "get-resource-links": {},
    "get-resource-reference": {},
    "get-structured-content": {"location": "Chicago"},
    "get-sum": {"a": 1, "b": 2},
    "get-tiny-image": {},
    "gzip-file-as-resource": {"data": "data:text/plain;base64,aGVsbG8gd29ybGQ=",
                              "outputType": "resource"},
    "toggle-simulated-logging": {},
    "toggle-subscriber-updates": {},
    "trigger-long-running-operation": {"duration": 1, "steps": 4},
    "simulate-research-query": {"topic": "python"},
}


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolCaller]:
    node = shutil.which("node") or pytest.skip("node is not installed")
    script = everything_js()
    folder = tmp_path_factory.mktemp("everything")
    registry = write_registry(folder, {
        "mcpServers": {"everything": {"command": node, "args": [str(script)]},
                       "picked": {"command": node, "args": [str(script)]}},
        # an entry picking one tool (its server is then not listed whole)
        "tools": [{"name": "loose_sum", "description": "get-sum without our schema check",
                   "paramsSchema": {"type": "object"},
                   "mcp": {"server": "picked", "tool": "get-sum"}}],
    })
    with ToolCaller.from_file(registry) as caller:
        yield caller


@pytest.fixture(scope="module")
def envelopes(everything: ToolCaller) -> dict[str, dict[str, Any]]:
    tools = everything.discover("tag:everything").result["tools"]
    return {t["name"].split(".", 1)[1]: everything.handle(
        {"toolName": t["name"], "params": CALLS.get(t["name"].split(".", 1)[1], {})})
        for t in tools}


def test_every_tool_is_listed_and_called(envelopes: dict[str, dict[str, Any]]) -> None:
    """The 13 tools a plain client sees are all called once."""
    assert set(envelopes) == set(CALLS)


def test_no_tool_that_worked_is_a_parse_error(envelopes: dict[str, dict[str, Any]]) -> None:
    """Every tool but the task-only one succeeds; prose answers are strings."""
    failed = {n: e["error"]["code"] for n, e in envelopes.items() if not e["success"]}
    assert failed == {"simulate-research-query": "EXECUTION_ERROR"}
    for name in ("echo", "get-sum", "toggle-subscriber-updates",
                 "trigger-long-running-operation"):
        assert isinstance(envelopes[name]["result"], str), name
    assert envelopes["get-sum"]["result"] == "The sum of 1 and 2 is 3."


def test_shapes_follow_what_the_server_promised(envelopes: dict[str, dict[str, Any]]) -> None:
    """structuredContent is data; several blocks (images, resources) are the block list."""
    assert envelopes["get-structured-content"]["result"]["conditions"]
    blocks = envelopes["get-tiny-image"]["result"]
    assert [b["type"] for b in blocks] == ["text", "image", "text"]
    assert blocks[1]["mimeType"] == "image/png"
    assert isinstance(envelopes["get-env"]["result"], str)  # JSON-looking, but not promised


def test_progress_notifications_are_kept_with_the_attempt(
        envelopes: dict[str, dict[str, Any]]) -> None:
    """The long-running operation's progress notifications are in the attempt's notes."""
    notes = envelopes["trigger-long-running-operation"]["metadata"]["trail"][0]["notes"]
    assert [(n["kind"], n["progress"], n["total"]) for n in notes] == [
        ("progress", float(i), 4.0) for i in range(1, 5)]


def test_log_messages_are_kept_with_the_attempt(envelopes: dict[str, dict[str, Any]]) -> None:
    """A log message the server sends during a call is a note of that call."""
    notes = envelopes["toggle-simulated-logging"]["metadata"]["trail"][0].get("notes", [])
    assert any(n["kind"] == "log" for n in notes)


def test_a_task_only_tool_is_flagged_and_says_why(everything: ToolCaller,
                                                  envelopes: dict[str, dict[str, Any]]) -> None:
    """A taskSupport 'required' tool is a discovery problem; calling it says why it fails."""
    problems = everything.discover("name:everything.simulate*").result["problems"]
    assert problems[0]["tool"] == "everything.simulate-research-query"
    message = envelopes["simulate-research-query"]["error"]["message"]
    assert "task" in message
    assert envelopes["simulate-research-query"]["metadata"]["attempts"] == 0


def test_servers_own_params_check_is_invalid_params(everything: ToolCaller) -> None:
    """The server's -32602 (its own input validation) is INVALID_PARAMS, not retried."""
    envelope = everything.handle({"toolName": "loose_sum", "params": {"a": "x", "b": 2}})
    assert envelope["error"]["code"] == "INVALID_PARAMS"
    assert envelope["metadata"]["attempts"] == 1
    assert envelope["error"]["details"]["mcpCode"] == -32602


def test_raw_gives_the_content_blocks(everything: ToolCaller) -> None:
    """With format raw an MCP tool's result is its content blocks, as sent."""
    envelope = everything.handle({"toolName": "everything.echo", "params": {"message": "hi"},
                                  "options": {"format": "raw"}})
    assert envelope["result"] == [{"type": "text", "text": "Echo: hi"}]


def test_the_script_is_outside_the_repository_tree() -> None:
    """node_modules lives in a project-local, ignored folder (never committed)."""
    script = everything_js()
    ignored = (Path(__file__).resolve().parents[2] / ".gitignore").read_text()
    assert ".npm-servers/" in ignored or not str(script).startswith(
        str(Path(__file__).resolve().parents[2]))
