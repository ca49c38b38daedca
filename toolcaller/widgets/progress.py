"""ProgressBar: the notebook progress bar of a batch call (`ToolCaller.map`)."""

from __future__ import annotations

import threading
import time

import ipywidgets as W

__all__ = ["ProgressBar"]

REDRAW_S = 0.1  # widget updates are comm messages: ten a second is plenty


class ProgressBar:
    """An `IntProgress` and a label (done, failed, elapsed) shown in the notebook.

    `advance(ok)` may be called from any thread; the widget is redrawn at most ten times a
    second, and once more by `close()`.
    """

    def __init__(self, total: int, label: str = "", *, show: bool = True) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.bar = W.IntProgress(value=0, min=0, max=max(total, 1), description=label,
                                 bar_style="info")
        self.text = W.Label(value=f"0/{total}")
        self.widget = W.HBox([self.bar, self.text])
        self._started = self._shown = time.monotonic()
        self._lock = threading.Lock()
        if show:
            from IPython.display import display

            display(self.widget)  # type: ignore[no-untyped-call]

    def advance(self, ok: bool) -> None:
        """Count one finished row (`ok` false for a failed call)."""
        with self._lock:
            self.done += 1
            self.failed += not ok
            now = time.monotonic()
            if now - self._shown >= REDRAW_S:
                self._shown = now
                self._draw()

    def close(self) -> None:
        """Draw the final state: green when every row succeeded, orange otherwise."""
        with self._lock:
            self._draw()
            self.bar.bar_style = "warning" if self.failed or self.done < self.total else "success"

    def _draw(self) -> None:
        self.bar.value = self.done
        failed = f", {self.failed} failed" if self.failed else ""
        self.text.value = (f"{self.done}/{self.total}{failed} "
                           f"in {time.monotonic() - self._started:.1f} s")
