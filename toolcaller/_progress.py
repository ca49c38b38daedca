"""Progress bars of batch calls: the notebook widget, a text line on stderr, or nothing."""

from __future__ import annotations

import sys
import threading
import time
from typing import Protocol

__all__ = ["Bar", "progress_bar"]


class Bar(Protocol):
    """What a batch tells its progress bar."""

    def advance(self, ok: bool) -> None:
        """Count one finished row (`ok` false for a failed call)."""
        ...

    def close(self) -> None:
        """Draw the final state."""
        ...


class _NoBar:
    def advance(self, ok: bool) -> None:
        pass

    def close(self) -> None:
        pass


class _TextBar:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    WIDTH = 30

    def __init__(self, total: int, label: str) -> None:
        self.total, self.label = total, label
        self.done = self.failed = 0
        self.started = self.shown = time.monotonic()
        self._lock = threading.Lock()
        self._draw()

    def advance(self, ok: bool) -> None:
        with self._lock:
            self.done += 1
            self.failed += not ok
            now = time.monotonic()
            if now - self.shown >= 0.1:
                self.shown = now
                self._draw()

    def close(self) -> None:
        with self._lock:
            self._draw()
            sys.stderr.write("\n")
            sys.stderr.flush()

    def _draw(self) -> None:
        filled = self.WIDTH * self.done // self.total if self.total else self.WIDTH
        failed = f"  {self.failed} failed" if self.failed else ""
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (self.WIDTH - filled)}] "
                         f"{self.done}/{self.total}{failed}  "
                         f"{time.monotonic() - self.started:.1f} s")
        sys.stderr.flush()


def progress_bar(progress: bool | None, total: int, label: str) -> Bar:
    """Return a bar: in a notebook a widget, else text on stderr (a terminal, or `True`)."""
    if progress is False:
        return _NoBar()
    if _in_notebook():
        from toolcaller.widgets.progress import ProgressBar

        return ProgressBar(total, label)
    if progress or sys.stderr.isatty():
        return _TextBar(total, label)
    return _NoBar()


def _in_notebook() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    if getattr(shell, "kernel", None) is None:
        return False
    import importlib.util

    return importlib.util.find_spec("ipywidgets") is not None
