"""`serve()` and `run()`: Voilà on 127.0.0.1 only, behind a token, stopped cleanly (no browser)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from toolcaller.errors import UsageError

if TYPE_CHECKING:
    from toolcaller.ui import ExplorerServer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("need_voila")]

URL = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=[\w-]+")
LOOPBACK_HEX = "0100007F"  # 127.0.0.1 as /proc/net/tcp writes it
LISTEN = "0A"
ORPHAN_STOP_S = 20.0  # parent polled every 0.5 s, then Voilà shuts its kernels down


def _get(url: str) -> tuple[int, str]:
    """GET without following redirects: (status, body)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(url, timeout=60) as answer:
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def _listening_addresses(port: int) -> set[str]:
    """The local addresses a TCP socket listens on at `port` (IPv4 and IPv6), from /proc."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, hex_port = fields[1].rsplit(":", 1)
            if int(hex_port, 16) == port and fields[3] == LISTEN:
                found.add(address)
    return found


def _is_listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class TestServe:
    def test_the_page_needs_the_token(self, ui_server: ExplorerServer) -> None:
        """Without the token the page is refused; with it, the explorer notebook is served."""
        status, _ = _get(f"http://127.0.0.1:{ui_server.port}/")
        assert status in (302, 403), status
        status, body = _get(ui_server.url)
        assert status == 200
        assert "toolcaller explorer" in body

    def test_it_listens_on_127_0_0_1_only(self, ui_server: ExplorerServer) -> None:
        """The one listening socket is bound to the loopback address, not to all interfaces."""
        if not Path("/proc/net/tcp").exists():
            pytest.skip("needs Linux's /proc/net/tcp")
        assert _listening_addresses(ui_server.port) == {LOOPBACK_HEX}
        assert URL.fullmatch(ui_server.url)

    def test_a_bad_registry_fails_before_any_server_starts(self, tmp_path: Path) -> None:
        """An invalid registry file raises UsageError naming the file; nothing is started."""
        from toolcaller.ui import serve

        bad = tmp_path / "tools.json"
        bad.write_text(json.dumps({"tools": [{"name": "x"}]}), encoding="utf-8")
        with pytest.raises(UsageError, match=r"tools\.json"):
            serve(bad)

    def test_stop_ends_voila_and_frees_the_port(self, tmp_path: Path) -> None:
        """`stop()` ends the process and closes the port; a second `stop()` does nothing."""
        from toolcaller.ui import serve

        server = serve(log_path=tmp_path / "voila.log")
        assert _is_listening(server.port)
        server.stop()
        assert not server.running
        assert not _is_listening(server.port)
        server.stop()
        assert "Voilà is running at" in (tmp_path / "voila.log").read_text()


class TestRun:
    def test_run_prints_the_url_and_stops_on_ctrl_c(self, tmp_path: Path) -> None:
        """`toolcaller ui` prints where the page is; SIGINT (Ctrl-C) stops it with status 0."""
        code = "from toolcaller.ui import run; raise SystemExit(run(open_browser=False))"
        with subprocess.Popen(
                [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}) as process:
            try:
                assert process.stdout is not None
                line = process.stdout.readline()
                found = URL.search(line)
                assert found, line
                port = int(found.group(1))
                assert _is_listening(port)
                process.send_signal(signal.SIGINT)
                assert process.wait(timeout=30) == 0
                assert not _is_listening(port)
            finally:
                if process.poll() is None:
                    process.kill()

    def test_voila_does_not_outlive_a_killed_parent(self) -> None:
        """SIGKILL on `toolcaller ui` leaves no server: Voilà sees its parent gone and stops."""
        code = "from toolcaller.ui import run; raise SystemExit(run(open_browser=False))"
        with subprocess.Popen(
                [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}) as process:
            assert process.stdout is not None
            found = URL.search(process.stdout.readline())
            assert found
            port = int(found.group(1))
            log = re.search(r"log: (\S+);", process.stdout.readline())
            process.kill()
            process.wait()
        if log:  # a killed `run()` cannot delete its temporary log
            Path(log.group(1)).unlink(missing_ok=True)
        deadline = time.monotonic() + ORPHAN_STOP_S
        while _is_listening(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _is_listening(port), f"Voilà still listens on {port} after its parent died"
