"""Python tools: sync functions in worker threads (or a killable child process), async on the loop.

A target is a callable, `"package.module:function"`, or `"path/to/file.py:function"` (relative
to the registry file's folder). Imports happen on first call, never at discovery.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.adapters._threads import Job, WorkerPool
from toolcaller.adapters.base import AttemptContext
from toolcaller.core.tool import Tool
from toolcaller.errors import (
    ExecutionError,
    InvalidParamsError,
    ToolCallError,
    ToolTimeoutError,
)

__all__ = ["PythonAdapter", "load_callable", "translate_exception"]

TRACEBACK_CHARS = 4_000


@dataclass(slots=True)
class _Target:
    fn: Callable[..., Any]
    is_async: bool
    coerce: Callable[[JSONObject], JSONObject] | None


class PythonAdapter:
    """Runs Python callables: async ones on the loop, sync ones in threads or a child process."""

    kind = "python"

    def __init__(self, pool: WorkerPool | None = None) -> None:
        self.pool = pool or WorkerPool()
        self._processes: Any = None

    def supports_sync(self, tool: Tool) -> bool:
        """Say whether the sync path can run this tool (sync functions, or process isolation)."""
        try:
            target = self._target(tool)
        except ToolCallError:
            return True  # let run() report the import error
        if tool.isolation == "process":
            self._process_pool().warm()  # start a child now, not inside the attempt's time
            return True
        return not target.is_async

    def run(self, tool: Tool, params: JSONObject, ctx: AttemptContext) -> object:
        """Run one attempt and wait for it at most `ctx.timeout_s`."""
        target = self._target(tool)
        kwargs = _coerce(target, params)
        if tool.isolation == "process":
            return self._process_pool().run(tool, target.fn, kwargs, ctx)
        job = self.pool.submit(target.fn, kwargs)
        if not job.wait(ctx.timeout_s):
            ctx.straggler = job
            raise ToolTimeoutError(_thread_timeout_message(ctx, self.pool), straggler=job)
        return _outcome(job, params)

    async def arun(self, tool: Tool, params: JSONObject, ctx: AttemptContext) -> object:
        """Run one attempt on the running loop (the engine cancels it on timeout)."""
        target = self._target(tool)
        kwargs = _coerce(target, params)
        if tool.isolation == "process":
            return await self._process_pool().arun(tool, target.fn, kwargs, ctx)
        if target.is_async:
            try:
                return await target.fn(**kwargs)
            except (ToolCallError, asyncio.CancelledError):
                raise
            except BaseException as exc:  # SystemExit from a tool is the tool's failure
                raise translate_exception(exc, params) from exc
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Job] = loop.create_future()

        def finished(job: Job) -> None:
            # A straggler may end after its loop closed (asyncio.run returned): nobody waits.
            if not loop.is_closed():
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(_settle, future, job)

        job = self.pool.submit(target.fn, kwargs, finished)
        try:
            await future
        except asyncio.CancelledError:
            if job.running:
                ctx.straggler = job
            raise
        return _outcome(job, params)

    def _target(self, tool: Tool) -> _Target:
        target = tool.cache.get("python_target")
        if target is None:
            fn = tool.target if callable(tool.target) else load_callable(tool.target, tool.base_dir)
            unwrapped = inspect.unwrap(fn)
            target = _Target(
                fn=fn,
                is_async=inspect.iscoroutinefunction(unwrapped)
                or inspect.iscoroutinefunction(type(fn).__call__),
                coerce=tool.cache.get("coerce"),
            )
            tool.cache["python_target"] = target
        return target

    def _process_pool(self) -> Any:
        if self._processes is None:
            from toolcaller.adapters._process import ProcessPool

            self._processes = ProcessPool()
        return self._processes

    async def aclose(self) -> None:
        """Stop worker processes."""
        self.close()

    def close(self) -> None:
        """Stop worker processes and let idle threads go."""
        if self._processes is not None:
            self._processes.close()
            self._processes = None
        self.pool.shutdown()


def _settle(future: asyncio.Future[Job], job: Job) -> None:
    if not future.done():
        future.set_result(job)


def _coerce(target: _Target, params: JSONObject) -> JSONObject:
    if target.coerce is None:
        return params
    return target.coerce(params)


def _outcome(job: Job, params: JSONObject) -> object:
    if job.error is not None:
        raise translate_exception(job.error, params) from job.error
    return job.result


def _thread_timeout_message(ctx: AttemptContext, pool: WorkerPool) -> str:
    message = (
        f"no result within {ctx.timeout_s * 1000:.0f} ms; the sync tool goes on running in its "
        "worker thread (threads cannot be stopped: use isolation 'process' to kill it)"
    )
    if pool.busy >= pool.max_workers:
        message += f"; all {pool.max_workers} worker threads are busy"
    return message


def translate_exception(exc: BaseException, params: JSONObject | None = None) -> ToolCallError:
    """Map an exception raised by a tool's own code to a contract error."""
    if isinstance(exc, ToolCallError):
        return exc
    if isinstance(exc, TimeoutError):
        return ToolTimeoutError(f"the tool raised TimeoutError: {exc}", details=_trace(exc))
    if isinstance(exc, TypeError) and _is_signature_mismatch(exc):
        return InvalidParamsError(f"the params do not fit the function: {exc}")
    text = str(exc)
    name = type(exc).__name__
    message = f"{name}: {text}" if text else name
    return ExecutionError(message, details=_trace(exc))


