"""`ToolCaller`: wires registry, adapters and history; the one place exceptions become envelopes."""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcaller._loop import LoopThread
from toolcaller._types import JSONObject
from toolcaller.adapters.base import Adapter, AttemptContext
from toolcaller.adapters.python import PythonAdapter
from toolcaller.core.history import AttemptRecord, CallRecord, History
from toolcaller.core.options import resolve_options
from toolcaller.core.policy import MIN_ATTEMPT_MS, CallPlan, Step
from toolcaller.core.redact import (
    collect_secrets,
    mask_text,
    redact_params,
    redact_value,
    secret_names_in_schema,
)
from toolcaller.core.registry import Registry
from toolcaller.core.results import to_result
from toolcaller.core.schema import ParamsValidator
from toolcaller.core.tool import Tool
from toolcaller.envelope import (
    AttemptInfo,
    CallMetadata,
    DiscoveryMetadata,
    Envelope,
    ErrorInfo,
    Options,
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
    from toolcaller.core.registry import SourceProblem

__all__ = ["ToolCaller"]

_REQUEST_KEYS = ("toolName", "params", "options", "action", "id")


class _Prepared:
    """A validated call, ready for its attempts."""

    __slots__ = ("adapter", "options", "params", "secret_keys", "tool")

    def __init__(self, tool: Tool, params: JSONObject, options: Options, adapter: Adapter,
                 secret_keys: frozenset[str]) -> None:
        self.tool = tool
        self.params = params
        self.options = options
        self.adapter = adapter
        self.secret_keys = secret_keys


class ToolCaller:
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
            result["problems"] = [_problem(p) for p in problems]
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
        try:
            prepared = self._prepare(name, params, options, option_kwargs)
        except ToolCallError as error:
            return self._failed(call_id, name, params, None, error, arrived, start, None, ())
        if not prepared.adapter.supports_sync(prepared.tool):
            return self.loop_thread.run(
                self._attempts_async(prepared, call_id, arrived, start)
            )
        return self._attempts_sync(prepared, call_id, arrived, start)

    async def acall(self, name: str, params: JSONObject | None = None, /,
                    options: JSONObject | None = None, **option_kwargs: Any) -> Envelope:
        """Call a tool from async code; async tools run on the running loop."""
        arrived, start = self._wall(), self._clock()
        call_id = self._next_id()
        try:
            prepared = self._prepare(name, params, options, option_kwargs)
        except ToolCallError as error:
            return self._failed(call_id, name, params, None, error, arrived, start, None, ())
        return await self._attempts_async(prepared, call_id, arrived, start)

    def handle(self, request: Any) -> dict[str, Any]:
        """Answer one JSON request (execute or discover) with an envelope dict; never raises."""
        try:
            return self._handle(request).to_dict()
        except Exception as exc:  # noqa: BLE001 - envelope boundary: handle() never raises
            return self._last_resort(request, exc).to_dict()

    async def ahandle(self, request: Any) -> dict[str, Any]:
        """Async twin of `handle`."""
        try:
            kind, args = self._parse_request(request)
            if kind == "discover":
                return self.discover(args).to_dict()
            return (await self.acall(*args)).to_dict()
        except _BadRequest as bad:
            return bad.envelope.to_dict()
        except Exception as exc:  # noqa: BLE001 - envelope boundary: ahandle() never raises
            return self._last_resort(request, exc).to_dict()

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
        unknown = [k for k in request if k not in _REQUEST_KEYS]
        if unknown:
            raise bad(f"unknown request key {unknown[0]!r}; a request has "
                      "toolName, params, options (or action: 'discover')")
        action = request.get("action")
        if action == "discover":
            options = request.get("options") or {}
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

    def _prepare(self, name: Any, params: Any, options: Any, kwargs: dict[str, Any]) -> _Prepared:
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
        cache = tool.cache
        opts = _options_for(tool, options, kwargs)
        validator = cache.get("validator")
        if validator is None:
            validator = cache["validator"] = ParamsValidator(tool.params_schema)
            cache["secret_keys"] = secret_names_in_schema(tool.params_schema)
        violations = validator.violations(params)
        if violations:
            first = violations[0]
            where = f" at {first['pointer']}" if first["pointer"] else ""
            raise InvalidParamsError(
                f"params of {name!r} are invalid{where}: {first['message']}"
                + (f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""),
                details={"violations": violations},
            )
        if opts.isolation is not None and opts.isolation != (tool.isolation or "thread"):
            tool = _with_isolation(tool, opts.isolation)
        return _Prepared(tool, params, opts, self.adapter_for(tool.kind), cache["secret_keys"])

    # -- attempt drivers --------------------------------------------------------------------

    def _attempts_sync(self, p: _Prepared, call_id: str, arrived: float,
                       start: float) -> Envelope:
        plan = CallPlan(p.options, start, self._clock, self._rng)
        secrets: set[str] = set()
        step = plan.first()
        while step is not None:
            if step.wait_s > 0:
                self._sleep(step.wait_s)
            attempt = plan.begin(step.wait_s)
            ctx = AttemptContext(step.budget_s, p.options.format, attempt.number, call_id,
                                 secrets)
            try:
                result = to_result(p.adapter.run(p.tool, p.params, ctx), p.options.format)
            except BaseException as exc:  # noqa: BLE001 - mapped to a code in _attempt_failed
                error = _as_error(exc)
            else:
                plan.end(attempt, None)
                return self._succeeded(call_id, p, result, arrived, start, plan)
            step = self._attempt_failed(plan, attempt, error, p)
            if step is not None and _blocking(error, p.tool):
                step = self._await_straggler_sync(plan, error, step)
        return self._failed(call_id, p.tool.name, p.params, p, plan.final_error(p.tool.name),
                            arrived, start, plan, secrets)

    async def _attempts_async(self, p: _Prepared, call_id: str, arrived: float,
                              start: float) -> Envelope:
        plan = CallPlan(p.options, start, self._clock, self._rng)
        secrets: set[str] = set()
        step = plan.first()
        while step is not None:
            if step.wait_s > 0:
                await self._asleep(step.wait_s)
            attempt = plan.begin(step.wait_s)
            ctx = AttemptContext(step.budget_s, p.options.format, attempt.number, call_id,
                                 secrets)
            try:
                output = await _run_with_timeout(p.adapter, p.tool, p.params, ctx)
                result = to_result(output, p.options.format)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # noqa: BLE001 - mapped to a code in _attempt_failed
                error = _as_error(exc)
            else:
                plan.end(attempt, None)
                return self._succeeded(call_id, p, result, arrived, start, plan)
            step = self._attempt_failed(plan, attempt, error, p)
            if step is not None and _blocking(error, p.tool):
                step = await asyncio.to_thread(self._await_straggler_sync, plan, error, step)
        return self._failed(call_id, p.tool.name, p.params, p, plan.final_error(p.tool.name),
                            arrived, start, plan, secrets)

    def _attempt_failed(self, plan: CallPlan, attempt: Any, error: ToolCallError,
                        p: _Prepared) -> Step | None:
        plan.end(attempt, error)
        return plan.next(error)

    def _await_straggler_sync(self, plan: CallPlan, error: ToolCallError,
                              step: Step) -> Step | None:
        """Hold a retry until the timed-out attempt's thread ends (a tool not idempotent)."""
        straggler = getattr(error, "straggler", None)
        began = self._clock()
        room = plan.deadline - began - MIN_ATTEMPT_MS / 1000.0
        if straggler is None or straggler.wait(max(room, 0.0)):
            step = plan.fit(max(step.wait_s - (self._clock() - began), 0.0))
            if step is None:
                plan.stop_reason = "the deadline leaves no time for another attempt"
            return step
        plan.stop_reason = (
            f"attempt {len(plan.attempts)} is still running in its thread, and a tool that is "
            "not idempotent is not started again while it runs (declare it idempotent, or use "
            "isolation 'process')"
        )
        return None

    # -- envelopes and history -------------------------------------------------------------

    def _succeeded(self, call_id: str, p: _Prepared, result: Any, arrived: float,
                   start: float, plan: CallPlan) -> Envelope:
        duration = _ms(self._clock() - start)
        trail = _trail(plan)
        envelope = Envelope(
            success=True,
            result=result,
            metadata=CallMetadata(duration=duration, attempts=len(plan.attempts),
                                  tool_name=p.tool.name, timestamp=now_utc(arrived),
                                  call_id=call_id, trail=trail),
        )
        self.history.add(CallRecord(
            call_id, p.tool.name, arrived, duration, True, None, None,
            redact_params(p.params, p.secret_keys), _options_record(p.options),
            _attempt_records(plan, ()),
        ))
        return envelope

    def _failed(self, call_id: str, name: Any, params: Any, p: _Prepared | None,
                error: ToolCallError, arrived: float, start: float, plan: CallPlan | None,
                secrets: Iterable[str]) -> Envelope:
        secret_keys = p.secret_keys if p is not None else frozenset()
        known = set(secrets) | collect_secrets(params, secret_keys)
        message = mask_text(error.message, known)
        details = redact_value(error.details, known) if error.details is not None else None
        duration = _ms(self._clock() - start)
        tool_name = name if isinstance(name, str) else None
        envelope = Envelope(
            success=False,
            error=ErrorInfo(code=error.code, message=message, details=details,
                            retryable=error.retryable),
            metadata=CallMetadata(duration=duration,
                                  attempts=len(plan.attempts) if plan else 0,
                                  tool_name=tool_name, timestamp=now_utc(arrived),
                                  call_id=call_id, trail=_trail(plan) if plan else []),
        )
        self.history.add(CallRecord(
            call_id, tool_name, arrived, duration, False, error.code.value, message,
            redact_params(params, secret_keys) if isinstance(params, dict) else None,
            _options_record(p.options) if p else {},
            _attempt_records(plan, known) if plan else [],
        ))
        return envelope

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
                if self.loop_thread._loop is not None:
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


async def _run_with_timeout(adapter: Adapter, tool: Tool, params: JSONObject,
                            ctx: AttemptContext) -> object:
    try:
        async with asyncio.timeout(ctx.timeout_s) as scope:
            return await adapter.arun(tool, params, ctx)
    except TimeoutError:
        if not scope.expired():
            raise
        note = ("; the sync tool goes on running in its worker thread (threads cannot be "
                "stopped: use isolation 'process' to kill it)" if ctx.straggler else "")
        raise ToolTimeoutError(f"no result within {ctx.timeout_s * 1000:.0f} ms{note}",
                               straggler=ctx.straggler) from None


def _options_for(tool: Tool, options: Any, kwargs: dict[str, Any]) -> Options:
    if options is None and not kwargs:
        opts = tool.cache.get("options")
        if opts is None:
            opts = tool.cache["options"] = resolve_options(tool.options, None)
        return opts  # type: ignore[no-any-return]
    if kwargs and isinstance(options, dict | None):
        options = {**(options or {}), **kwargs}
    return resolve_options(tool.options, options)


def _as_error(exc: BaseException) -> ToolCallError:
    """Map anything an attempt raised to a contract error (adapters map their own first)."""
    if isinstance(exc, ToolCallError):
        return exc
    from toolcaller.adapters.python import translate_exception

    return translate_exception(exc)


def _blocking(error: ToolCallError, tool: Tool) -> bool:
    straggler = getattr(error, "straggler", None)
    return straggler is not None and getattr(straggler, "running", False) and not tool.idempotent


def _not_found(name: str, close: list[str]) -> ToolNotFoundError:
    tip = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return ToolNotFoundError(f"no tool named {name!r}{tip}",
                             details={"suggestions": close} if close else None)


def _with_isolation(tool: Tool, isolation: str) -> Tool:
    from dataclasses import replace

    key = f"isolated:{isolation}"
    twin = tool.cache.get(key)
    if twin is None:
        twin = tool.cache[key] = replace(tool, isolation=isolation, cache=dict(tool.cache))
        twin.cache.pop("python_target", None)
    return twin  # type: ignore[no-any-return]


def _info(tool: Tool) -> dict[str, Any]:
    info = tool.cache.get("info")
    if info is None:
        info = tool.cache["info"] = tool.info()
    return info  # type: ignore[no-any-return]


def _problem(problem: SourceProblem) -> dict[str, str]:
    return {"source": problem.source, "prefix": problem.prefix, "message": problem.message}


def _trail(plan: CallPlan) -> list[AttemptInfo]:
    return [
        AttemptInfo(attempt=a.number, code=a.error.code if a.error else None,
                    duration=round(a.duration_ms, 3), wait=round(a.wait_ms, 3))
        for a in plan.attempts
    ]


def _attempt_records(plan: CallPlan, secrets: Iterable[str]) -> list[AttemptRecord]:
    return [
        AttemptRecord(
            a.number, round(a.started_ms, 3), round(a.duration_ms, 3), round(a.wait_ms, 3),
            a.error.code.value if a.error else None,
            mask_text(a.error.message, secrets) if a.error else None,
            a.error.retryable if a.error else None,
        )
        for a in plan.attempts
    ]


def _options_record(options: Options) -> dict[str, Any]:
    return options.model_dump(by_alias=True, exclude_defaults=True)


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


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
    raise ExecutionError(f"no adapter for tools of kind {kind!r}", permanent=True)


_ = ErrorCode  # re-exported names used in annotations only
