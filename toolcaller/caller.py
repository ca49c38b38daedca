"""`ToolCaller`: wires registry, adapters and history; the one place exceptions become envelopes."""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import os
import random
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from toolcaller._calls import Answer, AttemptRunner, Outcome, Prepared, _ms, as_envelope
from toolcaller._loop import LoopThread
from toolcaller._types import JSONObject
from toolcaller.adapters.base import Adapter
from toolcaller.adapters.python import PythonAdapter
from toolcaller.core.history import History
from toolcaller.core.options import options_for
from toolcaller.core.redact import (
    redact_params,
    secret_names_in_schema,
)
from toolcaller.core.registry import Registry
from toolcaller.core.schema import ParamsValidator
from toolcaller.core.tool import Tool
from toolcaller.envelope import (
    DiscoveryMetadata,
    Envelope,
    now_utc,
)
from toolcaller.errors import (
    ErrorCode,
    ExecutionError,
    InvalidParamsError,
    ToolCallError,
    ToolNotFoundError,
    ToolTimeoutError,
)

if TYPE_CHECKING:

    import pandas as pd

    from toolcaller._remote import CallerSource

__all__ = ["ToolCaller"]

LOOP_GRACE_S = 0.002
"""How long past its deadline `call` waits for the private loop before it answers TIMEOUT."""

_REQUEST_KEYS = ("toolName", "params", "options", "action", "id")


