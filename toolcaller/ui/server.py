"""Serve the explorer notebook with Voilà on 127.0.0.1: `serve()` for code, `run()` for the CLI.

Voilà runs in a child process of its own session, with a fresh token, on 127.0.0.1 only; each
visit of the page starts a kernel that runs `explorer.ipynb`, whose caller comes from the
environment (see `toolcaller.ui.page`). `stop()` ends it with SIGTERM, so that Voilà shuts its
kernels down, and kills it if it has not stopped in time.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import webbrowser
from pathlib import Path
from types import TracebackType

from toolcaller.errors import UsageError
from toolcaller.ui.page import PLUGINS_ENV, REGISTRY_ENV

__all__ = ["NOTEBOOK", "ExplorerServer", "run", "serve"]

NOTEBOOK = Path(__file__).with_name("explorer.ipynb")
"""The notebook the page shows: the caller from the environment in an `Explorer`."""
HOST = "127.0.0.1"
STARTUP_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
PORT_ATTEMPTS = 3  # a free port picked for Voilà can be taken before Voilà binds it
LOG_TAIL_CHARS = 3_000
KERNEL_IDLE_S = 600  # a page's kernel outlives its closed tab by this much, at most a minute more
KERNEL_CULL_INTERVAL_S = 60
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class ExplorerServer:
    """A running Voilà server of the explorer page; `stop()` (or `with`) ends it.

    Args:
        process: The Voilà process (leader of its own process group).
        port: The port it listens on, on 127.0.0.1.
        token: The token a browser presents once (it is in `url`).
        log_path: Where Voilà's output goes.
        own_log: Whether `stop()` deletes the log (a temporary file that `serve` made).
    """

    def __init__(self, process: subprocess.Popen[bytes], *, port: int, token: str,
                 log_path: Path, own_log: bool) -> None:
        self.process = process
        self.port = port
        self.token = token
        self.log_path = log_path
        self._own_log = own_log

    @property
    def url(self) -> str:
        """The page's address, token included (the browser keeps a cookie after the first visit)."""
        return f"http://{HOST}:{self.port}/?token={self.token}"

    @property
    def running(self) -> bool:
        """Whether the Voilà process is still running."""
        return self.process.poll() is None

    def log(self) -> str:
        """Return what Voilà wrote so far (its log and its kernels' stderr)."""
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def wait(self, timeout_s: float | None = None) -> int:
        """Wait for Voilà to exit and return its exit status (`subprocess.TimeoutExpired`)."""
        return self.process.wait(timeout_s)

    def stop(self) -> None:
        """Stop Voilà and its kernels (SIGTERM, then SIGKILL after 10 s); harmless twice."""
        if self.running:
            _signal_group(self.process, signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                _signal_group(self.process, signal.SIGKILL)
                self.process.wait()
        if self._own_log:
            self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> ExplorerServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()


def serve(registry: str | os.PathLike[str] | None = None, port: int = 0,
          open_browser: bool = False, *, notebook: str | os.PathLike[str] | None = None,
          plugins: bool = False, log_path: str | os.PathLike[str] | None = None,
          ) -> ExplorerServer:
    """Start Voilà on 127.0.0.1 serving the explorer page; return once it accepts connections.

    Args:
        registry: Registry file the page lists (default: the embedded demo registry). It is
            loaded once here, so that a bad file fails now rather than in the page.
        port: Port to listen on; 0 picks a free one.
        open_browser: Open the page in the default web browser once it is up.
        notebook: Another notebook to serve instead of `NOTEBOOK` (tests serve variants).
        plugins: Also list the tools of installed plugins.
        log_path: Where to write Voilà's output (default: a temporary file `stop()` deletes).

    Raises:
        UsageError: Voilà, ipywidgets or ipykernel is missing, the registry file is not
            valid, or the port is not a port number.
        RuntimeError: Voilà exited, or did not listen within 60 s (the message ends with its log).
    """
    missing = [name for name in ("voila", "ipywidgets", "ipykernel")
               if importlib.util.find_spec(name) is None]
    if missing:
        raise UsageError(f"the explorer page needs {', '.join(missing)}, the 'ui' extra: "
                         "from a clone of toolcaller, pip install '.[ui]'")
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, got {port}")
    env = dict(os.environ)
    env[REGISTRY_ENV] = _checked_registry(registry)
    env[PLUGINS_ENV] = "1" if plugins else ""
    page = Path(notebook or NOTEBOOK).resolve()
    own_log = log_path is None
    log = Path(log_path).resolve() if log_path is not None else _temporary_log()
    for attempt in range(1, PORT_ATTEMPTS + 1):
        server = _start(page, port or _free_port(), env, log, own_log)
        try:
            _wait_until_listening(server)
            break
        except RuntimeError as exc:
            server.stop()
            if port or attempt == PORT_ATTEMPTS or "port" not in str(exc).lower():
                raise
        except BaseException:  # Ctrl-C while starting: leave no server behind
            server.stop()
            raise
    if open_browser:
        _open_in_browser(server.url)
    return server


def run(*, registry: str | None = None, port: int = 0, open_browser: bool = True,
        plugins: bool = False) -> int:
    """Serve the explorer page until Ctrl-C or SIGTERM (`toolcaller ui`); return the exit status."""
    server: ExplorerServer | None = None
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        server = serve(registry, port, open_browser, plugins=plugins)
        print(f"toolcaller: the explorer is at {server.url}\n"
              f"  (Voilà's log: {server.log_path}; press Ctrl-C to stop)", flush=True)
        server.wait()
        print(f"toolcaller: Voilà stopped unexpectedly:\n{_tail(server.log())}",
              file=sys.stderr)
        return EXIT_FAILED
    except UsageError as exc:
        print(f"toolcaller: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RuntimeError as exc:
        print(f"toolcaller: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        if server is not None:
            server.stop()
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    """Treat SIGTERM as Ctrl-C, so that the server is stopped on the way out."""
    raise KeyboardInterrupt


def _open_in_browser(url: str) -> None:
    """Open the page in a graphical browser; without a display, leave it to the user."""
    graphical = sys.platform in ("darwin", "win32") or any(
        os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY"))
    # Without a display, `webbrowser` falls back to text browsers (lynx, w3m) that would take
    # over the terminal: the printed URL is the better answer there.
    if graphical:
        webbrowser.open(url)


def _checked_registry(registry: str | os.PathLike[str] | None) -> str:
    """Return the registry's absolute path ("" for the demo), once it loaded without error."""
    if registry is None or str(registry) == "":
        return ""
    from toolcaller.caller import ToolCaller

    path = Path(registry).resolve()  # the kernel runs in the notebook's folder, not here
    ToolCaller.from_file(path).close()
    return str(path)


def _start(page: Path, port: int, env: dict[str, str], log: Path,
           own_log: bool) -> ExplorerServer:
    token = secrets.token_urlsafe(24)
    command = [
        sys.executable, "-m", "toolcaller.ui._voila", str(page), "--no-browser",
        f"--port={port}", f"--Voila.ip={HOST}", "--Voila.port_retries=0",
        f"--Voila.token={token}",
        "--show_tracebacks=True",  # served to 127.0.0.1 only: a broken page says why
        # A closed tab leaves its kernel running: stop kernels idle with no page attached.
        f"--MappingKernelManager.cull_idle_timeout={KERNEL_IDLE_S}",
        f"--MappingKernelManager.cull_interval={KERNEL_CULL_INTERVAL_S}",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            env=env, cwd=page.parent, start_new_session=True)
    return ExplorerServer(process, port=port, token=token, log_path=log, own_log=own_log)


def _wait_until_listening(server: ExplorerServer) -> None:
    end = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < end:
        if not server.running:
            raise RuntimeError(f"Voilà exited with status {server.process.returncode} before "
                               f"serving the page:\n{_tail(server.log())}")
        try:
            with socket.create_connection((HOST, server.port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"Voilà did not listen on {HOST}:{server.port} within "
                       f"{STARTUP_TIMEOUT_S:.0f} s:\n{_tail(server.log())}")


def _temporary_log() -> Path:
    handle, name = tempfile.mkstemp(prefix="toolcaller-ui-", suffix=".log")
    os.close(handle)
    return Path(name)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def _signal_group(process: subprocess.Popen[bytes], signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # it has just exited
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signum)  # Voilà leads its own group (start_new_session)
        else:  # Windows: no process groups, and one way to stop
            process.terminate()


def _tail(text: str) -> str:
    return text if len(text) <= LOG_TAIL_CHARS else "…" + text[-LOG_TAIL_CHARS:]
