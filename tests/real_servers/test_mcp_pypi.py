"""mcp-server-git (text answers) and mcp-server-time (structured answers) from PyPI, called
from a registry file with default options, as a new user would."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.real_servers.conftest import write_registry
from toolcaller import ToolCaller

pytestmark = [pytest.mark.integration, pytest.mark.mcp]


def git_log(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          check=True).stdout


class TestGitTextAnswers:
    """Every git tool answers prose: a JSON string and a success, never PARSE_ERROR."""

    def test_all_twelve_tools_succeed_with_text(self, servers: ToolCaller,
                                                git_repo: Path) -> None:
        """Status, diffs, add, commit, branch, checkout, show, log, reset: text results."""
        repo = str(git_repo)
        calls: list[tuple[str, dict[str, Any]]] = [
            ("git_status", {}), ("git_diff_unstaged", {}), ("git_add", {"files": ["notes.txt"]}),
            ("git_diff_staged", {}), ("git_commit", {"message": "add notes"}),
            ("git_create_branch", {"branch_name": "feature"}),
            ("git_checkout", {"branch_name": "feature"}), ("git_branch", {"branch_type": "local"}),
            ("git_diff", {"target": "main"}), ("git_log", {"max_count": 5}),
            ("git_show", {"revision": "HEAD"}), ("git_reset", {}),
        ]
        listed = {t["name"] for t in servers.discover("name:git.*").result["tools"]}
        assert listed == {f"git.{name}" for name, _ in calls}
        for name, params in calls:
            envelope = servers.handle({"toolName": f"git.{name}",
                                       "params": {"repo_path": repo, **params}})
            assert envelope["success"], (name, envelope)
            assert isinstance(envelope["result"], str)
        assert "add notes" in git_log(git_repo, "log", "--oneline")  # the commit happened
        assert git_log(git_repo, "branch", "--show-current").strip() == "feature"

    def test_a_refusal_is_an_execution_error(self, servers: ToolCaller, tmp_path: Path) -> None:
        """A path outside the served repository is refused by the server: EXECUTION_ERROR."""
        envelope = servers.handle({"toolName": "git.git_status",
                                   "params": {"repo_path": str(tmp_path)}})
        assert envelope["error"]["code"] == "EXECUTION_ERROR"
        assert envelope["metadata"]["attempts"] == 1


class TestTimeStructuredAnswers:
    def test_structured_content_is_the_result(self, servers: ToolCaller) -> None:
        """A tool with an outputSchema answers structuredContent: the result is that object."""
        envelope = servers.handle({"toolName": "time.get_current_time",
                                   "params": {"timezone": "Europe/Paris"}})
        assert envelope["success"], envelope
        assert envelope["result"]["timezone"] == "Europe/Paris"
        assert set(envelope["result"]) >= {"datetime", "day_of_week", "is_dst"}

    def test_raw_gives_the_content_blocks(self, servers: ToolCaller) -> None:
        """With format raw the result is the server's content blocks."""
        envelope = servers.handle({"toolName": "time.get_current_time",
                                   "params": {"timezone": "UTC"}, "options": {"format": "raw"}})
        assert envelope["result"][0]["type"] == "text"

    def test_a_misspelt_name_suggests_the_listed_tool(self, servers: ToolCaller) -> None:
        """TOOL_NOT_FOUND suggests close names among the MCP tools listed so far."""
        servers.discover("name:time.*")
        envelope = servers.handle({"toolName": "time.get_curent_time",
                                   "params": {"timezone": "UTC"}})
        assert envelope["error"]["code"] == "TOOL_NOT_FOUND"
        assert "time.get_current_time" in envelope["error"]["details"]["suggestions"]

    def test_per_server_options_are_the_tools_defaults(self, servers: ToolCaller) -> None:
        """`options` beside `command` are the defaults of every tool of that server."""
        assert servers.registry.get("git.git_status").options == {
            "timeout": 30_000, "deadline": 60_000}
        assert servers.registry.get("time.get_current_time").options == {}


class TestDiscoveryStartsOnlyWhatItNeeds:
    def test_a_name_filter_starts_only_the_servers_it_can_match(
            self, tmp_path: Path, git_repo: Path) -> None:
        """`discover name:time.*` starts the time server, not the git one."""
        registry = write_registry(tmp_path, {"mcpServers": {
            "time": {"command": "mcp-server-time"},
            "git": {"command": "mcp-server-git", "args": ["--repository", str(git_repo)]}}})
        with ToolCaller.from_file(registry) as caller:
            started = time.monotonic()
            names = [t["name"] for t in caller.discover("name:time.*").result["tools"]]
            assert names == ["time.get_current_time", "time.convert_time"]
            hub = caller._hubs[0]
            assert hub.is_started("time")
            assert not hub.is_started("git")
            assert time.monotonic() - started < 20
