"""The portal: a private event loop in a daemon thread, where sync code runs coroutines.

Why not nest-asyncio: it patches the user's loop (ipykernel's included) globally and behind
their back, and `nest_asyncio` is archived. A loop of our own in its own thread works the same
inside a Jupyter cell, a widget callback, a plain script or another thread, and gives
long-lived async resources (MCP sessions, pooled HTTP connections) one loop to live on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["Portal"]

T = TypeVar("T")


class Portal:
    """Owns one event loop running in a daemon thread, started on first use."""

    def __init__(self, name: str = "toolcaller-loop") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The running private loop (started if needed)."""
        loop = self._loop
        if loop is not None:
            return loop
        with self._lock:
            if self._loop is None:
                ready = threading.Event()
                new_loop = asyncio.new_event_loop()

                def serve() -> None:
                    asyncio.set_event_loop(new_loop)
                    new_loop.call_soon(ready.set)
                    new_loop.run_forever()

                self._thread = threading.Thread(target=serve, name=self._name, daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = new_loop
            return self._loop

    @property
    def started(self) -> bool:
        """Say whether the private loop is running (it starts on first use)."""
        return self._loop is not None

    def in_loop_thread(self) -> bool:
        """Say whether the caller runs on the private loop's own thread."""
        return self._thread is not None and threading.current_thread() is self._thread

    def turns(self, within_s: float) -> bool:
        """Say whether the loop runs a no-op within `within_s` (is not blocked)."""
        ran = threading.Event()
        try:
            self.loop.call_soon_threadsafe(ran.set)
        except RuntimeError:  # closed
            return False
        return ran.wait(within_s)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule a coroutine on the private loop and return a thread-safe future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the private loop and wait for its result in this thread."""
        if self.in_loop_thread():
            coro.close()
            raise RuntimeError("Portal.run called from its own loop: use await instead")
        future = self.submit(coro)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # Ctrl-C (or any interruption) here must not leave it running there
            raise

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await a coroutine that must run on the private loop, from any other loop."""
        if self.in_loop_thread():
            return await coro
        return await asyncio.wrap_future(self.submit(coro))

    def close(self) -> None:
        """Stop the loop and join its thread (pending work is cancelled)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return

        async def cancel_all() -> None:
            current = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if thread is not threading.current_thread():
            with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
                asyncio.run_coroutine_threadsafe(cancel_all(), loop).result(timeout=5)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            if not thread.is_alive():
                loop.close()
        else:
            loop.call_soon(loop.stop)
