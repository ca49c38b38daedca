"""Running a response's tool calls: every call answered, in parallel, on time, recorded.

`arun_tool_calls(caller, response)` reads the calls (`toolcaller.llm.calls`), runs each through
`caller.acall` with the model's call id (`tool_call_id`, kept in the history), and returns a
`ToolReplies` whose `messages` are the provider's reply shape (`toolcaller.llm.replies`):
exactly one reply per call, in call order, whatever happens.

- Names: the model calls `math_add`; the tool is `math.add`. The mapping is
  `toolcaller.export.tool_name_map` over the tools offered (`tools=`, default: the caller's),
  the one `to_openai` and the others export with. An unknown name is TOOL_NOT_FOUND with
  suggestions, written in the model's names.
- In parallel: all at once, or `concurrency` at a time. A tool whose `metadata["sequential"]`
  is true runs alone: after the calls before it end, before the calls after it start.
- On time: `deadline` (ms) bounds the whole response; each call gets the time left (or its own
  deadline, if shorter), and a call that cannot start in time is answered TIMEOUT.
- Options: `options` for every call, `tool_options` per tool name (either spelling); the
  tool's own defaults stay under them.
- A `null` sent for an optional param whose schema does not take null (what a strict-mode
  model sends for "absent") is dropped (`toolcaller.llm.strict.drop_absent_nulls`).
- `on_error="raise"` raises the first failed call's error once every call is answered
  (`ToolReplies.raise_for_error`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack

from toolcaller._types import JSONObject
from toolcaller.core.clock import SystemClock
from toolcaller.core.events import OnEvent
from toolcaller.core.options import options_for
from toolcaller.core.redact import MASK, is_secret_name
from toolcaller.core.tool import Tool
from toolcaller.envelope import Envelope
from toolcaller.errors import (
    ExecutionError,
    InvalidParamsError,
    ToolCallError,
    ToolTimeoutError,
    UsageError,
)
from toolcaller.export import NameMap, tool_name_map
from toolcaller.llm.calls import Provider, ToolCall, read_tool_calls
from toolcaller.llm.replies import ToolReplies, reply_messages
from toolcaller.llm.strict import drop_absent_nulls

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["RunSettings", "arun_tool_calls", "run_tool_calls"]

RAW_PREVIEW_CHARS = 500
"""How much of unreadable arguments the history keeps (secrets masked)."""
PORTAL_GRACE_S = 0.05
"""How long past the response's deadline `run_tool_calls` waits before it asks whether the
private loop still turns (`ToolCaller.call` does the same for one call)."""
PROBE_S = 0.1
"""How long the loop may take to run a no-op before it is taken for blocked."""
STILL_COMING_S = 1.0
"""How much longer to wait for the replies of a loop that still turns (a busy machine)."""


class RunSettings(TypedDict, total=False):
    """Keyword settings of `run_tool_calls` / `arun_tool_calls` (see the module docstring)."""

    provider: Provider | None
    concurrency: int | None
    deadline: float | None
    options: JSONObject | None
    tool_options: Mapping[str, JSONObject] | None
    on_error: Literal["reply", "raise"]
    tools: Iterable[Tool | Mapping[str, Any]] | None
    on_event: OnEvent | None


def run_tool_calls(caller: ToolCaller, response: Any,
                   **settings: Unpack[RunSettings]) -> ToolReplies:
    """Run a response's tool calls and wait for the replies; works inside a running loop too.

    The calls run on the caller's private loop. With a `deadline`, the replies come back in
    time even if a tool blocks that loop (an async tool calling blocking code): every call
    then gets a TIMEOUT reply saying so, as `ToolCaller.call` does for one call.
    """
    if caller.portal.in_loop_thread():
        raise RuntimeError("run_tool_calls() blocks, and this is the caller's own loop: "
                           "await arun_tool_calls()")
    deadline = settings.get("deadline")
    if deadline is None or not isinstance(caller.clock, SystemClock):  # fake time: no bound
        return caller.portal.run(arun_tool_calls(caller, response, **settings))
    _check(settings.get("concurrency"), deadline, settings.get("on_error", "reply"))
    provider, calls = read_tool_calls(response, settings.get("provider"))
    future = caller.portal.submit(arun_tool_calls(caller, response, **settings))
    try:
        try:
            return future.result(timeout=deadline / 1000.0 + PORTAL_GRACE_S)
        except concurrent.futures.TimeoutError:
            if not caller.portal.turns(PROBE_S):
                raise
            return future.result(timeout=STILL_COMING_S)  # late, but on its way
    except concurrent.futures.TimeoutError:
        future.cancel()  # the private loop is blocked: answer without it
        return _unanswered(caller, provider, calls, settings.get("on_error", "reply"))
    except BaseException:
        future.cancel()  # Ctrl-C: stop the calls on the private loop too
        raise


def _unanswered(caller: ToolCaller, provider: Provider, calls: list[ToolCall],
                on_error: str) -> ToolReplies:
    """TIMEOUT replies for calls whose loop is blocked (each recorded in the history)."""
    envelopes = [caller.record_failure(call.name, call.arguments, ToolTimeoutError(
        "no answer by the response's deadline: a tool is blocking the caller's event loop "
        "(an async tool must not call blocking code)"), tool_call_id=call.id) for call in calls]
    replies = ToolReplies(provider, calls, envelopes,
                          reply_messages(provider, calls, envelopes, [{} for _ in calls]))
    if on_error == "raise":
        replies.raise_for_error()
    return replies


async def arun_tool_calls(caller: ToolCaller, response: Any, *, provider: Provider | None = None,
                          concurrency: int | None = None, deadline: float | None = None,
                          options: JSONObject | None = None,
                          tool_options: Mapping[str, JSONObject] | None = None,
                          on_error: Literal["reply", "raise"] = "reply",
                          tools: Iterable[Tool | Mapping[str, Any]] | None = None,
                          on_event: OnEvent | None = None) -> ToolReplies:
    """Run a response's tool calls on the running loop; return the replies (see the module)."""
    _check(concurrency, deadline, on_error)
    found, calls = read_tool_calls(response, provider)
    run = _Run(caller, deadline, options, tool_options, on_event,
               list(tools) if tools is not None else None)
    envelopes: list[Envelope | None] = [None] * len(calls)
    limit = asyncio.Semaphore(concurrency) if concurrency else None

    async def answer(index: int) -> None:
        if limit is None:
            envelopes[index] = await run.answer(calls[index])
            return
        async with limit:
            envelopes[index] = await run.answer(calls[index])

    for phase in await run.phases(calls):
        if len(phase) == 1:
            await answer(phase[0])  # no task to make for a lone call
        else:
            await asyncio.gather(*(answer(i) for i in phase))
    done = [e for e in envelopes if e is not None]
    names = [run.names_for(c, e) for c, e in zip(calls, done, strict=True)]
    replies = ToolReplies(found, calls, done, reply_messages(found, calls, done, names))
    if on_error == "raise":
        replies.raise_for_error()
    return replies


