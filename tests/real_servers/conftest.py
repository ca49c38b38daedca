"""Real counterparts, started and stopped by the tests on 127.0.0.1: MCP servers from PyPI and
npm, httpbin on gunicorn, and registry files that name them, used with default options."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.conftest import httpbin_url  # noqa: F401 - the session's real httpbin
from toolcaller import ToolCaller

ROOT = Path(__file__).resolve().parents[2]
NPM_PREFIX = Path(os.environ.get("TOOLCALLER_NPM_PREFIX", ROOT / ".npm-servers"))
"""Where npm servers are installed: a project-local folder (never committed)."""
EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
EVERYTHING_JS = (NPM_PREFIX / "node_modules" / "@modelcontextprotocol" / "server-everything"
                 / "dist" / "index.js")
REQUIRE_NPM = os.environ.get("TOOLCALLER_REQUIRE_NPM_SERVERS") == "1"
"""Set by .ci/run: a missing npm server is then a failure, not a skip."""
SLOW_START = Path(__file__).with_name("slow_start.py")


def write_registry(folder: Path, data: dict[str, Any], name: str = "tools.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def everything_js() -> Path:
    """The server-everything entry point, installed from npm on first use (or skip/fail)."""
    if EVERYTHING_JS.is_file():
        return EVERYTHING_JS
    npm, node = shutil.which("npm"), shutil.which("node")
    why = ""
    if npm is None or node is None:
        why = "node and npm are not installed"
    else:
        done = subprocess.run(
            [npm, "install", "--prefix", str(NPM_PREFIX), "--no-audit", "--no-fund",
             "--loglevel=error", EVERYTHING],
            capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0 or not EVERYTHING_JS.is_file():
            why = f"npm could not install {EVERYTHING}: {done.stderr.strip()[-300:]}"
    if why:
        if REQUIRE_NPM:
            pytest.fail(why)
        pytest.skip(why)
    return EVERYTHING_JS


@pytest.fixture(scope="session")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository with one commit and one untracked file."""
    repo = tmp_path_factory.mktemp("repo")
    env = {**os.environ, "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
           "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.name", "Ada")
    git("config", "user.email", "ada@example.com")
    (repo / "README.md").write_text("hello\n")
    git("add", "README.md")
    git("commit", "-q", "-m", "first")
    (repo / "notes.txt").write_text("draft\n")
    return repo


@pytest.fixture(scope="module")
def servers_registry(tmp_path_factory: pytest.TempPathFactory, git_repo: Path) -> Path:
    """A registry file naming mcp-server-time and mcp-server-git, as users write it."""
    pytest.importorskip("mcp_server_time")
    pytest.importorskip("mcp_server_git")
    folder = tmp_path_factory.mktemp("registry")
    return write_registry(folder, {"mcpServers": {
        "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
        "git": {"command": "mcp-server-git", "args": ["--repository", str(git_repo)],
                "options": {"timeout": 30_000, "deadline": 60_000}},
    }})


@pytest.fixture(scope="module")
def servers(servers_registry: Path) -> Iterator[ToolCaller]:
    """A caller of the registry above, shared by a module (servers start once)."""
    with ToolCaller.from_file(servers_registry) as caller:
        yield caller


def python_command() -> str:
    return sys.executable
