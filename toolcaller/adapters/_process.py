"""Process isolation for sync Python tools: warm child processes that are killed on timeout.

Children come from the `forkserver` start method (forking a process that already runs threads
can deadlock). A child serves one attempt at a time; on timeout or death it is killed and
replaced, so a hung tool is really gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
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


class _Worker:
    def __init__(self, context: Any) -> None:
        parent, child = context.Pipe()
        self.conn: Connection = parent
        self.process = context.Process(target=_serve, args=(child,), daemon=True)
        self.process.start()
        child.close()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, OSError, ValueError):
            if self.process.pid is not None:
                os.kill(self.process.pid, signal.SIGKILL)
        self.process.join(timeout=5)
        self.conn.close()

    def exit_text(self) -> str:
        self.process.join(timeout=1)
        code = self.process.exitcode
        if code is None:
            return "the child process stopped answering"
        if code < 0:
            return f"the child process was killed by {signal.Signals(-code).name}"
        return f"the child process exited with status {code}"


class ProcessPool:
    """Runs picklable sync callables in child processes; kills a child whose attempt times out."""

    def __init__(self) -> None:
        self._context = multiprocessing.get_context("forkserver")
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False

    def warm(self) -> None:
        """Make sure one idle child is ready (started in the calling thread if none is)."""
        with self._lock:
            if self._idle or self._closed:
                return
        self._give_back(_Worker(self._context))

    def _take(self) -> _Worker:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return _Worker(self._context)

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < MAX_IDLE and worker.process.is_alive():
                self._idle.append(worker)
                return
        worker.kill()

    def run(self, tool: Tool, fn: Callable[..., Any], kwargs: JSONObject,
            ctx: AttemptContext) -> object:
        """Run in a child and wait at most `ctx.timeout_s`; kill the child on timeout."""
        began = time.monotonic()
        payload = _payload(tool, fn, kwargs, ctx)
        worker = self._take()
        try:
            worker.conn.send_bytes(payload)
            if not worker.conn.poll(max(ctx.timeout_s - (time.monotonic() - began), 0.0)):
                worker.kill()
                raise ToolTimeoutError(_killed(ctx))
            reply = worker.conn.recv_bytes()
        except (EOFError, OSError) as exc:
            worker.kill()
            raise ExecutionError(f"{worker.exit_text()} during the call") from exc
        self._give_back(worker)
        return _unpack(reply)

    async def arun(self, tool: Tool, fn: Callable[..., Any], kwargs: JSONObject,
                   ctx: AttemptContext) -> object:
        """Run in a child without blocking the loop; cancellation kills the child."""
        payload = _payload(tool, fn, kwargs, ctx)
        worker = await asyncio.to_thread(self._take)
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
        except asyncio.CancelledError:
            loop.remove_reader(fd)
            worker.kill()
            raise
        except (EOFError, OSError) as exc:
            loop.remove_reader(fd)
            worker.kill()
            raise ExecutionError(f"{worker.exit_text()} during the call") from exc
        loop.remove_reader(fd)
        self._give_back(worker)
        return _unpack(reply)

    def close(self) -> None:
        """Kill every idle child."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()


def _killed(ctx: AttemptContext) -> str:
    return f"no result within {ctx.timeout_s * 1000:.0f} ms; the child process was killed"


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
