"""`ToolCaller`: the composition root; the one place where exceptions become envelopes.

It wires the registry, the adapters, the one attempt loop (`toolcaller.core.attempt`) and
the history. `acall` runs the attempt loop on the running event loop; `call` is a portal onto
the same loop run on the caller's private loop thread (`toolcaller.core.portal`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import os
import random
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from toolcaller._types import JSONObject
from toolcaller.adapters import make_adapter
from toolcaller.adapters.base import Adapter
from toolcaller.core.attempt import run_attempts
from toolcaller.core.clock import Clock, SystemClock
from toolcaller.core.context import CallContext
from toolcaller.core.events import OnEvent
from toolcaller.core.history import CallRecord, History
from toolcaller.core.portal import Portal
from toolcaller.core.prepare import Arrival, Preparer
from toolcaller.core.redact import (
    collect_secrets,
    mask_text,
    redact_params_safely,
    redact_value,
)
from toolcaller.core.registry import Registry
from toolcaller.core.results import result_of
from toolcaller.core.tool import Tool
from toolcaller.envelope import CallMetadata, DiscoveryMetadata, Envelope, ErrorInfo, now_utc
from toolcaller.errors import ExecutionError, ToolCallError, ToolTimeoutError
from toolcaller.request import parse_request, with_request_id

if TYPE_CHECKING:
    import pandas as pd

    from toolcaller.batch import CallerSource
    from toolcaller.llm import RunSettings, ToolReplies
    from toolcaller.sources.registry_file import Connect

__all__ = ["ToolCaller"]

PORTAL_GRACE_S = 0.05
"""How long past its deadline `call` waits for the private loop's answer before it asks
whether the loop still turns (a loop blocked by an async tool that calls blocking code)."""
PROBE_S = 0.1
"""How long the loop may take to run a no-op before `call` takes it for blocked."""
STILL_COMING_S = 1.0
"""How much longer `call` waits for the answer of a loop that still turns (a busy machine)."""


class ToolCaller:
    """Discovers and calls tools of every kind with timeouts, retries, codes and a history.

    `ToolCaller()` uses the embedded demo registry; `ToolCaller(tools=[...])` only the tools
    given; `ToolCaller.from_file("tools.json")` a registry file.
    """

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] | None = None, *,
                 registry: Registry | None = None, history: History | None = None,
                 max_history: int = 10_000, adapters: dict[str, Adapter] | None = None,
                 clock: Clock | None = None, rng: Callable[[], float] = random.random) -> None:
        self.portal = Portal()
        self.registry = registry if registry is not None else Registry()
        if tools is None and registry is None:
            from toolcaller.demo import demo_tools

            for made in demo_tools():
                self.registry.add(made)
        for item in tools or ():
            self.add(item)
        self.history = history if history is not None else History(max_history)
        self.adapters: dict[str, Adapter] = dict(adapters or {})
        self.clock: Clock = clock if clock is not None else SystemClock()
        self._rng = rng
        self._lock = threading.Lock()
        self._preparer = Preparer(self.registry, self.clock)
        self._hubs: list[Any] = []
        self._ids = itertools.count(1)
        self._id_prefix = os.urandom(4).hex()
        self._closed = False

    # -- tools --------------------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | Path, *, connect: Connect = "lazy", **kwargs: Any) -> ToolCaller:
        """Build a caller from a registry file; `connect="background"` starts its servers now."""
        caller = cls(registry=Registry(), **kwargs)
        caller.load(path, connect=connect)
        return caller

    def load(self, path: str | Path, *, connect: Connect = "lazy") -> None:
        """Add a registry file's tools, MCP servers and OpenAPI documents (when: `connect`)."""
        from toolcaller.sources.registry_file import load_registry

        loaded = load_registry(path, portal=self.portal, connect=connect)
        for made in loaded.tools:
            self.registry.add(made)
        for source in loaded.sources:
            self.registry.add_source(source)
        if loaded.hub is not None:
            self._hubs.append(loaded.hub)

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

    def add_plugins(self) -> list[str]:
        """Add the tools of installed plugins; return a message per plugin or tool that failed."""
        from toolcaller.errors import UsageError
        from toolcaller.sources.plugins import plugin_tools

        tools, problems = plugin_tools()
        for made in tools:
            try:
                self.add(made)
            except UsageError as exc:
                problems.append(str(exc))
        return problems

    def adapter_for(self, kind: str) -> Adapter:
        """Return the adapter of a tool kind, made on first use from its entry point."""
        adapter = self.adapters.get(kind)
        if adapter is None:
            with self._lock:  # two first calls at once must not build two adapters
                adapter = self.adapters.get(kind)
                if adapter is None:
                    adapter = self.adapters[kind] = make_adapter(kind)
        return adapter

    # -- discovery ----------------------------------------------------------------------

    def discover(self, filter: str | None = None) -> Envelope:
        """List the tools matching a filter (see `toolcaller.core.registry`); runs no tool."""
        arrived, start = self.clock.wall(), self.clock.now()
        tools, problems = self.registry.search(filter)
        result: dict[str, Any] = {"tools": [t.info() for t in tools]}
        if problems:
            result["problems"] = [p.to_dict() for p in problems]
        return Envelope(success=True, result=result, metadata=DiscoveryMetadata(
            duration=_ms(self.clock.now() - start), total=len(tools),
            timestamp=now_utc(arrived)))

    # -- calls --------------------------------------------------------------------------

    def call(self, name: str, params: JSONObject | None = None, /,
             options: JSONObject | None = None, *, tool_call_id: str | None = None,
             on_event: OnEvent | None = None, **option_kwargs: Any) -> Envelope:
        """Call a tool and wait for its envelope; works inside a running event loop too."""
        if self.portal.in_loop_thread():
            raise RuntimeError("call() blocks, and this is the caller's own loop: await acall()")
        arrival = self._arrival(tool_call_id)
        future = self.portal.submit(self._acall(arrival, name, params, options, option_kwargs,
                                                on_event))
        timeout_s: float | None = None  # a fake clock's deadline is not in real time
        if isinstance(self.clock, SystemClock):
            until = arrival.started + self._preparer.deadline_s(name, options, option_kwargs)
            timeout_s = max(until - self.clock.now(), 0.0) + PORTAL_GRACE_S
        try:
            try:
                return future.result(timeout=timeout_s)
            except concurrent.futures.TimeoutError:
                if not self.portal.turns(PROBE_S):
                    raise
                return future.result(timeout=STILL_COMING_S)  # late, but on its way
        except concurrent.futures.TimeoutError:
            future.cancel()  # the private loop is blocked: answer without it
            error = ToolTimeoutError("no answer by the deadline: a tool is blocking the caller's "
                                     "event loop (an async tool must not call blocking code)")
            return self._answer(arrival, name, redact_params_safely(params), None, error=error)
        except BaseException:
            future.cancel()  # Ctrl-C: stop the attempts on the private loop too
            raise

    async def acall(self, name: str, params: JSONObject | None = None, /,
                    options: JSONObject | None = None, *, tool_call_id: str | None = None,
                    on_event: OnEvent | None = None, **option_kwargs: Any) -> Envelope:
        """Call a tool from async code; async tools run on the running loop."""
        return await self._acall(self._arrival(tool_call_id), name, params, options,
                                 option_kwargs, on_event)

    async def _acall(self, arrival: Arrival, name: Any, params: Any, options: Any,
                     option_kwargs: dict[str, Any], on_event: OnEvent | None) -> Envelope:
        try:
            call = await self._preparer.aprepare(arrival, name, params, options, option_kwargs)
        except ToolCallError as error:
            keys: frozenset[str] = getattr(error, "secret_keys", frozenset())
            return self._answer(arrival, name, redact_params_safely(params, error), None,
                                error=error, secrets=collect_secrets(params, keys))
        call.on_event, call.loop = on_event, asyncio.get_running_loop()
        return await self._run(call)

    async def _run(self, call: CallContext) -> Envelope:
        tool, params = call.tool, call.params

        async def invoke(ctx: Any) -> object:
            return await adapter.invoke(tool, params, ctx)

        try:
            adapter = self.adapter_for(tool.kind)
            result = await run_attempts(call, invoke, lambda out: result_of(out, call), self._rng)
        except ToolCallError as error:
            return self._answer_call(call, error=error)
        except asyncio.CancelledError:
            self._answer_call(call, cancelled=True)
            raise
        return self._answer_call(call, result=result)

    # -- envelopes and history ----------------------------------------------------------

    def record_failure(self, name: Any, params: Any, error: ToolCallError, *,
                       tool_call_id: str | None = None) -> Envelope:
        """Record a call that failed before the engine could run it; return its envelope.

        For calls that could not be handed over (a batch row an executor refused, bad JSON).
        """
        return self._answer(self._arrival(tool_call_id), name, redact_params_safely(params),
                            None, error=error)

    def _answer_call(self, call: CallContext, *, result: Any = None,
                     error: ToolCallError | None = None, cancelled: bool = False) -> Envelope:
        arrival = Arrival(call.call_id, call.arrived, call.started, call.tool_call_id)
        return self._answer(arrival, call.tool.name, call.redacted, call, result=result,
                            error=error, cancelled=cancelled)

    def _answer(self, arrival: Arrival, name: Any, redacted: Any, call: CallContext | None, *,
                result: Any = None, error: ToolCallError | None = None, cancelled: bool = False,
                secrets: set[str] | None = None) -> Envelope:
        """Record a call in the history and return its envelope (success or failure)."""
        if secrets is None:
            secrets = call.secrets if call is not None else set()
        duration = _ms(self.clock.now() - arrival.started)
        info = None
        if error is not None:
            info = ErrorInfo(code=error.code, message=mask_text(error.message, secrets),
                             details=redact_value(error.details, secrets)
                             if error.details is not None else None,
                             retryable=error.retryable)
        attempts = list(call.attempts) if call is not None else []
        tool_name = name if isinstance(name, str) else None
        self.history.add(CallRecord(
            arrival.call_id, tool_name, arrival.arrived, duration, error is None and not cancelled,
            info.code.value if info else None, info.message if info else None, redacted,
            call.options if call is not None else None, attempts, cancelled,
            arrival.tool_call_id))
        return Envelope(success=info is None, result=result, error=info, metadata=CallMetadata(
            duration=duration, attempts=len(attempts), tool_name=tool_name,
            timestamp=now_utc(arrival.arrived), call_id=arrival.call_id, trail=attempts))

    def _arrival(self, tool_call_id: str | None = None) -> Arrival:
        """Say that a request arrives now: its call id and clock readings."""
        return Arrival(f"{self._id_prefix}-{next(self._ids)}", self.clock.wall(),
                        self.clock.now(), tool_call_id)

    # -- batches and JSON requests --------------------------------------------------------

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
        """Like `map`, awaited: rows run on the running loop."""
        from toolcaller.batch import amap_calls

        return await amap_calls(self, name, params, concurrency=concurrency, progress=progress,
                                executor=executor, source=source, options=options,
                                **option_kwargs)

    def handle(self, request: Any) -> dict[str, Any]:
        """Answer one JSON request (execute or discover) with an envelope dict; never raises.

        A request's `id` (a string, number or null) comes back as `metadata.requestId`, so
        that a client reading JSON Lines can pair answers with requests.
        """
        arrival = self._arrival()
        try:
            parsed = parse_request(request)
            envelope = (self.discover(parsed.filter) if parsed.action == "discover"
                        else self.call(parsed.tool_name, parsed.params, parsed.options))
        except Exception as exc:  # noqa: BLE001 - envelope boundary: handle() never raises
            envelope = self._refused(arrival, request, exc)
        return with_request_id(envelope.to_dict(), request)

    async def ahandle(self, request: Any) -> dict[str, Any]:
        """Answer one JSON request from async code; never raises."""
        arrival = self._arrival()
        try:
            parsed = parse_request(request)
            envelope = (self.discover(parsed.filter) if parsed.action == "discover"
                        else await self.acall(parsed.tool_name, parsed.params, parsed.options))
        except Exception as exc:  # noqa: BLE001 - envelope boundary: ahandle() never raises
            envelope = self._refused(arrival, request, exc)
        return with_request_id(envelope.to_dict(), request)

    def _refused(self, arrival: Arrival, request: Any, exc: Exception) -> Envelope:
        """The envelope of a request that could not be read, or broke the engine itself."""
        error = exc if isinstance(exc, ToolCallError) else ExecutionError(
            f"internal error while handling the request: {type(exc).__name__}: {exc}")
        name = request.get("toolName") if isinstance(request, dict) else None
        return self._answer(arrival, name, None, None, error=error)

    # -- the model side (toolcaller.llm) ------------------------------------------------

    def run_tool_calls(self, response: Any, **settings: Unpack[RunSettings]) -> ToolReplies:
        """Run a model response's tool calls; one reply per call, in the provider's shape."""
        from toolcaller.llm.run import run_tool_calls
        return run_tool_calls(self, response, **settings)

    async def arun_tool_calls(self, response: Any, **settings: Unpack[RunSettings]) -> ToolReplies:
        """Like `run_tool_calls`, on the running loop (see `toolcaller.llm.run`)."""
        from toolcaller.llm.run import arun_tool_calls
        return await arun_tool_calls(self, response, **settings)

    def bind(self, name: str, fn: Callable[..., Any]) -> Tool:
        """Make `fn` the implementation of the tool `name` (an imported definition, say)."""
        from toolcaller.sources.functions import bind_tool
        return self.add(bind_tool(self.registry, name, fn), replace=True)

    # -- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        """Release adapters' resources (processes, connections, sessions) and the private loop."""
        if self._closed:
            return
        self._closed = True
        if (self.adapters or self._hubs) and not self.portal.in_loop_thread():
            self.portal.run(self._aclose_parts())  # their clean-up is async: on the portal
        self.portal.close()

    async def aclose(self) -> None:
        """Release what `close` releases, from async code."""
        await asyncio.to_thread(self.close)

    async def _aclose_parts(self) -> None:
        for part in [*self.adapters.values(), *self._hubs]:
            with contextlib.suppress(Exception):  # closing must go on for the others
                await part.aclose()

    def __enter__(self) -> ToolCaller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ToolCaller:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def explore(self) -> Any:
        """Return the notebook explorer widget (`ImportError` saying what to install without)."""
        try:
            from toolcaller.widgets import Explorer
        except ImportError as exc:  # without the notebook extra: say what to install
            raise ImportError(f"the explorer needs the notebook extra ({exc.name}): from a "
                              "clone of toolcaller, pip install '.[notebook]'") from exc
        return Explorer(self)


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)
