"""CallRunner: one call at a time, never blocking the kernel, followed live and cancellable.

Call, Re-run and "edit and resend" all go through a runner. On a running event loop (ipykernel
runs one) the call is a task on that loop; elsewhere it runs on the caller's private loop
thread. Either way the kernel stays free: a search typed meanwhile is answered at once.
`cancel()` cancels the task; the engine records the call as `cancelled` in the history.

While a call runs, the runner keeps a `Job` up to date from the engine's events (attempt n of
m, the wait before the next retry, progress and log messages) and ticks every `TICK_S` so that
the elapsed time moves; listeners hear `start`, `tick` (events included) and `done`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from toolcaller.core.events import CallEvent
from toolcaller.envelope import Envelope

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["CallRunner", "Job", "JobListener"]

TICK_S = 0.25
MAX_NOTES = 20  # progress and log lines kept for the running display
CallFuture = asyncio.Future[Envelope] | concurrent.futures.Future[Envelope]


@dataclass
class Job:
    """One call started from a view: its request, its live state and how it ended."""

    name: str
    params: Any
    options: dict[str, Any]
    origin: str = "call"
    """What started it: "call", "re-run" or "resend"."""
    parent: str | None = None
    """The call id it repeats (a re-run's or a resend's original), for a diff."""
    started_wall: float = field(default_factory=time.time)
    started: float = field(default_factory=time.monotonic)
    attempt: int = 0
    max_attempts: int = 0
    waiting_ms: float | None = None
    """The pause before the next attempt, while the call waits for it."""
    wait_started: float = 0.0
    last_code: str | None = None
    progress: tuple[float, float | None] | None = None
    notes: list[str] = field(default_factory=list)
    """Progress and log messages the tool reported, oldest first."""
    envelope: Envelope | None = None
    cancelled: bool = False
    problem: str = ""
    """Why the call could not run at all (not an envelope: a broken engine, a bad request)."""
    ended: float | None = None

    @property
    def request(self) -> dict[str, Any]:
        """The JSON request this call sent (`toolName`, `params`, `options`)."""
        return {"toolName": self.name, "params": copy.deepcopy(self.params),
                "options": copy.deepcopy(self.options)}

    @property
    def elapsed_ms(self) -> float:
        """Milliseconds since the call started (until it ended)."""
        end = self.ended if self.ended is not None else time.monotonic()
        return (end - self.started) * 1000

    @property
    def wait_left_ms(self) -> float | None:
        """Milliseconds left of the pause before the next attempt, while there is one."""
        if self.waiting_ms is None:
            return None
        return max(self.waiting_ms - (time.monotonic() - self.wait_started) * 1000, 0.0)

    def hear(self, event: CallEvent) -> None:
        """Follow one engine event."""
        self.max_attempts = event.max_attempts
        if event.kind == "attempt":
            self.attempt, self.waiting_ms = event.attempt, None
        elif event.kind == "attempt_end":
            self.last_code = event.code
        elif event.kind == "wait":
            self.attempt = event.attempt - 1
            self.waiting_ms, self.wait_started = event.wait_ms or 0.0, time.monotonic()
        elif event.kind == "progress":
            self.progress = (event.progress or 0.0, event.total)
            if event.message:
                self._note(event.message)
        elif event.kind == "log" and event.message:
            self._note(event.message)

    def _note(self, message: str) -> None:
        self.notes = [*self.notes, message][-MAX_NOTES:]


JobListener = Callable[[Literal["start", "tick", "done"], Job], None]


class CallRunner:
    """Runs one call at a time for the views that share it (see the module docstring)."""

    def __init__(self, caller: ToolCaller) -> None:
        self.caller = caller
        self.job: Job | None = None
        """The call under way, or None."""
        self.last: Job | None = None
        """The last call that ended."""
        self._task: CallFuture | None = None
        self._lock = threading.Lock()
        self._listeners: list[JobListener] = []

    @property
    def running(self) -> bool:
        """Whether a call is under way."""
        return self._task is not None

    def listen(self, listener: JobListener) -> None:
        """Call `listener(what, job)` on `start`, on each `tick` and when `done`."""
        self._listeners.append(listener)

    def start(self, job: Job) -> bool:
        """Start `job` unless a call is under way; return whether it started."""
        with self._lock:
            if self._task is not None:
                return False
            self.job = job
        coro = self._run(job)
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        task: CallFuture
        if loop is not None and not self.caller.portal.in_loop_thread():
            task = asyncio.ensure_future(coro)  # the kernel's loop: async tools run there
        else:
            task = self.caller.portal.submit(coro)
        with self._lock:
            self._task = task
        self._tell("start", job)  # running from here on; "done" can only come after it
        task.add_done_callback(lambda done: self._finish(job, done))
        return True

    def cancel(self) -> bool:
        """Cancel the call under way; return whether there was one to cancel."""
        task = self._task
        return task is not None and task.cancel()

    async def wait(self) -> Job | None:
        """Await the call under way (if any) and return it once it has ended."""
        task, job = self._task, self.job
        if task is not None and job is not None:
            waited = task if isinstance(task, asyncio.Future) else asyncio.wrap_future(task)
            await asyncio.wait([waited])
            self._finish(job, task)
        return self.last

    def run_now(self, job: Job) -> Job:
        """Run `job` synchronously (`caller.call`), as scripts without an event loop do."""
        self.job = job
        self._tell("start", job)
        try:
            job.envelope = self.caller.call(job.name, job.params, job.options or None,
                                            on_event=job.hear)
        except Exception as exc:  # noqa: BLE001 - a view shows it, never raises it
            job.problem = f"the call could not run: {type(exc).__name__}: {exc}"
        self._end(job)
        return job

    async def _run(self, job: Job) -> Envelope:
        ticker = asyncio.ensure_future(self._tick(job))
        try:
            return await self.caller.acall(job.name, job.params, job.options or None,
                                           on_event=lambda event: self._hear(job, event))
        finally:
            ticker.cancel()

    def _hear(self, job: Job, event: CallEvent) -> None:
        job.hear(event)
        self._tell("tick", job)

    async def _tick(self, job: Job) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            self._tell("tick", job)

    def _finish(self, job: Job, task: CallFuture) -> None:
        """Record how the call ended (once, whoever gets here first: the callback or `wait`)."""
        with self._lock:
            if self._task is not task:
                return
            self._task = None
        if task.cancelled():
            job.cancelled = True
        else:
            try:
                job.envelope = task.result()
            except Exception as exc:  # noqa: BLE001 - a view shows it, never raises it
                job.problem = f"the call failed: {type(exc).__name__}: {exc}"
        self._end(job)

    def _end(self, job: Job) -> None:
        job.ended = time.monotonic()
        self.job, self.last = None, job
        self._tell("done", job)

    def _tell(self, what: Literal["start", "tick", "done"], job: Job) -> None:
        if what == "tick" and job.ended is not None:
            return  # a late event of a call already shown as ended (cancelled)
        for listener in list(self._listeners):
            try:
                listener(what, job)
            except Exception:  # noqa: BLE001 - a broken view must not break the call
                continue
