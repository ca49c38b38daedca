"""Process isolation for sync Python tools: warm worker processes, killed on timeout.

Why not a library pool (pebble, `concurrent.futures.ProcessPoolExecutor`): they start workers
through `multiprocessing`, whose spawn and forkserver starts import the caller's `__main__`
in every worker, so a plain script without a `__main__` guard runs again in each of them and
makes its own calls (the bug this module was rewritten for). Here a worker is a plain child,
`python -m toolcaller.adapters._worker`, talking over its stdin and stdout; it never imports
the caller's script. `python -m benchmarks --only process` compares it with pebble.

A worker serves one attempt at a time. Starting one is not the tool's time: the attempt waits
for it (`mark_waiting`) within the call's deadline, and a start the deadline cut goes on in
the background for the next call. On timeout, cancellation or death the worker's process
group is killed and a replacement starts in the background.
"""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection

from toolcaller._types import JSONObject
from toolcaller.core.context import AttemptContext
from toolcaller.core.tool import Tool
from toolcaller.errors import ErrorCode, ExecutionError, ToolCallError

__all__ = ["MAX_IDLE", "ProcessPool"]

MAX_IDLE = 4
EXIT_STATUS_WAIT_S = 1.0
WORKER = [sys.executable, "-m", "toolcaller.adapters._worker"]


class _Worker:
    """One worker process and the two ends of its protocol pipe (made in a starter thread)."""

    def __init__(self) -> None:
        started = time.monotonic()
        self.proc = subprocess.Popen(WORKER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     process_group=0, close_fds=True)
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.send = Connection(os.dup(self.proc.stdin.fileno()), readable=False)
        self.recv = Connection(os.dup(self.proc.stdout.fileno()), writable=False)
        self.proc.stdin.close()
        self.proc.stdout.close()
        try:
            self.send.send_bytes(pickle.dumps(sys.path))
            if pickle.loads(self.recv.recv_bytes()) != "ready":
                raise RuntimeError("the worker process did not say it was ready")
        except BaseException:
            self.kill()
            raise
        self.start_s = time.monotonic() - started
        """Seconds the worker took to start and import what it needs."""

    def kill(self) -> None:
        """SIGKILL the worker's process group and reap it in the background."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self.proc.returncode is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
        for conn in (self.send, self.recv):
            with contextlib.suppress(OSError):
                conn.close()
        _in_background(self.proc.wait)

    def exit_text(self) -> str:
        """Say how the worker ended (waiting briefly for its exit status)."""
        try:
            code = self.proc.wait(EXIT_STATUS_WAIT_S)
        except subprocess.TimeoutExpired:
            return "the worker process stopped answering"
        if code < 0:
            return f"the worker process was killed by {signal.Signals(-code).name}"
        return f"the worker process exited with status {code}"


class ProcessPool:
    """Runs picklable sync callables in worker processes; kills a worker whose attempt ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[_Worker]]] = deque()
        self._starting = 0
        self._closed = False
        self.start_times_s: list[float] = []
        """How long each worker took to start (seconds), oldest first."""

    async def run(self, ctx: AttemptContext, tool: Tool, params: JSONObject) -> object:
        """Run one attempt of `tool` in a worker; cancelling it kills the worker."""
        payload = _payload(tool, params, ctx.format)
        worker = await self._acquire(ctx)
        ctx.mark_waiting("the tool's module to load in its worker process")
        loop = asyncio.get_running_loop()
        try:
            worker.send.send_bytes(payload)
            reply = await _read(loop, worker)
            if reply == _LOADED:  # the function is imported: the tool's own run begins
                ctx.mark_running()
                reply = await _read(loop, worker)
        except (EOFError, OSError) as exc:
            self._discard(worker)
            raise ExecutionError(f"{worker.exit_text()} during the call") from exc
        except BaseException:  # the attempt ended (timeout, cancel): the tool must not go on
            self._discard(worker)
            ctx.note = "its worker process was killed"
            raise
        self._release(worker)
        return _unpack(reply)

    async def _acquire(self, ctx: AttemptContext) -> _Worker:
        """Take an idle worker, or wait for one started in the background (not charged)."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[_Worker] = loop.create_future()
        worker: _Worker | None = None
        spare = start = False
        with self._lock:
            if self._closed:
                raise ExecutionError("the caller was closed", permanent=True)
            if self._idle:
                worker = self._idle.pop()
                spare = not self._idle and not self._starting
                if spare:  # one worker stays ready for the next attempt: starting one is slow
                    self._starting += 1
            else:
                self._waiters.append((loop, waiter))
                start = self._starting < len(self._waiters)
                if start:
                    self._starting += 1
        if worker is not None:
            if spare:
                self._start_in_background()
            return worker
        ctx.mark_waiting("a worker process to start" if start or self._starting
                         else "a free worker process")
        if start:
            self._start_in_background()
        try:
            return await waiter
        except asyncio.CancelledError:
            with self._lock:
                if (loop, waiter) in self._waiters:
                    self._waiters.remove((loop, waiter))
            if waiter.done() and not waiter.cancelled():
                self._release(waiter.result())  # it arrived just now: keep it for the next
            raise

    def _start(self) -> None:
        """Start a worker (in a thread of its own) and hand it to a waiter, or keep it idle."""
        try:
            worker = _Worker()
        except Exception as exc:  # noqa: BLE001 - the waiting attempt reports it
            with self._lock:
                self._starting -= 1
                waiter = self._waiters.popleft() if self._waiters else None
            if waiter is not None:
                self._settle(waiter, error=ExecutionError(f"cannot start a worker process: {exc}"))
            return
        with self._lock:
            self._starting -= 1
            self.start_times_s.append(worker.start_s)
        self._release(worker)

    def _release(self, worker: _Worker) -> None:
        """Give a worker to the first waiter, or keep it idle (kill it past `MAX_IDLE`)."""
        while True:
            with self._lock:
                waiter = self._waiters.popleft() if self._waiters else None
                if waiter is None:
                    keep = not self._closed and len(self._idle) < MAX_IDLE
                    if keep:
                        self._idle.append(worker)
                    break
            if self._settle(waiter, worker=worker):
                return
        if not keep:
            worker.kill()

    def _discard(self, worker: _Worker) -> None:
        """Kill a worker and start its replacement in the background, for the next attempt."""
        worker.kill()
        with self._lock:
            replace = not self._closed and not self._idle and not self._starting
            if replace:
                self._starting += 1
        if replace:
            self._start_in_background()

    def _start_in_background(self) -> None:
        _in_background(self._start)

    async def aclose(self) -> None:
        """Kill every idle worker; workers in use are killed when their attempt ends."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            waiters = list(self._waiters)
            self._waiters.clear()
        for worker in idle:
            worker.kill()
        for waiter in waiters:
            self._settle(waiter, error=ExecutionError("the caller was closed", permanent=True))

    def _settle(self, waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[_Worker]], *,
                worker: _Worker | None = None, error: Exception | None = None) -> bool:
        """Hand a worker (or an error) to a waiting attempt on its loop; False if it cannot."""
        loop, future = waiter

        def settle() -> None:
            if future.done():  # the attempt gave up meanwhile: the worker serves another
                if worker is not None:
                    self._release(worker)
            elif worker is not None:
                future.set_result(worker)
            elif error is not None:
                future.set_exception(error)

        try:
            loop.call_soon_threadsafe(settle)
        except RuntimeError:  # the waiter's loop is closed
            return False
        return True