def _check(concurrency: Any, deadline: Any, on_error: Any) -> None:
    if concurrency is not None and (not isinstance(concurrency, int) or concurrency < 1):
        raise UsageError(f"concurrency must be a positive integer or None, got {concurrency!r}")
    if deadline is not None and (isinstance(deadline, bool) or not isinstance(
            deadline, int | float) or not deadline > 0):
        raise UsageError(f"deadline must be a positive number of ms or None, got {deadline!r}")
    if on_error not in ("reply", "raise"):
        raise UsageError(f"on_error must be 'reply' or 'raise', got {on_error!r}")


class _Run:
    """One response's calls: names, options, the deadline, and the answer to each call."""

    def __init__(self, caller: ToolCaller, deadline: float | None, options: JSONObject | None,
                 tool_options: Mapping[str, JSONObject] | None, on_event: OnEvent | None,
                 tools: list[Tool | Mapping[str, Any]] | None) -> None:
        self.caller, self.deadline, self.on_event = caller, deadline, on_event
        self.options, self.tool_options = dict(options or {}), dict(tool_options or {})
        self.started = caller.clock.now()
        self._map = None if tools is None else _name_map(tuple(
            t.name if isinstance(t, Tool) else str(t["name"]) for t in tools))
        self._resolved: dict[str, str] = {}

    async def phases(self, calls: list[ToolCall]) -> list[list[int]]:
        """Groups of calls that run together: a sequential tool's call is a group of its own."""
        phases: list[list[int]] = [[]]
        for index, call in enumerate(calls):
            tool = await self.tool(call)
            if tool is not None and tool.metadata.get("sequential") is True:
                phases += [[index], []]
            else:
                phases[-1].append(index)
        return [phase for phase in phases if phase]

    async def tool(self, call: ToolCall) -> Tool | None:
        """The tool a call names, if known without listing a source.

        An MCP server's tools are known once listed; until then the engine lists them when
        the call runs, and reports what fails.
        """
        return self.caller.registry.known(await self.resolve(call.name))

    async def resolve(self, model_name: str) -> str:
        """The tool name behind the name a model used (itself if nothing maps it)."""
        if model_name in self._resolved:
            return self._resolved[model_name]
        name = model_name
        if self._map is not None:
            name = self._map.to_original.get(model_name, model_name)
        elif self.caller.registry.known(model_name) is None and model_name:
            name = (await self._default_map()).to_original.get(model_name, model_name)
        self._resolved[model_name] = name
        return name

    async def _default_map(self) -> NameMap:
        registry = self.caller.registry
        if self._map is None:
            if registry.sources:  # listing may start servers: not on the loop
                listed, _ = await asyncio.to_thread(registry.all_tools)
            else:
                listed = registry.static_tools()
            self._map = _name_map(tuple(t.name for t in listed))
        return self._map

    def names_for(self, call: ToolCall, envelope: Envelope) -> dict[str, str]:
        """Tool names → the model's names, for a failure's text (its suggestions included)."""
        names = {self._resolved.get(call.name, call.name): call.name}
        details = envelope.error.details if envelope.error is not None else None
        suggestions = details.get("suggestions") if isinstance(details, dict) else None
        if suggestions:
            known = self._map or _name_map(tuple(
                t.name for t in self.caller.registry.static_tools()))
            names.update({s: known.to_exported[s] for s in suggestions
                          if isinstance(s, str) and s in known.to_exported})
        return names

    async def answer(self, call: ToolCall) -> Envelope:
        """The envelope of one call; never raises (but for cancellation)."""
        name = await self.resolve(call.name)
        try:
            return await self._answer(call, name)
        except ToolCallError as error:
            return self.caller.record_failure(name, None, error, tool_call_id=call.id)
        except Exception as exc:  # noqa: BLE001 - one reply per call, even if the engine broke
            broke = ExecutionError(f"internal error while running the call: "
                                   f"{type(exc).__name__}: {exc}", permanent=True)
            return self.caller.record_failure(name, None, broke, tool_call_id=call.id)

    async def _answer(self, call: ToolCall, name: str) -> Envelope:
        tool = await self.tool(call)
        if call.problem is not None and await self._exists(tool, name):
            bad = InvalidParamsError(call.problem,
                                     details={"arguments": _preview(call.raw_arguments)})
            return self.caller.record_failure(name, _preview(call.raw_arguments), bad,
                                              tool_call_id=call.id)
        params = call.arguments  # None for bad arguments to an unknown tool: TOOL_NOT_FOUND
        if tool is not None:
            params = drop_absent_nulls(params, tool.params_schema)
        options = {**self.options, **(self.tool_options.get(call.name)
                                      or self.tool_options.get(name) or {})}
        if self.deadline is not None:
            left = self.deadline - (self.caller.clock.now() - self.started) * 1000.0
            if left <= 0:
                late = ToolTimeoutError(f"the response's deadline ({self.deadline:g} ms) "
                                        "passed before this call could start")
                return self.caller.record_failure(name, params, late, tool_call_id=call.id)
            options["deadline"] = min(left, _own_deadline(tool, options))
        return await self.caller.acall(name, params, options or None, tool_call_id=call.id,
                                       on_event=self.on_event)


    async def _exists(self, tool: Tool | None, name: str) -> bool:
        registry = self.caller.registry
        if tool is not None or not name or not registry.needs_listing(name):
            return tool is not None or not name
        return await asyncio.to_thread(registry.get, name) is not None


@functools.lru_cache(maxsize=32)
def _name_map(names: tuple[str, ...]) -> NameMap:
    """The export mapping of a set of names (the same registry answers many responses)."""
    return tool_name_map([{"name": name} for name in names])


def _own_deadline(tool: Tool | None, options: JSONObject) -> float:
    """The deadline a call would have without the response's (ms)."""
    try:
        return options_for(tool.options if tool else {}, options, {}).deadline
    except InvalidParamsError:
        return float("inf")  # the engine reports the bad options


def _preview(raw: str | None) -> str | None:
    """The start of unreadable arguments, with values under secret-looking keys masked."""
    if raw is None:
        return None

    def mask(match: re.Match[str]) -> str:
        return f'{match.group(1)}"{MASK}"' if is_secret_name(match.group(2)) else match.group(0)

    text = raw[:RAW_PREVIEW_CHARS]
    return re.sub(r'("([^"\\]{1,64})"\s*:\s*)"(?:[^"\\]|\\.)*"?', mask, text)
