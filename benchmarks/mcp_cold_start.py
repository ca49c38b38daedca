"""Cold start of real MCP servers: the first call of a fresh process, per server.

For each server, in a fresh interpreter (nothing imported or started before), as a user would:
`ToolCaller.from_file(registry)`, then one cheap call with default options, then the same call
again. Shown per server: the first call's duration and outcome with default options (a 5 s
deadline: a server slower to start answers TIMEOUT by then, saying it is still starting), the
first call's duration with a deadline long enough to wait for the start (the cold start
itself), and the second call (warm).

Servers: mcp-server-time, mcp-server-git and mcp-server-fetch (PyPI, if installed) and
server-everything, server-filesystem and server-memory (npm, installed at benchmark time into
`benchmarks/cache/npm`, never committed; skipped with the reason without npm or a registry).

    python -m benchmarks.mcp_cold_start [--runs 3]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CACHE = Path(__file__).resolve().parent / "cache" / "npm"
NPM_SERVERS = ("server-everything", "server-filesystem", "server-memory")
VERSION = "2026.8.31"

RUN = """
import json, sys, time
from toolcaller import ToolCaller
registry, name, params, deadline = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
options = {} if deadline == "default" else {"deadline": float(deadline), "timeout": 60000}
with ToolCaller.from_file(registry) as caller:
    first = caller.call(name, params, **options)
    second = caller.call(name, params)
print(json.dumps({"first": first.metadata.duration, "ok": first.success,
                  "code": first.error.code if first.error else None,
                  "second": second.metadata.duration}))
"""


def npm_servers() -> str:
    """Install the npm servers into the cache; return why not, or ''."""
    missing = [s for s in NPM_SERVERS if not _entry(s).is_file()]
    if not missing:
        return ""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return "node and npm are not installed"
    done = subprocess.run([npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund",
                           "--loglevel=error",
                           *(f"@modelcontextprotocol/{s}@{VERSION}" for s in missing)],
                          capture_output=True, text=True, timeout=600, check=False)
    return "" if done.returncode == 0 else f"npm install failed: {done.stderr.strip()[-200:]}"


def _entry(server: str) -> Path:
    return CACHE / "node_modules" / "@modelcontextprotocol" / server / "dist" / "index.js"


def serve_page(folder: Path) -> str:
    """Serve a page on 127.0.0.1 for mcp-server-fetch to fetch; return its URL."""
    (folder / "index.html").write_text("<h1>Hello</h1><p>a page</p>")
    handler = functools.partial(_Quiet, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/index.html"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def servers(work: Path) -> dict[str, tuple[dict[str, Any], str, dict[str, Any]]]:
    """Each available server: its mcpServers entry, a cheap tool and its params."""
    (work / "site").mkdir()
    page = serve_page(work / "site")
    repo = work / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    found: dict[str, tuple[dict[str, Any], str, dict[str, Any]]] = {}
    bindir = Path(sys.executable).parent
    for name, command, args, tool, params in (
        ("time", "mcp-server-time", [], "get_current_time", {"timezone": "UTC"}),
        ("git", "mcp-server-git", ["--repository", str(repo)], "git_status",
         {"repo_path": str(repo)}),
        ("fetch", "mcp-server-fetch", ["--allow-private-ips"], "fetch", {"url": page}),
    ):
        program = shutil.which(command) or shutil.which(command, path=str(bindir))
        if program is None:
            print(f"{name:12} skipped: {command} is not installed")
        else:
            found[name] = ({"command": program, "args": args}, tool, params)
    why = npm_servers()
    if why:
        print(f"npm servers skipped: {why}")
        return found
    node = shutil.which("node") or "node"
    (work / "files").mkdir()
    found["everything"] = ({"command": node, "args": [str(_entry("server-everything"))]},
                           "echo", {"message": "hi"})
    found["filesystem"] = ({"command": node, "args": [str(_entry("server-filesystem")),
                                                       str(work / "files")]},
                           "list_allowed_directories", {})
    found["memory"] = ({"command": node, "args": [str(_entry("server-memory"))],
                        "env": {"MEMORY_FILE_PATH": str(work / "memory.jsonl")}},
                       "read_graph", {})
    return found


def run_once(registry: Path, name: str, params: dict[str, Any], deadline: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", RUN, str(registry), name, json.dumps(params),
                           deadline], env=env, capture_output=True, text=True, timeout=300,
                          check=True)
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    """Print one line per server: default-options first call, cold start, warm call."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per server (median shown)")
    args = parser.parse_args(argv)
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        print(f"{'server':12} {'default options: 1st call':>28} {'cold start':>11} "
              f"{'warm call':>10}")
        for server, (entry, tool, params) in servers(work).items():
            registry = work / f"{server}.json"
            registry.write_text(json.dumps({"mcpServers": {server: entry}}))
            name = f"{server}.{tool}"
            plain = [run_once(registry, name, params, "default") for _ in range(args.runs)]
            cold = [run_once(registry, name, params, "60000") for _ in range(args.runs)]
            outcomes = sorted({"ok" if r["ok"] else r["code"] for r in plain})
            print(f"{server:12} {statistics.median(r['first'] for r in plain):10.0f} ms "
                  f"{'/'.join(outcomes):>14} "
                  f"{statistics.median(r['first'] for r in cold):8.0f} ms "
                  f"{statistics.median(r['second'] for r in cold):7.1f} ms")
    print(f"({args.runs} runs each, medians; load average {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
