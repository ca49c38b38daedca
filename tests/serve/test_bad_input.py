"""Bad input never kills the server: malformed JSON-RPC, unknown methods, huge messages, and
clients that leave mid-call. It answers or drops, goes on, and leaves no process behind."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serve.conftest import (
    descendants,
    http_server,
    serve_argv,
    server_env,
    wait_gone,
)
from toolcaller.serve.stdio import MAX_MESSAGE_BYTES

pytestmark = [pytest.mark.integration, pytest.mark.mcp]

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}


class RawSession:
    """`toolcaller serve` driven line by line over its stdin and stdout."""

    def __init__(self, tmp_path: Path) -> None:
        self.log = tmp_path / "server.log"
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(serve_argv(), stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=err, env=server_env())
        assert self.proc.stdout is not None
        assert self.proc.stdin is not None
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.proc.stdout.fileno(), selectors.EVENT_READ)
        self.lines: list[bytes] = []
        """Every line the server wrote to stdout, in order."""

    def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: Any = None, request_id: int = 1) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.answer(request_id)

    def answer(self, request_id: Any, timeout_s: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in self._read_lines(deadline - time.monotonic()):
                message = json.loads(line)  # every line on stdout must be JSON
                if message.get("id") == request_id and "method" not in message:
                    return message  # type: ignore[no-any-return]
        pytest.fail(f"no answer to {request_id!r}: {self.log.read_text()[-2000:]}")

    def _read_lines(self, timeout_s: float) -> list[bytes]:
        assert self.proc.stdout is not None
        if self._selector.select(timeout=max(timeout_s, 0.0)):
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                pytest.fail(f"the server closed stdout: {self.log.read_text()[-2000:]}")
            self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        self.lines += lines
        return lines

    def start(self) -> RawSession:
        assert "result" in self.request("initialize", INIT["params"], request_id=0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def close(self) -> int:
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        if self.proc.stdout is not None and self.proc.stdout.closed:
            return self.proc.wait()
        try:
            return self.proc.wait(15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._selector.close()
            if self.proc.stdout is not None:
                self.proc.stdout.close()


@pytest.fixture
def session(tmp_path: Path) -> Any:
    raw = RawSession(tmp_path).start()
    yield raw
    raw.close()


def _add(raw: RawSession, request_id: int) -> dict[str, Any]:
    return raw.request("tools/call", {"name": "math.add", "arguments": {"a": 1, "b": 1}},
                       request_id)


class TestMalformed:
    @pytest.mark.parametrize("line", [
        b"this is not json", b"{", b"[]", b'{"jsonrpc": "2.0"}', b'"a string"', b"\xff\xfe",
        b'{"jsonrpc": "2.0", "method": 5}',
    ], ids=["text", "cut", "empty-batch", "no-method", "string", "not-utf8", "bad-notification"])
    def test_a_line_without_an_id_is_dropped_and_the_session_goes_on(self, session, line):
        """A line that is not JSON-RPC and has no id gets no answer; the next request does."""
        session.send(line)
        assert _add(session, 7)["result"]["structuredContent"] == {"sum": 2}
        assert session.close() == 0
        assert len([line for line in session.lines if line]) == 2  # initialize, the call

    @pytest.mark.parametrize("line", [
        b'{"jsonrpc": "1.0", "id": 9, "method": "tools/list"}', b'{"jsonrpc": "2.0", "id": 9}',
        b'{"jsonrpc": "2.0", "id": 9, "method": 5}',
    ], ids=["wrong-version", "no-method", "method-not-a-string"])
    def test_an_invalid_request_with_an_id_is_answered(self, session, line):
        """An invalid request whose id can be read is answered -32600; the session goes on."""
        session.send(line)
        assert session.answer(9)["error"]["code"] == -32600
        assert _add(session, 10)["result"]["structuredContent"] == {"sum": 2}

    def test_params_of_the_wrong_shape_are_a_json_rpc_error(self, session):
        """A tools/call whose name is not a string is -32602, not a crash."""
        answer = session.request("tools/call", {"name": 5, "arguments": []}, request_id=3)
        assert answer["error"]["code"] == -32602
        assert _add(session, 4)["result"]["isError"] is False

    def test_unknown_methods_are_method_not_found(self, session):
        """An unknown request is -32601; an unknown notification is ignored."""
        session.send({"jsonrpc": "2.0", "method": "notifications/bogus", "params": {}})
        answer = session.request("bogus/method", {}, request_id=5)
        assert answer["error"]["code"] == -32601
        assert _add(session, 6)["result"]["isError"] is False

    def test_every_stdout_line_is_a_protocol_message(self, session):
        """Prints, os.write(1) and children of a tool stay off stdout, as do import prints."""
        answer = session.request("tools/call", {"name": "demo.noisy", "arguments": {}}, 2)
        assert answer["result"]["structuredContent"] == {"printed": True}
        assert session.close() == 0
        assert all(json.loads(line)["jsonrpc"] == "2.0" for line in session.lines if line)
        log = session.log.read_text()
        for printed in ("print() from a tool", "os.write(1) from a tool",
                        "a child process of a tool", "served_tools imported"):
            assert printed in log


class TestHuge:
    def test_huge_arguments_are_validated_not_echoed(self, session):
        """A 5 MB argument is read and refused by the schema, without the 5 MB in the answer."""
        pad = "x" * 5_000_000
        answer = session.request("tools/call", {"name": "math.add", "arguments": {
            "a": 1, "b": 2, "pad": pad}}, request_id=2)
        assert answer["result"]["isError"] is True
        assert answer["result"]["content"][0]["text"].startswith("INVALID_PARAMS: ")
        assert len(json.dumps(answer)) < 100_000

    def test_a_message_over_the_limit_is_refused_by_id(self, session):
        """A line longer than the limit is skipped and answered -32600; the session goes on."""
        pad = "x" * (MAX_MESSAGE_BYTES + 1000)
        session.send({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
                      "params": {"name": "text.twice", "arguments": {"text": pad}}})
        answer = session.answer(11)
        assert answer["error"]["code"] == -32600
        assert "too large" in answer["error"]["message"]
        assert _add(session, 12)["result"]["structuredContent"] == {"sum": 2}


class TestLeavingClients:
    def test_a_client_gone_mid_call_leaves_no_process(self, session, tmp_path):
        """stdin closing mid-call cancels the call, kills its script and ends the server."""
        pid_file = tmp_path / "pid"
        session.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "script.sleep", "arguments": {"seconds": 30, "pidFile": str(pid_file)}}})
        pid = _wait_for_pid(pid_file)
        children = descendants(session.proc.pid)
        assert pid in {c.pid for c in children}
        assert session.close() == 0
        assert wait_gone(pid)
        assert not [c for c in children if c.is_running() and c.status() != "zombie"]

    def test_a_sync_tool_stuck_in_its_thread_does_not_keep_the_server(self, session):
        """Threads cannot be stopped: the server exits without waiting for the tool."""
        session.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "demo.nap_sync", "arguments": {"seconds": 30}}})
        time.sleep(0.5)
        started = time.monotonic()
        assert session.close() == 0
        assert time.monotonic() - started < 10
        assert "still running in worker threads" in session.log.read_text()

    def test_sigterm_mid_call_stops_cleanly(self, session, tmp_path):
        """SIGTERM mid-call cancels the call, kills the isolated worker and exits 0."""
        pid_file = tmp_path / "pid"
        session.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "demo.hang", "arguments": {"pid_file": str(pid_file)}}})
        pid = _wait_for_pid(pid_file)
        children = descendants(session.proc.pid)
        session.proc.send_signal(signal.SIGTERM)
        assert session.proc.wait(15) == 0
        assert wait_gone(pid)
        assert not [c for c in children if c.is_running() and c.status() != "zombie"]


class TestHttp:
    def test_bad_requests_are_refused(self, tmp_path):
        """No token 401, a foreign Host 421, junk 400, a huge body 413; the server goes on."""
        argv = serve_argv("--transport", "http", "--print-config")
        with http_server(argv, tmp_path / "server.log") as server:
            auth = {"Authorization": f"Bearer {server.token}"}
            post = _poster(server.url)
            assert post({}, json.dumps(INIT)).status_code == 401
            assert post({"Authorization": "Bearer wrong"}, json.dumps(INIT)).status_code == 401
            assert post({**auth, "Host": "evil.example"}, json.dumps(INIT)).status_code == 421
            assert post(auth, "this is not json").status_code == 400
            assert post(auth, "x" * (MAX_MESSAGE_BYTES + 10)).status_code == 413
            assert post(auth, json.dumps(INIT)).status_code == 200
        assert server.proc.returncode == 0

    def test_a_client_hanging_up_mid_call_costs_only_its_call(self, tmp_path):
        """A dropped connection does not cancel the call (MCP: the client may resume), so it
        ends at its own timeout; ending the session cancels a call at once. No process stays."""
        argv = serve_argv("--transport", "http", "--print-config")
        with http_server(argv, tmp_path / "server.log") as server:
            post = _poster(server.url)
            headers = {"Authorization": f"Bearer {server.token}"}
            first = post(headers, json.dumps(INIT))
            headers |= {"Mcp-Session-Id": first.headers["mcp-session-id"],
                        "MCP-Protocol-Version": "2025-11-25"}
            post(headers, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            timed_out = _hang_up(post, headers, "script.two_seconds", tmp_path / "a")
            assert wait_gone(timed_out, 2 + 5)  # its 2 s timeout, plus slack
            cancelled = _hang_up(post, headers, "script.sleep", tmp_path / "b")
            assert httpx.delete(server.url, headers=headers, trust_env=False).status_code == 200
            assert wait_gone(cancelled, 5)
            assert post({"Authorization": headers["Authorization"]},
                        json.dumps(INIT)).status_code == 200
            kids = descendants(server.proc.pid)
        assert server.proc.returncode == 0
        assert not [c for c in kids if c.is_running() and c.status() != "zombie"]


def _hang_up(post: Any, headers: dict[str, str], tool: str, pid_file: Path) -> int:
    """Call a sleeping script tool, and drop the connection once its process runs."""
    call = {"jsonrpc": "2.0", "id": tool, "method": "tools/call", "params": {
        "name": tool, "arguments": {"seconds": 30, "pidFile": str(pid_file)}}}
    with pytest.raises(httpx.ReadTimeout):
        post(headers, json.dumps(call), timeout=1.0)
    return _wait_for_pid(pid_file)


def _poster(url: str) -> Any:
    def post(headers: dict[str, str], body: str, timeout: float = 30.0) -> httpx.Response:
        return httpx.post(url, content=body, timeout=timeout, trust_env=False, headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            **headers})
    return post


def _wait_for_pid(path: Path, timeout_s: float = 20.0) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.02)
    pytest.fail(f"{path} was not written")
