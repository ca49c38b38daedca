"""Blocking work in worker threads: the one way an adapter runs a sync function.

A `concurrent.futures.ThreadPoolExecutor` of at most 64 threads. A sync attempt that timed
out keeps its thread until it returns (Python cannot stop a thread), so a pool full of such
stragglers makes new attempts wait: they wait honestly (the wait is not the tool's time, and
the deadline bounds it) instead of piling up threads without end. A job whose attempt ended
before a thread took it never runs.

A known cost of the standard pool: at interpreter exit, Python waits for its threads, so a
sync tool stuck in a thread keeps a script from exiting until it returns (the CLI exits
anyway). Tools that may hang belong in `isolation: "process"`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections.abc import Callable
from typing import Any

from toolcaller.core.context import AttemptContext

__all__ = ["MAX_THREADS", "ThreadRunner"]

MAX_THREADS = 64


class ThreadRunner:
    """Runs blocking calls for attempts, in a bounded pool of worker threads."""

    def __init__(self, max_threads: int = MAX_THREADS) -> None:
        self.max_threads = max_threads
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._prefix = f"toolcaller-worker-{id(self):x}"
        self._lock = threading.Lock()
        self.busy = 0
        """Threads running a job now (stragglers included)."""

    async def run(self, ctx: AttemptContext, fn: Callable[..., Any], /, **kwargs: Any) -> Any:
        """Run `fn(**kwargs)` in a worker thread; the attempt's own run starts in that thread.

        Cancelled before a thread took it, the job never runs; cancelled while it runs, it
        goes on, and `ctx.straggler` holds its future.
        """
        full = self.busy >= self.max_threads
        ctx.mark_waiting(f"a worker thread (all {self.max_threads} were busy)" if full
                         else "a worker thread")
        context = contextvars.copy_context()  # the tool sees the caller's context variables
        job = self._executor().submit(self._job, ctx, context, fn, kwargs)
        try:
            return await asyncio.wrap_future(job)
        except asyncio.CancelledError:
            if not job.cancel() and not job.done():  # a thread runs it: it goes on
                ctx.straggler = job
            raise

    def _job(self, ctx: AttemptContext, context: contextvars.Context, fn: Callable[..., Any],
             kwargs: dict[str, Any]) -> Any:
        with self._lock:
            self.busy += 1
        ctx.mark_running()
        try:
            return context.run(fn, **kwargs)
        finally:
            ctx.mark_output()
            with self._lock:
                self.busy -= 1

    def _executor(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:  # made on first use, and again after `shutdown`
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    self.max_threads, thread_name_prefix=self._prefix)
            return self._pool

    @property
    def alive(self) -> int:
        """Worker threads alive now (idle ones included)."""
        return sum(1 for t in threading.enumerate() if t.name.startswith(self._prefix))

    def shutdown(self) -> None:
        """Let idle threads go; jobs not started are dropped, running ones end on their own."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
