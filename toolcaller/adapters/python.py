"""`PythonAdapter`: sync functions in threads or a killable worker process; async on the loop.

A target is a callable, `"package.module:function"`, or `"path/to/file.py:function"` (see
`toolcaller.adapters.python_code`); it is imported on first call, never at discovery.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolcaller._types import JSONObject
from toolcaller.adapters.python_code import (
    PROGRAMMING_ERRORS,
    load_callable,
    translate_exception,
)
from toolcaller.adapters.threads import ThreadRunner
from toolcaller.core.context import AttemptContext
from toolcaller.core.tool import Tool
from toolcaller.errors import ToolCallError

if TYPE_CHECKING:
    from toolcaller.adapters.process import ProcessPool

__all__ = ["PROGRAMMING_ERRORS", "PythonAdapter", "load_callable", "translate_exception"]


@dataclass(slots=True)
class _Target:
    fn: Callable[..., Any]
    is_async: bool


class PythonAdapter:
    """Runs Python callables: async ones on the loop, sync ones in threads or a child process."""

    kind = "python"

    def __init__(self, threads: ThreadRunner | None = None) -> None:
        self.threads = threads or ThreadRunner()
        self._processes: ProcessPool | None = None
        self._targets: weakref.WeakKeyDictionary[Tool, _Target] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    async def invoke(self, tool: Tool, params: JSONObject, ctx: AttemptContext) -> object:
        """Run one attempt: in a worker process, on the loop (async), or in a worker thread."""
        if (ctx.call.options.isolation or tool.isolation) == "process":
            return await self._process_pool().run(ctx, tool, params)
        target = self._targets.get(tool)
        if target is None:
            target = await self._load(tool, ctx)
        try:
            if target.is_async:
                return await target.fn(**params)
            return await self.threads.run(ctx, target.fn, **params)
        except (ToolCallError, asyncio.CancelledError):
            raise
        except BaseException as exc:  # a tool's SystemExit is the tool's failure, not ours
            raise translate_exception(exc, tool.permanent_errors) from exc

    async def _load(self, tool: Tool, ctx: AttemptContext) -> _Target:
        """Find the tool's function; importing its module is a cold start, not the tool's time."""
        fn = tool.target
        if not callable(fn):
            ctx.mark_waiting("the tool's module to load")
            # In a thread: an import must not hold the event loop (a heavy module takes seconds).
            fn = await asyncio.to_thread(load_callable, fn, tool.base_dir)
            ctx.mark_running()
        unwrapped = inspect.unwrap(fn)
        target = _Target(fn, inspect.iscoroutinefunction(unwrapped)
                         or inspect.iscoroutinefunction(type(fn).__call__))
        self._targets[tool] = target
        return target

    def _process_pool(self) -> ProcessPool:
        with self._lock:  # two first calls at once must not make two pools
            if self._processes is None:
                from toolcaller.adapters.process import ProcessPool

                self._processes = ProcessPool()
            return self._processes

    async def aclose(self) -> None:
        """Stop worker processes and let idle threads go."""
        with self._lock:
            pool, self._processes = self._processes, None
        if pool is not None:
            await pool.aclose()
        self.threads.shutdown()


