"""Where the explorer runs for the browser suite: a Voilà page, or a notebook run in JupyterLab.

`LabServer` starts JupyterLab on 127.0.0.1 with settings of its own (no news, no update check,
the app exposed as `window.jupyterapp` so that the suite drives Lab by its commands rather than
by the selectors of its menus, which change between versions). `open_lab_explorer` opens a
notebook that builds an `Explorer`, switches the theme, runs all cells and waits for the
explorer to list tools: the notebook as a person runs it in Lab.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = ["LAB_THEMES", "LabServer", "lab_notebook", "open_lab_explorer"]

HOST = "127.0.0.1"
START_TIMEOUT_S = 120.0
LAB_THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
NOTEBOOK_CELLS = [
    "from toolcaller.ui import caller_from_env\nfrom toolcaller.widgets import Explorer\n\n"
    "caller = caller_from_env()  # $TOOLCALLER_REGISTRY and plugins, as the Voilà page does\n"
    "explorer = Explorer(caller)\nexplorer",
]
SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
}
RUN_JS = """async ([theme]) => {
  const app = window.jupyterapp;
  app.shell.collapseLeft(); app.shell.collapseRight();
  await app.commands.execute('apputils:change-theme', {theme});
  await app.commands.execute('notebook:run-all-cells');
}"""
APP_READY_JS = """() => { const app = window.jupyterapp; const w = app && app.shell.currentWidget;
  return !!(w && w.sessionContext && w.sessionContext.session
            && w.sessionContext.session.kernel
            && w.sessionContext.session.kernel.status === 'idle'); }"""


def lab_notebook(path: Path) -> Path:
    """Write the notebook the Lab tests run: the page's caller in an `Explorer`."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in NOTEBOOK_CELLS]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    nbformat.write(notebook, path)
    return path


class LabServer:
    """JupyterLab on 127.0.0.1 serving `root`, stopped (with its kernels) by `stop()`."""

    def __init__(self, root: Path, env: dict[str, str], log_path: Path) -> None:
        self.root = root
        self.token = secrets.token_urlsafe(24)
        self.port = _free_port()
        settings = root.parent / "lab-settings"
        for name, values in SETTINGS.items():
            target = settings / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(values), encoding="utf-8")
        env = {**env, "JUPYTERLAB_SETTINGS_DIR": str(settings),
               "JUPYTERLAB_WORKSPACES_DIR": str(root.parent / "lab-workspaces"),
               "JUPYTER_CONFIG_DIR": str(root.parent / "jupyter-config")}
        command = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--ServerApp.ip={HOST}",
                   f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
                   f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={root}",
                   "--ServerApp.allow_root=True",  # CI containers run as root
                   "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
                   "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate"]
        with log_path.open("wb") as out:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out,
                                            stderr=subprocess.STDOUT, env=env, cwd=root,
                                            start_new_session=True)
        self.log_path = log_path
        self._wait_until_listening()

    def url(self, notebook: str) -> str:
        """The address of a notebook of the root folder in a fresh workspace of its own.

        One workspace per notebook: Lab would otherwise reopen the last page's notebook too, and
        its explorer (in a hidden tab) would be the first one on the page.
        """
        workspace = Path(notebook).stem
        return (f"http://{HOST}:{self.port}/lab/workspaces/{workspace}/tree/{notebook}"
                f"?reset&token={self.token}")

    def stop(self) -> None:
        """Stop Lab and its kernels (SIGTERM to its process group, then SIGKILL)."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def _wait_until_listening(self) -> None:
        end = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < end:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited: {self.log_path.read_text()[-3000:]}")
            with contextlib.suppress(OSError), socket.create_connection((HOST, self.port), 0.5):
                return
            time.sleep(0.1)
        self.stop()
        tail = self.log_path.read_text()[-3000:]
        raise RuntimeError(f"JupyterLab did not listen in time: {tail}")


def open_lab_explorer(page: Page, url: str, theme: str, timeout_ms: float) -> None:
    """Open a notebook in Lab, switch the theme, run all cells, wait for the explorer's tools."""
    page.goto(url)
    page.wait_for_function(APP_READY_JS, timeout=timeout_ms)
    page.evaluate(RUN_JS, [LAB_THEMES[theme]])
    page.locator(".tc-explorer .tc-catalog-list option").first.wait_for(
        state="attached", timeout=timeout_ms)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])
