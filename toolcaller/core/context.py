"""One call in flight (`CallContext`) and one of its attempts (`AttemptContext`).

The call context is the one object the engine passes down instead of loose values: what is
called, with which options, since when, with which secrets to mask and who listens. An
attempt context is what an adapter sees of it, plus the attempt's own time limit.

An attempt's limit is its timeout counted from the moment the tool's own run began, cut to
the call's deadline. Until an adapter says the tool runs (`mark_running`), only the deadline
counts: time spent waiting for a worker thread or a starting process is not the tool's.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from dataclasses import dataclass, field
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.core.clock import Clock
from toolcaller.core.events import CallEvent, EventKind, OnEvent
from toolcaller.core.tool import Tool
from toolcaller.envelope import Attempt, Options

__all__ = ["MAX_NOTES", "AttemptContext", "CallContext"]

MAX_NOTES = 100
"""Progress and log messages kept per attempt (later ones are still told to listeners)."""


@dataclass(eq=False, slots=True)
class CallContext:
    """Everything known about one call while its attempts run."""

    call_id: str
    tool: Tool
    params: JSONObject
    """The validated params, as the tool receives them."""
    options: Options
    clock: Clock
    arrived: float
    """Wall-clock time (`time.time()`) when the request arrived."""
    started: float
    """`clock.now()` when the request arrived."""
    redacted: Any = None
    """The params with secrets masked, as the history keeps them."""
    secret_keys: frozenset[str] = frozenset()
    """Property names whose values are secret (`writeOnly`, `format: password`)."""
    secrets: set[str] = field(default_factory=set)
    """Secret values to mask in every message: secret params, and what adapters resolved."""
    on_event: OnEvent | None = None
    tool_call_id: str | None = None
    """The id a model gave this tool call (toolcaller's own is `call_id`)."""
    attempts: list[Attempt] = field(default_factory=list)
    """The attempts that ended, in order."""
    loop: asyncio.AbstractEventLoop | None = None
    """The loop the attempts run on (events from other threads are handed to it)."""

    @property
    def deadline(self) -> float:
        """`clock.now()` reading by which the call must have answered."""
        return self.started + self.options.deadline / 1000.0

    def elapsed_ms(self) -> float:
        """Milliseconds since the request arrived."""
        return (self.clock.now() - self.started) * 1000.0

    def emit(self, kind: EventKind, attempt: int, **values: Any) -> None:
        """Tell the listener, if any, what happened; a broken listener never breaks a call."""
        listener = self.on_event
        if listener is None:
            return
        event = CallEvent(kind, self.call_id, self.tool.name, attempt, self.options.retries + 1,
                          self.elapsed_ms(), **values)
        loop = self.loop
        if loop is not None and not _runs(loop):  # a sync tool's thread: listeners run on loop
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody listens any more
                loop.call_soon_threadsafe(_tell, listener, event)
            return
        _tell(listener, event)


def _runs(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _tell(listener: OnEvent, event: CallEvent) -> None:
    with contextlib.suppress(Exception):  # a broken listener must not break a call
        listener(event)


class AttemptContext:
    """What one attempt may know and say: its call, its time limit, its progress.

    Adapters read `format`, `secrets`, `remaining_s()`; they call `mark_waiting(what)` before
    waiting for something that is not the tool's own work, `mark_running()` when the tool's
    own run begins (from any thread), and `report_progress(...)` for the tool's progress.
    """

    __slots__ = ("attempt", "call", "details", "no_retry", "note", "notes", "output_at",
                 "run_started", "started_at", "straggler", "waiting_for")

    def __init__(self, call: CallContext, attempt: int) -> None:
        self.call = call
        self.attempt = attempt
        self.started_at = call.clock.now()
        self.run_started: float | None = self.started_at
        """When the tool's own run began; `None` while the attempt waits (see `mark_waiting`)."""
        self.output_at: float | None = None
        """When the tool's output became available."""
        self.waiting_for = ""
        """What the attempt waits for while the tool does not run yet."""
        self.straggler: Any = None
        """Work that goes on after the attempt ended (a sync tool in its thread): a
        `concurrent.futures.Future`, so the engine can wait for it before a retry."""
        self.note = ""
        """What the adapter did when the attempt was stopped ("its process group was
        killed"): added to a timeout's message."""
        self.details: Any = None
        """What the adapter knows of a stopped attempt (a script's stderr): a timeout's details."""
        self.no_retry = ""
        """Why a timeout of this attempt must not be retried (a POST that may have run), or
        empty: set by the adapter, added to the timeout's message."""
        self.notes: list[dict[str, Any]] = []
        """What the tool reported during the attempt (`report_progress`, `report_log`)."""

    @property
    def format(self) -> str:
        """The wanted output format, `json` or `raw`."""
        return self.call.options.format

    @property
    def secrets(self) -> set[str]:
        """Values to mask in every message; adapters add those they resolve (`${VAR}`s)."""
        return self.call.secrets

    @property
    def call_id(self) -> str:
        """The call's id."""
        return self.call.call_id

    @property
    def timeout_s(self) -> float:
        """The per-attempt timeout, in seconds."""
        return self.call.options.timeout / 1000.0

    def limit(self) -> float:
        """`clock.now()` reading at which the attempt ends: timeout from its run, or deadline."""
        started = self.run_started
        run_limit = math.inf if started is None else started + self.timeout_s
        return min(run_limit, self.call.deadline)

    def remaining_s(self) -> float:
        """Seconds left before the attempt's limit (what an I/O timeout should be)."""
        return max(self.limit() - self.call.clock.now(), 0.0)

    def mark_waiting(self, what: str) -> None:
        """Say the attempt now waits for `what` (a worker thread…): not the tool's own time."""
        self.waiting_for = what
        self.run_started = None

    def mark_running(self) -> None:
        """Say the tool's own run begins now; its timeout counts from here (thread-safe)."""
        self.run_started = self.call.clock.now()

    def mark_output(self) -> None:
        """Say the tool's output exists now (thread-safe; the first mark wins)."""
        if self.output_at is None:
            self.output_at = self.call.clock.now()

    def was_late(self) -> bool:
        """Say whether the output came after the attempt's limit (the result does not count)."""
        return self.output_at is not None and self.output_at > self.limit()

    def report_progress(self, progress: float, total: float | None = None,
                        message: str | None = None) -> None:
        """Report the tool's progress: kept with the attempt, told to whoever follows the call."""
        self._note({"kind": "progress", "progress": progress, "total": total,
                    "message": message})
        self.call.emit("progress", self.attempt, progress=progress, total=total, message=message)

    def report_log(self, message: str, level: str = "info") -> None:
        """Report a log message of the tool: kept with the attempt, told to its followers."""
        self._note({"kind": "log", "level": level, "message": message})
        self.call.emit("log", self.attempt, message=message)

    def _note(self, note: dict[str, Any]) -> None:
        if len(self.notes) < MAX_NOTES:  # a chatty tool must not fill the history
            self.notes.append({"at": round(self.call.elapsed_ms(), 3),
                               **{k: v for k, v in note.items() if v is not None}})