class ToolCaller(AttemptRunner):
    """Discovers and calls tools of every kind with timeouts, retries, codes and a history.

    `ToolCaller()` uses the embedded demo registry; `ToolCaller(tools=[...])` only the tools
    given; `ToolCaller.from_file("tools.json")` a registry file.
    """

    def __init__(
        self,
        tools: Iterable[Tool | Callable[..., Any]] | None = None,
        *,
        registry: Registry | None = None,
        history: History | None = None,
        max_history: int = 10_000,
        adapters: dict[str, Adapter] | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        asleep: Callable[[float], Any] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        from toolcaller.sources.decorator import from_function

        self.loop_thread = LoopThread()
        self.registry = registry if registry is not None else Registry()
        if tools is None and registry is None:
            from toolcaller.demo import demo_registry

            self.registry = demo_registry(self)
        for item in tools or ():
            self.registry.add(item if isinstance(item, Tool) else from_function(item))
        self.history = history if history is not None else History(max_history)
        self.adapters: dict[str, Adapter] = {"python": PythonAdapter()}
        self.adapters.update(adapters or {})
        self._clock, self._wall, self._sleep, self._asleep, self._rng = (
            clock, wall_clock, sleep, asleep, rng)
        self._adapters_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._id_prefix = os.urandom(4).hex()
        self._closed = False

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> ToolCaller:
        """Build a caller from a registry file (`RegistryError` names the file and the problem)."""
        from toolcaller.sources.registry_file import load_registry

        caller = cls(registry=Registry(), **kwargs)
        load_registry(path, caller)
        return caller

    def add(self, item: Tool | Callable[..., Any], *, replace: bool = False) -> Tool:
        """Add a tool (or a function, turned into one by `@tool`'s rules); return the tool."""
        from toolcaller.sources.decorator import from_function

        made = item if isinstance(item, Tool) else from_function(item)
        self.registry.add(made, replace=replace)
        return made

    def tool(self, fn: Callable[..., Any] | None = None, /, **settings: Any) -> Any:
        """Decorator: like `toolcaller.tool`, and registers the tool with this caller."""
        from toolcaller.sources.decorator import from_function

        def register(f: Callable[..., Any]) -> Tool:
            return self.add(from_function(f, **settings))

        return register(fn) if fn is not None else register

    def adapter_for(self, kind: str) -> Adapter:
        """Return the adapter of a tool kind, creating the built-in ones on first use."""
        adapter = self.adapters.get(kind)
        if adapter is None:
            with self._adapters_lock:  # two first calls at once must not build two adapters
                adapter = self.adapters.get(kind)
                if adapter is None:
                    adapter = self.adapters[kind] = _builtin_adapter(kind, self)
        return adapter

    # -- discovery ----------------------------------------------------------------------

    def discover(self, filter: str | None = None) -> Envelope:
        """List the tools matching a filter (see `toolcaller.core.registry`); runs no tool."""
        arrived, start = self._wall(), self._clock()
        tools, problems = self.registry.search(filter)
        infos = [_info(t) for t in tools]
        result: dict[str, Any] = {"tools": infos}
        if problems:
            result["problems"] = [p.to_dict() for p in problems]
        return Envelope(
            success=True,
            result=result,
            metadata=DiscoveryMetadata(
                duration=_ms(self._clock() - start), total=len(infos), timestamp=now_utc(arrived)
            ),
        )

    # -- calls ----------------------------------------------------------------------------

    def call(self, name: str, params: JSONObject | None = None, /,
             options: JSONObject | None = None, **option_kwargs: Any) -> Envelope:
        """Call a tool and wait for its envelope; works inside a running event loop too."""
        arrived, start = self._wall(), self._clock()
        call_id = self._next_id()
        prepared = self._prepared_or_failed(name, params, options, option_kwargs, call_id,
                                            arrived, start)
        if isinstance(prepared, Envelope):
            return prepared
        if not prepared.adapter.supports_sync(prepared.tool):
            return self._call_on_loop(prepared, call_id, arrived, start)
        return self._attempts_sync(prepared, call_id, arrived, start)

    def _call_on_loop(self, p: Prepared, call_id: str, arrived: float,
                      start: float) -> Envelope:
        """Run the attempts on the private loop; answer by the deadline even if it is blocked."""
        future = self.loop_thread.submit(self._attempts_async(p, call_id, arrived, start))
        remaining = start + p.options.deadline / 1000.0 - self._clock()
        try:
            return as_envelope(future.result(timeout=max(remaining, 0.0) + LOOP_GRACE_S))
        except concurrent.futures.TimeoutError:
            # An async tool blocks the private loop (time.sleep in async code): no timer there
            # can fire. Answer now; the abandoned run records nothing when it ends.
            if not p.claim():
                return as_envelope(future.result())  # the attempts finished just now
            future.cancel()
            error = ToolTimeoutError(
                f"no answer within the {p.options.deadline:g} ms deadline: a tool is blocking "
                "the caller's event loop (an async tool must not call blocking code)")
            return self._failed(call_id, p.tool.name, p.params, None, error, arrived, start,
                                None, (), secret_keys=p.secret_keys)
        except BaseException:
            future.cancel()  # Ctrl-C: stop the attempts on the private loop too
            raise

    async def acall(self, name: str, params: JSONObject | None = None, /,
                    options: JSONObject | None = None, **option_kwargs: Any) -> Envelope:
        """Call a tool from async code; async tools run on the running loop."""
        started = self._begin(name, params, options, option_kwargs)
        return as_envelope(started if isinstance(started, Envelope) else await started)

    def _begin(self, name: Any, params: Any, options: Any, option_kwargs: dict[str, Any],
               answer: Answer | None = None) -> Envelope | Coroutine[Any, Any, Outcome]:
        """Start an async call: its envelope if it failed before any attempt, else a coroutine.

        Not a coroutine itself: one frame fewer per call, which counts for 10,000 in flight.
        With `answer`, attempts run inline in the awaiting task (see `_attempts_async`).
        """
        arrived, start = self._wall(), self._clock()
        call_id = self._next_id()
        if self.registry.needs_listing(name) and not self.loop_thread.in_loop_thread():
            return self._listed_then_run(name, params, options, option_kwargs, answer, call_id,
                                         arrived, start)
        prepared = self._prepared_or_failed(name, params, options, option_kwargs, call_id,
                                            arrived, start)
        if isinstance(prepared, Envelope):
            return prepared
        return self._attempts_async(prepared, call_id, arrived, start, answer)

    async def _listed_then_run(self, name: Any, params: Any, options: Any,
                               option_kwargs: dict[str, Any], answer: Answer | None,
                               call_id: str, arrived: float, start: float) -> Outcome:
        # Listing a source may start a server: keep the caller's loop free meanwhile.
        prepared = await asyncio.to_thread(self._prepared_or_failed, name, params, options,
                                           option_kwargs, call_id, arrived, start)
        if isinstance(prepared, Envelope):
            return prepared
        return await self._attempts_async(prepared, call_id, arrived, start, answer)

    def _prepared_or_failed(self, name: Any, params: Any, options: Any,
                            option_kwargs: dict[str, Any], call_id: str, arrived: float,
                            start: float) -> Prepared | Envelope:
        try:
            return self._prepare(name, params, options, option_kwargs)
        except ToolCallError as error:
            return self._failed(call_id, name, params, None, error, arrived, start, None, ())

    def map(self, name: str, params: Iterable[JSONObject] | pd.DataFrame, /, *,
            concurrency: int = 16, progress: bool | None = None,
            executor: concurrent.futures.Executor | None = None,
            source: str | Path | CallerSource | None = None, options: JSONObject | None = None,
            **option_kwargs: Any) -> pd.DataFrame:
        """Call one tool once per params row (dicts or a DataFrame) into a DataFrame.

        See `toolcaller.batch`: a concurrency limit, a progress bar, one envelope per row, and
        any `concurrent.futures.Executor` (a Dask client's included) to run the rows elsewhere.
        """
        from toolcaller.batch import map_calls

        return map_calls(self, name, params, concurrency=concurrency, progress=progress,
                         executor=executor, source=source, options=options, **option_kwargs)

    async def amap(self, name: str, params: Iterable[JSONObject] | pd.DataFrame, /, *,
                   concurrency: int = 16, progress: bool | None = None,
                   executor: concurrent.futures.Executor | None = None,
                   source: str | Path | CallerSource | None = None,
                   options: JSONObject | None = None, **option_kwargs: Any) -> pd.DataFrame:
        """Async twin of `map`: rows run on the running loop."""
        from toolcaller.batch import amap_calls

        return await amap_calls(self, name, params, concurrency=concurrency, progress=progress,
                                executor=executor, source=source, options=options,
                                **option_kwargs)

    def handle(self, request: Any) -> dict[str, Any]:
        """Answer one JSON request (execute or discover) with an envelope dict; never raises.

        A request's `id` (a string, number or null) comes back as `metadata.requestId`, so
        that a client reading JSON Lines can pair answers with requests.
        """
        try:
            return _with_request_id(self._handle(request).to_dict(), request)
        except Exception as exc:  # noqa: BLE001 - envelope boundary: handle() never raises
            return _with_request_id(self._last_resort(request, exc).to_dict(), request)

    async def ahandle(self, request: Any) -> dict[str, Any]:
        """Async twin of `handle`."""
        try:
            kind, args = self._parse_request(request)
            if kind == "discover":
                answer = self.discover(args).to_dict()
            else:
                answer = (await self.acall(*args)).to_dict()
        except _BadRequest as bad:
            answer = bad.envelope.to_dict()
        except Exception as exc:  # noqa: BLE001 - envelope boundary: ahandle() never raises
            answer = self._last_resort(request, exc).to_dict()
        return _with_request_id(answer, request)

    def _handle(self, request: Any) -> Envelope:
        try:
            kind, args = self._parse_request(request)
        except _BadRequest as bad:
            return bad.envelope
        if kind == "discover":
            return self.discover(args)
        return self.call(*args)

    def _parse_request(self, request: Any) -> tuple[str, Any]:
        arrived, start = self._wall(), self._clock()

        def bad(message: str) -> _BadRequest:
            name = request.get("toolName") if isinstance(request, dict) else None
            error = InvalidParamsError(message)
            return _BadRequest(self._failed(
                self._next_id(), name if isinstance(name, str) else None, None, None, error,
                arrived, start, None, ()))

        if not isinstance(request, dict):
            raise bad(f"a request must be a JSON object, got {_kind(request)}")
        request_id = request.get("id")
        if request_id is not None and not isinstance(request_id, str | int | float):
            raise bad(f"id must be a string or a number, got {_kind(request_id)}")
        unknown = [k for k in request if k not in _REQUEST_KEYS]
        if unknown:
            raise bad(f"unknown request key {unknown[0]!r}; a request has "
                      "toolName, params, options (or action: 'discover')")
        action = request.get("action")
        if action == "discover":
            options = request.get("options")
            options = {} if options is None else options
            if not isinstance(options, dict) or set(options) - {"filter"}:
                raise bad("discover options take only 'filter' (a string)")
            flt = options.get("filter")
            if flt is not None and not isinstance(flt, str):
                raise bad(f"options.filter must be a string, got {_kind(flt)}")
            return "discover", flt
        if action not in (None, "call", "execute"):
            raise bad(f"unknown action {action!r}; use 'discover', or give a toolName")
        return "call", (request.get("toolName"), request.get("params"), request.get("options"))

    # -- preparation ----------------------------------------------------------------------

    def _prepare(self, name: Any, params: Any, options: Any, kwargs: dict[str, Any]) -> Prepared:
        if not isinstance(name, str) or not name.strip():
            raise InvalidParamsError(
                f"toolName must be a non-empty string, got {_kind(name)}")
        if params is None:
            params = {}
        elif not isinstance(params, dict):
            raise InvalidParamsError(f"params must be an object, got {_kind(params)}")
        try:
            tool = self.registry.get(name)
        except ToolCallError:
            raise
        except Exception as exc:
            raise ExecutionError(f"cannot list the tools for {name!r}: {exc}",
                                 permanent=True) from exc
        if tool is None:
            raise _not_found(name, self.registry.suggest(name))
        if tool.problem is not None:
            raise ExecutionError(f"tool {name!r} cannot be called: {tool.problem}",
                                 permanent=True)
        cache = tool.cache
        validator = cache.get("validator")
        if validator is None:
            cache["secret_keys"] = secret_names_in_schema(tool.params_schema)
            validator = cache["validator"] = ParamsValidator(tool.params_schema)
        secret_keys: frozenset[str] = cache["secret_keys"]
        try:
            opts = options_for(tool, options, kwargs)
            redacted = redact_params(params, secret_keys)  # also refuses NaN and Infinity
            _validate(name, validator, params, cache.get("coerce"))
        except InvalidParamsError as error:
            error.secret_keys = secret_keys  # type: ignore[attr-defined]
            raise
        if opts.isolation is not None and opts.isolation != (tool.isolation or "thread"):
            tool = _with_isolation(tool, opts.isolation)
        return Prepared(tool, params, opts, self.adapter_for(tool.kind), secret_keys, redacted)

    # -- attempt drivers --------------------------------------------------------------------

    def _last_resort(self, request: Any, exc: Exception) -> Envelope:
        name = request.get("toolName") if isinstance(request, dict) else None
        error = ExecutionError(f"internal error while handling the request: "
                               f"{type(exc).__name__}: {exc}")
        now = self._clock()
        return self._failed(self._next_id(), name, None, None, error, self._wall(), now,
                            None, ())

    def _next_id(self) -> str:
        return f"{self._id_prefix}-{next(self._ids)}"

    # -- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        """Release adapters' resources (processes, connections, sessions) and the private loop."""
        if self._closed:
            return
        self._closed = True
        for adapter in list(self.adapters.values()):
            try:
                if self.loop_thread.started:
                    self.loop_thread.run(adapter.aclose())
                else:
                    adapter.close()
            except Exception:  # noqa: BLE001 - closing must go on for the others
                pass
        self.loop_thread.close()

    async def aclose(self) -> None:
        """Async twin of `close`."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> ToolCaller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ToolCaller:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def explore(self) -> Any:
        """Return the notebook explorer widget for this caller (needs the notebook extra)."""
        from toolcaller.widgets import Explorer

        return Explorer(self)


class _BadRequest(Exception):
    def __init__(self, envelope: Envelope) -> None:
        super().__init__("bad request")
        self.envelope = envelope


def _with_request_id(answer: dict[str, Any], request: Any) -> dict[str, Any]:
    if isinstance(request, dict) and "id" in request:
        request_id = request["id"]
        if request_id is None or isinstance(request_id, str | int | float):
            answer["metadata"]["requestId"] = request_id
    return answer


def _validate(name: str, validator: ParamsValidator, params: JSONObject,
              coerce: Callable[[JSONObject], Any] | None) -> None:
    """Raise `InvalidParamsError` listing every violation, before any attempt (rule 3)."""
    violations = validator.violations(params)
    if violations:
        first = violations[0]
        where = f" at {first['pointer']}" if first["pointer"] else ""
        raise InvalidParamsError(
            f"params of {name!r} are invalid{where}: {first['message']}"
            + (f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""),
            details={"violations": violations},
        )
    if coerce is not None:
        coerce(params)  # a @tool's richer types (datetimes, enums, models) are checked too


def _not_found(name: str, close: list[str]) -> ToolNotFoundError:
    tip = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return ToolNotFoundError(f"no tool named {name!r}{tip}",
                             details={"suggestions": close} if close else None)


def _with_isolation(tool: Tool, isolation: Literal["thread", "process"]) -> Tool:
    from dataclasses import replace

    key = f"isolated:{isolation}"
    twin = tool.cache.get(key)
    if twin is None:
        twin = tool.cache[key] = replace(tool, isolation=isolation, cache=dict(tool.cache))
        twin.cache.pop("python_target", None)
    return twin


def _info(tool: Tool) -> dict[str, Any]:
    info = tool.cache.get("info")
    if info is None:
        info = tool.cache["info"] = tool.info()
    return info


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _builtin_adapter(kind: str, caller: ToolCaller) -> Adapter:
    if kind == "script":
        from toolcaller.adapters.script import ScriptAdapter

        return ScriptAdapter()
    if kind == "http":
        from toolcaller.adapters.http import HttpAdapter

        return HttpAdapter()
    if kind == "mcp":
        from toolcaller.adapters.mcp import McpAdapter

        return McpAdapter()
    raise ExecutionError(f"no adapter for tools of kind {kind!r}", permanent=True)


_ = ErrorCode  # re-exported names used in annotations only
