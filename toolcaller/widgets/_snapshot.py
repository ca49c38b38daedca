"""What a view shows where no widget runs: a static HTML snapshot and a short text.

A notebook saved with its widget state renders live widgets on nbviewer; a renderer that knows
no widgets (GitHub's, an email, a terminal) takes the next type of the same mime bundle. The
views add a `text/html` snapshot of what they show — the tool, the last result, the history —
and a `text/plain` line, instead of `Explorer(children=(…`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

__all__ = ["SnapshotMixin"]


class SnapshotMixin:
    """Adds `snapshot_html()` (as `text/html`) and `snapshot_text()` to a widget's mime bundle."""

    def snapshot_html(self) -> str:
        """Return the view as static HTML (what it shows now)."""
        raise NotImplementedError

    def snapshot_text(self) -> str:
        """Return the view in one line of text."""
        raise NotImplementedError

    def __repr__(self) -> str:
        try:
            return self.snapshot_text()
        except Exception:  # noqa: BLE001 - a repr never raises (a view closed half way)
            return f"<{type(self).__name__}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        base: Callable[..., dict[str, Any] | None] = super()._repr_mimebundle_  # type: ignore[misc]
        data = base(**kwargs)
        if data is None:
            return None
        with contextlib.suppress(Exception):  # the live widget still shows; a snapshot is extra
            data["text/html"] = (f'<div class="tc-snapshot" style="max-width:60em">'
                                 f"{self.snapshot_html()}</div>")
        return data
