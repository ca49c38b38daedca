"""A batch's progress bar: `tqdm.auto`, a widget in a notebook and a text line on a terminal."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

__all__ = ["Progress"]


class Progress:
    """Counts a batch's finished rows (and its failures) on a tqdm bar, or on nothing."""

    def __init__(self, show: bool | None, total: int, label: str) -> None:
        self.failed = 0
        self._bar: Any = None
        if show is False:
            return
        from tqdm.auto import tqdm

        # `disable=None` is tqdm's "not on a terminal": a notebook always shows its widget.
        disable = None if show is None and not _in_notebook() else False
        self._bar = tqdm(total=total, desc=label, unit="call", disable=disable,
                         file=sys.stderr, leave=True)

    def advance(self, ok: bool) -> None:
        """Count one finished row (`ok` false for a failed call)."""
        if self._bar is None:
            return
        with contextlib.suppress(Exception):  # a broken display must not stop the batch
            if not ok:
                self.failed += 1
                self._bar.set_postfix(failed=self.failed, refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        """Draw the final state."""
        if self._bar is not None:
            with contextlib.suppress(Exception):
                self._bar.close()


def _in_notebook() -> bool:
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None
