"""Process isolation for sync Python tools: warm child processes that are killed on timeout.

Children come from the `forkserver` start method (forking a process that already runs threads
can deadlock). A child serves one attempt at a time; on timeout or death it is killed and
replaced, so a hung tool is really gone. Both the reaping of a killed child and the start of
its replacement happen in the background: neither may spend an attempt's time.
"""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import multiprocessing
import pickle
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.adapters.base import AttemptContext
from toolcaller.core.tool import Tool
from toolcaller.errors import ErrorCode, ExecutionError, ToolCallError, ToolTimeoutError

__all__ = ["ProcessPool"]

MAX_IDLE = 4
REAP_WAIT_S = 30.0
EXIT_STATUS_WAIT_S = 1.0


class _Worker:
    def __init__(self, context: Any) -> None:
        parent, child = context.Pipe()
        try:
            self.process = context.Process(target=_serve, args=(child,), daemon=True)
            self.process.start()
        except BaseException:
            parent.close()
            raise
        finally:
            child.close()
        self.conn: Connection = parent

    def kill(self) -> None:
        """SIGKILL the child and return at once; it is reaped in the background."""
        # Tearing down a child's memory takes time (~70 ms for 400 MB) that belongs to no
        # attempt; the reaper then closes the Process so its descriptors do not wait for GC.
        with contextlib.suppress(OSError, ValueError):
            if self.process.exitcode is None:  # a dead child's pid may be another process's now
                self.process.kill()
        self.conn.close()
        _in_background(_reap, self.process)

    def exit_text(self, wait_s: float) -> str:
        self.process.join(timeout=wait_s)
        code = self.process.exitcode
        if code is None:
            return "the child process stopped answering"
        if code < 0:
            return f"the child process was killed by {signal.Signals(-code).name}"
        return f"the child process exited with status {code}"


def _in_background(fn: Callable[..., object], *args: object) -> bool:
    # Not threading.Thread: its start() waits until the new thread runs, which on a loaded
    # machine costs the caller milliseconds it does not have at the end of an attempt.
    try:
        _thread.start_new_thread(fn, args)
    except RuntimeError:  # no thread can be made (limits, or the interpreter is exiting)
        return False
    return True


def _reap(process: Any) -> None:
    process.join(timeout=REAP_WAIT_S)
    with contextlib.suppress(ValueError):  # still running after SIGKILL: leave it to GC
        process.close()


class ProcessPool:
    """Runs picklable sync callables in child processes; kills a child whose attempt times out."""

    def __init__(self) -> None:
        self._context = multiprocessing.get_context("forkserver")
        self._idle: list[_Worker] = []
        self._changed = threading.Condition(threading.Lock())
        """Guards the fields below; notified when a child becomes idle or a start fails."""
        self._starting = 0
        self._waiting = 0
        self._failure: Exception | None = None
        self._closed = False

    def warm(self) -> None:
        """Make sure one idle child is ready (started in the calling thread if none is)."""
        with self._changed:
            if self._idle or self._starting or self._closed:
                return  # a child being started in the background will do
            self._starting += 1
        self._spawn()

    def run(self, tool: Tool, fn: Callable[..., Any], kwargs: JSONObject,
            ctx: AttemptContext, began: float | None = None) -> object:
        """Run in a child and wait at most `ctx.timeout_s` from `began`; kill it on timeout."""
        began = time.monotonic() if began is None else began
        payload = _payload(tool, fn, kwargs, ctx)
        worker = self._take(_left(ctx, began))
        if worker is None:
            raise ToolTimeoutError(_no_child(ctx))
        try:
            worker.conn.send_bytes(payload)
            answered = worker.conn.poll(_left(ctx, began))
            reply = worker.conn.recv_bytes() if answered else b""
        except (EOFError, OSError) as exc:
            raise self._crashed(worker, _left(ctx, began)) from exc
        except BaseException:  # Ctrl-C while waiting: the tool must not go on in its child
            self._discard(worker)
            raise
        if not answered:
            self._discard(worker)
            raise ToolTimeoutError(_killed(ctx))
        self._give_back(worker)
        return _unpack(reply)

    async def arun(self, tool: Tool, fn: Callable[..., Any], kwargs: JSONObject,
                   ctx: AttemptContext) -> object:
        """Run in a child without blocking the loop; cancellation kills the child."""
        began = time.monotonic()
        payload = _payload(tool, fn, kwargs, ctx)
        worker = await self._atake(_left(ctx, began))
        if worker is None:
            raise ToolTimeoutError(_no_child(ctx))
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        fd = worker.conn.fileno()

        def readable() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(fd, readable)
        try:
            worker.conn.send_bytes(payload)
            await ready
            reply = worker.conn.recv_bytes()
        except (EOFError, OSError) as exc:
            loop.remove_reader(fd)
            raise self._crashed(worker, _left(ctx, began)) from exc
        except BaseException:  # cancelled (the engine's timeout, or the caller's)
            loop.remove_reader(fd)
            self._discard(worker)
            raise
        loop.remove_reader(fd)
        self._give_back(worker)
        return _unpack(reply)

    def close(self) -> None:
        """Kill every idle child (children still starting are killed when they are up)."""
        with self._changed:
            self._closed = True
            idle, self._idle = self._idle, []
            self._changed.notify_all()
        for worker in idle:
            worker.kill()

    def _take(self, timeout_s: float) -> _Worker | None:
        """Pop an idle child, waiting at most `timeout_s` for one started in the background."""
        limit = time.monotonic() + timeout_s
        with self._changed:
            self._waiting += 1
            try:
                while not self._idle:
                    self._check_can_start()
                    if self._starting < self._waiting:
                        self._spawn_in_background()
                    left = limit - time.monotonic()
                    if left <= 0:
                        return None
                    self._changed.wait(left)
                return self._idle.pop()
            finally:
                self._waiting -= 1

    async def _atake(self, timeout_s: float) -> _Worker | None:
        worker = self._take(0.0)
        if worker is not None:
            return worker
        claim = _Claim(self)
        try:
            return await asyncio.to_thread(claim.take, timeout_s)
        except asyncio.CancelledError:
            claim.abandon()
            raise

    def _check_can_start(self) -> None:
        if self._closed:
            raise ExecutionError("the caller was closed while the call waited for a child process")
        failure = self._failure
        if failure is not None and not self._starting:
            self._failure = None  # the next attempt tries again
            raise ExecutionError(f"cannot start a child process: {failure}") from failure

    def _spawn_in_background(self) -> None:
        self._starting += 1
        if not _in_background(self._spawn):
            self._starting -= 1
            self._failure = RuntimeError("no thread could be started to start it")

    def _spawn(self) -> None:
        """Start a child and make it idle (`_starting` was counted up by the caller)."""
        worker: _Worker | None = None
        failure: Exception | None = None
        try:
            worker = _Worker(self._context)
        except Exception as exc:  # noqa: BLE001 - reported to the attempt that waits for it
            failure = exc
        finally:
            with self._changed:
                self._starting -= 1
                self._failure = failure
                kept = worker is not None and self._keep(worker)
                self._changed.notify_all()
        if worker is not None and not kept:
            worker.kill()

    def _keep(self, worker: _Worker) -> bool:
        """Make `worker` idle if there is room (`_changed` held); say whether it was kept."""
        if not self._closed and len(self._idle) < MAX_IDLE and worker.process.is_alive():
            self._idle.append(worker)
            return True
        return False

    def _give_back(self, worker: _Worker) -> None:
        with self._changed:
            kept = self._keep(worker)
            self._changed.notify()
        if not kept:
            worker.kill()

    def _discard(self, worker: _Worker) -> None:
        """Kill a child and start its replacement in the background, for the next attempt."""
        worker.kill()
        with self._changed:
            if not (self._closed or self._idle or self._starting):
                self._spawn_in_background()

    def _crashed(self, worker: _Worker, left_s: float) -> ExecutionError:
        text = worker.exit_text(min(EXIT_STATUS_WAIT_S, max(left_s, 0.01)))
        self._discard(worker)
        return ExecutionError(f"{text} during the call")