def _is_signature_mismatch(exc: TypeError) -> bool:
    # A TypeError raised by the call itself has no frame inside the tool's code.
    tb = exc.__traceback__
    depth = 0
    while tb is not None:
        depth += 1
        tb = tb.tb_next
    text = str(exc)
    return depth <= 2 and ("argument" in text or "positional" in text)


def _trace(exc: BaseException) -> dict[str, Any]:
    """A stack summary of the tool's own frames, innermost last (the engine's are left out)."""
    frames = [
        f"{frame.filename}:{frame.lineno} in {frame.name}: {(frame.line or '').strip()}"
        for frame in traceback.extract_tb(exc.__traceback__)
        if not frame.filename.replace("\\", "/").endswith(_ENGINE_FRAMES)
    ][-8:]
    text = "\n".join(frames)
    if len(text) > TRACEBACK_CHARS:
        frames = ["…", *(f[-TRACEBACK_CHARS // 8:] for f in frames)]
    return {"type": type(exc).__qualname__, "stack": frames}


_ENGINE_FRAMES = ("toolcaller/adapters/_threads.py", "toolcaller/adapters/python.py",
                  "toolcaller/adapters/_process.py")


def load_callable(spec: str, base_dir: Path | None = None) -> Callable[..., Any]:
    """Import `"module:attr"` or `"path/file.py:attr"`; `ExecutionError` (permanent) if it fails."""
    module_part, sep, attr_path = str(spec).rpartition(":")
    if not sep or not module_part or not attr_path:
        raise ExecutionError(
            f"python target {spec!r} is not of the form 'module:function'", permanent=True
        )
    try:
        module = _import(module_part, base_dir)
        obj: Any = module
        for attr in attr_path.split("."):
            obj = getattr(obj, attr)
    except ToolCallError:
        raise
    except Exception as exc:
        raise ExecutionError(
            f"cannot load python target {spec!r}: {type(exc).__name__}: {exc}", permanent=True
        ) from exc
    if not callable(obj):
        raise ExecutionError(f"python target {spec!r} is not callable", permanent=True)
    return obj  # type: ignore[no-any-return]


def _import(module_part: str, base_dir: Path | None) -> Any:
    if module_part.endswith(".py"):
        path = Path(module_part)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        name = f"toolcaller_user_{abs(hash(str(path.resolve())))}"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ExecutionError(f"cannot load {str(path)!r}", permanent=True)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module
    if base_dir is not None and str(base_dir) not in sys.path:
        # A registry's own modules sit beside it; the folder joins the path at the end so
        # that it never shadows an installed package.
        sys.path.append(str(base_dir))
    return importlib.import_module(module_part)
