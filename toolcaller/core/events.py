"""What a call reports while it runs: attempts starting and ending, retry waits, progress."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["CallEvent", "EventKind", "OnEvent"]

EventKind = Literal["attempt", "attempt_end", "wait", "progress", "log"]


@dataclass(frozen=True, slots=True)
class CallEvent:
    """One thing that happened during a call, for a live display or a protocol bridge.

    `attempt` starts an attempt; `attempt_end` ends it (`code` is `None` on success); `wait`
    is the pause before a retry (`wait_ms`); `progress` and `log` come from the tool itself
    (an MCP server's notifications, a Python tool's `report_progress`).
    """

    kind: EventKind
    call_id: str
    tool_name: str
    attempt: int
    """The attempt this event belongs to (for `wait`: the attempt that comes next)."""
    max_attempts: int
    """`retries + 1`: how many attempts the call may make at most."""
    elapsed_ms: float
    """Milliseconds since the request arrived."""
    code: str | None = None
    wait_ms: float | None = None
    progress: float | None = None
    total: float | None = None
    message: str | None = None


OnEvent = Callable[[CallEvent], None]
"""A listener of a call's events; it runs on the call's event loop and must not block."""