_LOADED = pickle.dumps("loaded")


async def _read(loop: asyncio.AbstractEventLoop, worker: _Worker) -> bytes:
    """Wait on the loop until the worker has a message, and read it."""
    readable: asyncio.Future[None] = loop.create_future()
    fd = worker.recv.fileno()
    loop.add_reader(fd, _set, readable)
    try:
        await readable
    finally:
        loop.remove_reader(fd)
    return worker.recv.recv_bytes()


def _in_background(fn: Callable[[], object]) -> None:
    """Run `fn` in a new thread without waiting for the thread to start.

    `threading.Thread.start()` waits until the new thread runs: 7 ms of a timed-out attempt's
    answer on a loaded machine (`python -m benchmarks --only process`), spent before it
    returns. The answer must not wait for reaping a killed worker or starting the next one.
    """
    _thread.start_new_thread(fn, ())


def _set(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _payload(tool: Tool, params: JSONObject, fmt: str) -> bytes:
    target = tool.target
    if callable(target) and getattr(target, "__module__", None) == "__main__":
        raise ExecutionError(
            f"tool {tool.name!r} is defined in the __main__ script; a worker process never "
            "imports that script (it would run it again): define the function in a module",
            permanent=True)
    try:
        return pickle.dumps((target, str(tool.base_dir or ""), params, fmt,
                             tool.permanent_errors))
    except Exception as exc:
        raise ExecutionError(
            f"cannot send tool {tool.name!r} to a worker process ({exc}); define the function "
            "in an importable module or give its 'module:function' path",
            permanent=True,
        ) from exc


def _unpack(reply: bytes) -> object:
    status, value = pickle.loads(reply)
    if status == "ok":
        return value
    code, message, details, retryable = value
    error = ToolCallError.__new__(_CODE_TO_CLASS.get(code, ExecutionError))
    ToolCallError.__init__(error, message, details=details)
    error.retryable = retryable
    raise error


def _classes() -> dict[str, type[ToolCallError]]:
    from toolcaller import errors

    found: dict[str, type[ToolCallError]] = {}
    for name in errors.__all__:
        cls = getattr(errors, name)
        if isinstance(cls, type) and issubclass(cls, ToolCallError) and hasattr(cls, "code"):
            found.setdefault(cls.code.value, cls)
    return found


_CODE_TO_CLASS = _classes()
_CODE_TO_CLASS[ErrorCode.EXECUTION_ERROR.value] = ExecutionError