class _Claim:
    """A child taken in a thread for a coroutine that may be cancelled before it arrives."""

    def __init__(self, pool: ProcessPool) -> None:
        self._pool = pool
        self._lock = threading.Lock()
        self._worker: _Worker | None = None
        self._abandoned = False

    def take(self, timeout_s: float) -> _Worker | None:
        worker = self._pool._take(timeout_s)
        with self._lock:
            if not self._abandoned:
                self._worker = worker
                return worker
        if worker is not None:
            self._pool._give_back(worker)
        return None

    def abandon(self) -> None:
        """Give back the child if it arrived after all (the coroutine will not use it)."""
        with self._lock:
            self._abandoned = True
            worker, self._worker = self._worker, None
        if worker is not None:
            self._pool._give_back(worker)


def _left(ctx: AttemptContext, began: float) -> float:
    return max(ctx.timeout_s - (time.monotonic() - began), 0.0)


def _killed(ctx: AttemptContext) -> str:
    return f"no result within {ctx.timeout_s * 1000:.0f} ms; the child process was killed"


def _no_child(ctx: AttemptContext) -> str:
    return (f"no result within {ctx.timeout_s * 1000:.0f} ms; the tool never started: no child "
            "process was ready in time (starting a replacement was slow; the machine may be "
            "busy)")


def _payload(tool: Tool, fn: Callable[..., Any], kwargs: JSONObject, ctx: AttemptContext) -> bytes:
    target = tool.target if isinstance(tool.target, str) else fn
    try:
        return pickle.dumps((target, str(tool.base_dir or ""), kwargs, ctx.format))
    except Exception as exc:
        raise ExecutionError(
            f"cannot send tool {tool.name!r} to a child process ({exc}); define the function "
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


def _serve(conn: Connection) -> None:  # pragma: no cover - runs in the child
    """Child loop: receive a call, run it, send back the result or the error."""
    from pathlib import Path

    from toolcaller.adapters.python import load_callable, translate_exception
    from toolcaller.core.results import to_json_result

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            target, base_dir, kwargs, fmt = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        try:
            fn = load_callable(target, Path(base_dir) if base_dir else None) if isinstance(
                target, str) else target
            value = fn(**kwargs)
            value = value if fmt == "raw" and _picklable(value) else to_json_result(value)
            reply = pickle.dumps(("ok", value))
        except BaseException as exc:  # noqa: BLE001 - report every failure to the parent
            error = translate_exception(exc, kwargs)
            reply = pickle.dumps(
                ("error", (error.code.value, error.message, error.details, error.retryable))
            )
        conn.send_bytes(reply)


def _picklable(value: object) -> bool:
    try:
        pickle.dumps(value)
    except Exception:  # noqa: BLE001 - unpicklable values go back as JSON instead
        return False
    return True
