"""The MCP Inspector's command-line mode (npm) lists and calls the served demo registry.

Which Inspector: `$TOOLCALLER_INSPECTOR` (the path of an `mcp-inspector` binary), else the
one `.ci/run` installs (`.venv-ci/inspector`), else `npx -y @modelcontextprotocol/inspector@2.12.0`
(2.12.0 on purpose: on Node 20 an unpinned install resolves to 0.15.0, see `.ci/run`).
Without npx the tests skip, unless `TOOLCALLER_REQUIRE_INSPECTOR=1` (CI) makes that a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any

import pytest

from tests.serve.conftest import ROOT, http_server, serve_argv
from toolcaller import ToolCaller

pytestmark = [pytest.mark.integration, pytest.mark.mcp, pytest.mark.slow]

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
CI_INSTALL = ROOT / ".venv-ci" / "inspector" / "node_modules" / ".bin" / "mcp-inspector"
SERVER = [sys.executable, "-m", "toolcaller", "serve"]


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    """The Inspector's command line, or a skip saying why there is none."""
    given = os.environ.get("TOOLCALLER_INSPECTOR")
    if given:
        return [given]
    if CI_INSTALL.exists():
        return [str(CI_INSTALL)]
    if shutil.which("npx") and shutil.which("node"):
        return ["npx", "-y", INSPECTOR]
    reason = "npx is missing: the MCP Inspector CLI comes from npm"
    if os.environ.get("TOOLCALLER_REQUIRE_INSPECTOR") == "1":
        pytest.fail(f"{reason} (TOOLCALLER_REQUIRE_INSPECTOR=1)")
    pytest.skip(reason)


def _inspect(inspector: list[str], *args: str) -> tuple[int, Any, str]:
    done = subprocess.run([*inspector, "--cli", "--format", "json", "-q", *args],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    output = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, output, done.stderr


def _stdio(*args: str) -> list[str]:
    return ["-e", f"PYTHONPATH={ROOT}", *SERVER, *args]


def test_the_inspector_lists_the_demo_tools_with_their_schemas(inspector):
    """tools/list through the Inspector: every demo tool, its discovery schema."""
    code, output, errors = _inspect(inspector, *_stdio(), "--method", "tools/list")
    assert code == 0, errors
    with ToolCaller() as caller:
        found = {t["name"]: t["paramsSchema"] for t in caller.discover().result["tools"]}
    assert {t["name"]: t["inputSchema"] for t in output["result"]["tools"]} == found


@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_the_inspector_calls_a_tool(inspector, era):
    """A call's result comes back structured, in both protocol eras."""
    code, output, errors = _inspect(
        inspector, "--protocol-era", era, *_stdio(), "--method", "tools/call",
        "--tool-name", "math.add", "--tool-args-json", '{"a": 1.5, "b": 2}')
    assert code == 0, errors
    assert output["result"]["structuredContent"] == {"sum": 3.5}
    assert output["result"]["_meta"]["toolcaller/call"]["attempts"] == 1


def test_the_inspector_sees_a_failure_as_a_tool_error(inspector):
    """A failing tool is isError with its code first (the Inspector exits 5: tool error)."""
    code, output, errors = _inspect(
        inspector, *_stdio(), "--method", "tools/call", "--tool-name", "math.divide",
        "--tool-args-json", '{"a": 1, "b": 0}')
    assert code == 5, errors
    assert output["result"]["isError"] is True
    assert output["result"]["content"][0]["text"].startswith("EXECUTION_ERROR: ")


def test_the_inspector_calls_over_http_with_the_token(inspector, tmp_path):
    """Over streamable HTTP the Inspector needs the header; with it, the call succeeds."""
    with http_server(serve_argv("--transport", "http", "--print-config"),
                     tmp_path / "server.log") as server:
        call = ["--method", "tools/call", "--tool-name", "math.add",
                "--tool-args-json", '{"a": 2, "b": 5}', "--transport", "http"]
        refused, _, _ = _inspect(inspector, "--server-url", server.url, *call)
        code, output, errors = _inspect(
            inspector, "--server-url", server.url,
            "--header", f"Authorization: Bearer {server.token}", *call)
    assert refused != 0
    assert code == 0, errors
    assert output["result"]["structuredContent"] == {"sum": 7}
