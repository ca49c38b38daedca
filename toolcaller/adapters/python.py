"""Python tools: sync functions in worker threads (or a killable child process), async on the loop.

A target is a callable, `"package.module:function"`, or `"path/to/file.py:function"` (relative
to the registry file's folder). Imports happen on first call, never at discovery; a registry's
own modules load in a package made for its folder, never on `sys.path`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from toolcaller.adapters._process import ProcessPool

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
        self._processes: ProcessPool | None = None
        self._processes_lock = threading.Lock()

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
        """Run one attempt and wait for it at most `ctx.timeout_s` from the attempt's start."""
        # The budget counts from here, not from submit(): on a busy machine the import,
        # coercion and hand-off can eat much of it, and a result after it is a late success.
        began = time.monotonic()
        target = self._target(tool)
        kwargs = _coerce(target, params)
        if tool.isolation == "process":
            return self._process_pool().run(tool, target.fn, kwargs, ctx, began)
        job = self.pool.submit(target.fn, kwargs)
        try:
            finished = job.wait(ctx.timeout_s - (time.monotonic() - began))
        except BaseException:  # Ctrl-C: a job still queued must not run after the call ended
            job.cancel()
            raise
        if finished:
            return _outcome(job, params)
        if job.cancel():
            raise ToolTimeoutError(_queued_timeout_message(ctx, self.pool))
        ctx.straggler = job
        raise ToolTimeoutError(_thread_timeout_message(ctx, self.pool, job), straggler=job)

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
            # Only a job that started is a straggler; one still queued is dropped unrun.
            if not job.cancel() and job.running:
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

    def _process_pool(self) -> ProcessPool:
        pool = self._processes
        if pool is None:
            with self._processes_lock:  # two first calls at once must not make two pools
                pool = self._processes
                if pool is None:
                    from toolcaller.adapters._process import ProcessPool

                    pool = self._processes = ProcessPool()
        return pool

    async def aclose(self) -> None:
        """Stop worker processes."""
        self.close()

    def close(self) -> None:
        """Stop worker processes and let idle threads go."""
        with self._processes_lock:
            pool, self._processes = self._processes, None
        if pool is not None:
            pool.close()
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


def _thread_timeout_message(ctx: AttemptContext, pool: WorkerPool, job: Job) -> str:
    if not job.running:  # it ended between the wait and now: too late, but not running on
        return f"no result within {ctx.timeout_s * 1000:.0f} ms; the tool finished too late"
    message = (
        f"no result within {ctx.timeout_s * 1000:.0f} ms; the sync tool goes on running in its "
        "worker thread (threads cannot be stopped: use isolation 'process' to kill it)"
    )
    if pool.busy >= pool.max_workers:
        message += f"; all {pool.max_workers} worker threads are busy"
    return message


def _queued_timeout_message(ctx: AttemptContext, pool: WorkerPool) -> str:
    why = (f"all {pool.max_workers} worker threads were busy" if pool.busy >= pool.max_workers
           else "it was still waiting for a worker thread")
    return f"no result within {ctx.timeout_s * 1000:.0f} ms; the tool never started ({why})"


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
            f"cannot load python target {spec!r}: {type(exc).__name__}: {exc}"
            f"{_sibling_hint(exc, base_dir)}", permanent=True
        ) from exc
    if not callable(obj):
        raise ExecutionError(f"python target {spec!r} is not callable", permanent=True)
    return obj  # type: ignore[no-any-return]


def _import(module_part: str, base_dir: Path | None) -> Any:
    if module_part.endswith(".py"):
        path = Path(module_part)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        return _load_file(path)
    if base_dir is None or _is_installed(module_part) or not _is_beside(module_part, base_dir):
        return importlib.import_module(module_part)
    # A registry's own module loads inside a package made for its folder, never under its
    # bare name: two registries' `tools.py` stay two modules, nothing joins `sys.path`, and
    # the module reaches its siblings with `from . import helpers`.
    return importlib.import_module(f"{_folder_package(base_dir)}.{module_part}")


def _load_file(path: Path) -> Any:
    resolved = path.resolve()
    # In its folder's package, like a "module:function" target: the same file is one module
    # whichever way it is named, and `from . import helpers` works in it.
    name = (f"{_folder_package(resolved.parent)}.{resolved.stem}" if resolved.stem.isidentifier()
            else f"toolcaller_user_{_digest(resolved)}")
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


def _sibling_hint(exc: Exception, base_dir: Path | None) -> str:
    missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
    if not missing or base_dir is None or not _is_beside(missing, base_dir):
        return ""
    return (f" ({missing!r} sits beside the registry but is not on sys.path: import it "
            f"relatively, `from . import {missing.partition('.')[0]}`)")


def _is_installed(module_part: str) -> bool:
    """Say whether the module's top package is importable already (it wins over a registry's)."""
    try:
        return importlib.util.find_spec(module_part.partition(".")[0]) is not None
    except (ImportError, ValueError):
        return False


def _is_beside(module_part: str, folder: Path) -> bool:
    top = module_part.partition(".")[0]
    return importlib.machinery.PathFinder.find_spec(top, [str(folder)]) is not None


_FOLDERS_LOCK = threading.Lock()


def _folder_package(folder: Path) -> str:
    """Name a package, made on first use, whose modules are the files of `folder`."""
    resolved = folder.resolve()
    name = f"toolcaller_registry_{_digest(resolved)}"
    with _FOLDERS_LOCK:
        if name not in sys.modules:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [str(resolved)]
            sys.modules[name] = importlib.util.module_from_spec(spec)
    return name


def _digest(path: Path) -> str:
    # Not hash(): that differs between processes, and a child process must give a module the
    # same name as its parent did, or the parent cannot unpickle the module's objects.
    return hashlib.blake2b(str(path).encode(), digest_size=8).hexdigest()
