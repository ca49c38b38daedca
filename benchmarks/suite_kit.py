"""Shared pieces of the benchmark suite: result rows, a local HTTP server, a scratch folder."""

from __future__ import annotations

import contextlib
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

COLUMNS = ["section", "case", "median", "p99", "unit", "reference", "extra", "ratio", "target",
           "ok?", "note"]

SCRIPT_ADD = ("import sys, json\np = json.load(sys.stdin)\n"
              "print(json.dumps({'sum': p['a'] + p['b']}))\n")
SCRIPT_HANG = "import time\ntime.sleep(30)\n"


def row(section: str, case: str, median: float | None, unit: str, *, p99: float | None = None,
        reference: float | None = None, target: tuple[str, float] | None = None,
        target_on: str = "median", note: str = "") -> dict[str, Any]:
    """One line of the results table; `target` is `("<=", 300)` or `(">=", 5000)`.

    The target applies to the median, to the p99 with `target_on="p99"`, or to the median's
    ratio to the reference with `target_on="ratio"` (`("<=", 0.75)` reads "≤ 0.75×").
    """
    ratio = median / reference if median is not None and reference else None
    ok = ""
    target_text = ""
    checked = {"median": median, "p99": p99, "ratio": ratio}[target_on]
    if target is not None and checked is not None:
        op, limit = target
        ok = "yes" if (checked <= limit if op == "<=" else checked >= limit) else "NO"
        scale = "×" if target_on == "ratio" else f" {unit}"
        target_text = f"{'≤' if op == '<=' else '≥'} {limit:g}{scale}"
        if target_on == "p99":
            target_text = "p99 " + target_text
    return {
        "section": section, "case": case, "median": median, "p99": p99, "unit": unit,
        "reference": reference,
        "extra": median - reference if median is not None and reference is not None else None,
        "ratio": ratio, "target": target_text, "ok?": ok, "note": note,
    }


def skipped(section: str, case: str, why: str) -> dict[str, Any]:
    """A row for a case that could not run, saying why."""
    return row(section, case, None, "", note=f"skipped: {why}")


def p50_p99(samples: list[float]) -> tuple[float, float]:
    """Median and 99th percentile (nearest rank)."""
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[max(int(len(ordered) * 0.99) - 1, 0)]


def timed_ms(fn: Any, runs: int) -> list[float]:
    """Milliseconds of each of `runs` calls of `fn`."""
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A temporary folder, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="toolcaller-bench-") as folder:
        yield Path(folder)


def script_registry(folder: Path) -> Path:
    """Write a registry with a script tool that adds and one that hangs; return its path."""
    (folder / "add.py").write_text(SCRIPT_ADD)
    (folder / "hang.py").write_text(SCRIPT_HANG)
    schema = {"type": "object"}
    tools = [
        {"name": "script.add", "description": "Add (script).", "paramsSchema": schema,
         "script": {"command": [sys.executable, "-S", str(folder / "add.py")]}},
        {"name": "script.hang", "description": "Hang (script).", "paramsSchema": schema,
         "script": {"command": [sys.executable, "-S", str(folder / "hang.py")]}},
    ]
    path = folder / "scripts.json"
    path.write_text(json.dumps({"tools": tools}))
    return path


def http_registry(folder: Path, base_url: str) -> Path:
    """Write a registry with an HTTP tool that adds and one that answers after 1 s."""
    schema = {"type": "object"}
    tools = [
        {"name": "http.add", "description": "Add (HTTP).", "paramsSchema": schema,
         "http": {"method": "GET", "url": f"{base_url}/add"}},
        {"name": "http.slow", "description": "Slow (HTTP).", "paramsSchema": schema,
         "http": {"method": "GET", "url": f"{base_url}/slow"}},
    ]
    path = folder / "http.json"
    path.write_text(json.dumps({"tools": tools}))
    return path


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: pooled clients reuse the connection

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/slow":
            time.sleep(1.0)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        total = float(query.get("a", 0)) + float(query.get("b", 0))
        body = json.dumps({"sum": total}).encode()
        # one write: headers and body in separate packets meet delayed ACKs (40 ms stalls)
        head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n")
        with contextlib.suppress(OSError):  # a client that timed out has gone
            self.wfile.write(head.encode() + body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    """Serve `/add?a=&b=` and `/slow` on 127.0.0.1 in a thread; yield the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


MCP_SERVER = Path(__file__).resolve().parent.parent / "tests" / "adapters" / "mcp_slow_server.py"


def mcp_registry(folder: Path) -> Path:
    """Write a registry whose `mcpServers` has the test MCP server (stdio) as `bench`.

    Its tools are then `bench.echo`, `bench.sleep`, ... (`ToolCaller.from_file`); the server
    starts at the first call. `LookupError` says why MCP cannot run here.
    """
    try:
        import mcp  # noqa: F401
    except ImportError as exc:
        raise LookupError(f"no MCP support ({exc})") from exc
    if not MCP_SERVER.exists():
        raise LookupError(f"no test server at {MCP_SERVER}")
    path = folder / "mcp.json"
    path.write_text(json.dumps({"tools": [], "mcpServers": {
        "bench": {"command": sys.executable, "args": [str(MCP_SERVER)]}}}))
    return path
