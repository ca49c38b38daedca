"""A small pool of worker threads for sync tools, with a cheap lock-based hand-off.

`concurrent.futures` costs ~60 µs per round trip here; a `SimpleQueue` plus a bare lock costs
~30. Threads are bounded (`max_workers`): a sync attempt that timed out keeps its thread until
it returns (Python cannot kill a thread), so a pool full of such stragglers makes new attempts
wait, and they time out honestly instead of piling up threads without end. A job whose
attempt timed out before a worker took it is cancelled: it never runs.
"""

from __future__ import annotations

import _thread
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Job", "WorkerPool"]

IDLE_EXIT_S = 60.0


class Job:
    """One function run in a worker thread; `wait()` for it, read `result` or `error`.

    `running` is true until the job has finished or was cancelled before it started.
    """

    __slots__ = ("_claim", "_done", "callback", "cancelled", "context", "error", "fn", "kwargs",
                 "reserved", "result", "running")

    def __init__(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        self.fn = fn
        self.kwargs = kwargs
        self.result: Any = None
        self.error: BaseException | None = None
        self.running = True
        self.reserved = False
        self.callback: Callable[[Job], None] | None = None
        self.context = contextvars.copy_context()
        self.cancelled = False
        self._done = _thread.allocate_lock()
        self._done.acquire()
        # Whoever takes this lock first decides: the worker (the job runs) or cancel() (it
        # never does); one atomic acquire, no check-then-act race.
        self._claim = _thread.allocate_lock()

    def cancel(self) -> bool:
        """Make sure the job never runs; False if it has already started (or finished)."""
        if not self._claim.acquire(False):
            return False
        self.cancelled = True
        self.running = False
        self._done.release()
        return True

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait until the job finished; return whether it did within `timeout_s`."""
        if not self.running:
            return True
        if self._done.acquire(True, -1 if timeout_s is None else max(timeout_s, 0.0)):
            self._done.release()
            return True
        return False

    def _run(self) -> None:
        if not self._claim.acquire(False):
            return  # cancelled while queued: its caller was told it timed out
        try:
            self.result = self.context.run(self.fn, **self.kwargs)
        except BaseException as exc:  # noqa: BLE001 - a tool's SystemExit must not kill the worker
            self.error = exc
        self.running = False
        self._done.release()
        if self.callback is not None:
            with contextlib.suppress(Exception):  # a worker thread must outlive any callback
                self.callback(self)


class WorkerPool:
    """Runs jobs on up to `max_workers` daemon threads, started on demand."""

    def __init__(self, max_workers: int = 64, name: str = "toolcaller-worker") -> None:
        self.max_workers = max_workers
        self._name = name
        self._queue: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0

    @property
    def threads(self) -> int:
        """Worker threads alive now."""
        return self._threads

    @property
    def busy(self) -> int:
        """Worker threads running a job now."""
        return self._threads - self._idle

    def submit(self, fn: Callable[..., Any], kwargs: dict[str, Any],
               callback: Callable[[Job], None] | None = None) -> Job:
        """Queue `fn(**kwargs)`; `callback(job)` runs in the worker when it ends."""
        job = Job(fn, kwargs)
        job.callback = callback
        spawn = False
        with self._lock:
            if self._idle > 0:
                self._idle -= 1
                job.reserved = True
            elif self._threads < self.max_workers:
                self._threads += 1
                spawn = True
                job.reserved = True
        self._queue.put(job)
        if spawn:
            threading.Thread(target=self._work, name=self._name, daemon=True).start()
        return job

    def _work(self) -> None:
        while True:
            try:
                job = self._queue.get(timeout=IDLE_EXIT_S)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # an idle slot nobody reserved: this thread may go
                        self._idle -= 1
                        self._threads -= 1
                        return
                continue
            if job is None:
                with self._lock:
                    self._threads -= 1
                return
            if not job.reserved:
                with self._lock:
                    self._idle -= 1
            job._run()
            with self._lock:
                self._idle += 1

    def shutdown(self) -> None:
        """Ask idle workers to exit (busy ones exit when their job ends)."""
        for _ in range(self._threads):
            self._queue.put(None)
