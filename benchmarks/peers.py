"""The same `add(a, b)` called through each peer library and through toolcaller: the cases.

Each builder returns the ways one library validates and runs an async and a sync `add`, with no
model in the loop, as `Case`s that time a number of calls. A builder raises `LookupError` with
the reason when its library is not installed or answers something other than 3; the APIs used
were read in the installed sources (versions of the `bench` extra):

- pydantic-ai: `pydantic_ai/tool_manager.py`, `ToolManager(toolset).for_run_step(ctx)` then
  `handle_call(ToolCallPart)` ("validating the arguments, calling the tool");
- openai-agents: `agents/tool.py`, `function_tool(fn).on_invoke_tool(ToolContext, json_args)`;
- LangChain: `langchain_core/tools/structured.py`, `StructuredTool.from_function`, then
  `ainvoke` (async tool) and `invoke` (sync tool);
- FastMCP: `fastmcp/client/mixins/tools.py`, `Client(server).call_tool` over the in-memory
  transport (`Client(FastMCP)`), one session a round.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from benchmarks._timing import asample_us, sample_us
from toolcaller import ToolCaller, tool

PARAMS = {"a": 1, "b": 2}
ARGS_JSON = json.dumps(PARAMS)  # openai-agents takes the arguments as the model sends them
ASYNC, SYNC = "async tool", "sync tool"
Measure = Callable[[int, int], list[float]]  # (calls, warm-up calls) -> µs of each call


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


async def aadd(a: float, b: float) -> float:
    """Add two numbers (async)."""
    return a + b


@dataclass(frozen=True)
class Case:
    """One way of calling `add`: who calls, how, which kind of tool, and its timer."""

    peer: str
    how: str
    kind: str
    measure: Measure
    weight: int = 1  # a case `weight` times slower samples `1 / weight` as many calls a round

    @property
    def label(self) -> str:
        """The row's name, like `pydantic-ai handle_call, async tool`."""
        return f"{self.peer} {self.how}, {self.kind}"


def on_loop(runner: Any, fn: Callable[[], Awaitable[Any]]) -> Measure:
    """Time an async call on the runner's loop (one `runner.run` per batch of calls)."""
    return lambda n, warmup: runner.run(asample_us(fn, n, warmup))


def inline(fn: Callable[[], Any]) -> Measure:
    """Time a sync call in this thread, outside any event loop."""
    return lambda n, warmup: sample_us(fn, n, warmup)


def _check(label: str, value: Any) -> None:
    if value != 3:
        raise LookupError(f"{label} answered {value!r}, not 3")


def pydantic_ai(runner: Any, stack: contextlib.ExitStack) -> list[Case]:
    """pydantic-ai `ToolManager.handle_call`: argument validation and the call, no model."""
    try:
        from pydantic_ai import RunContext
        from pydantic_ai.messages import ToolCallPart
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.tool_manager import ToolManager
        from pydantic_ai.toolsets import FunctionToolset
        from pydantic_ai.usage import RunUsage
    except ImportError as exc:
        raise LookupError(f"not installed ({exc})") from exc
    context = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    manager = runner.run(ToolManager(FunctionToolset([add, aadd])).for_run_step(context))
    cases = []
    for name, kind in (("aadd", ASYNC), ("add", SYNC)):
        part = ToolCallPart(name, dict(PARAMS))

        def handle(part: Any = part) -> Awaitable[Any]:
            return manager.handle_call(part)  # type: ignore[no-any-return]

        _check(f"pydantic-ai {name}", runner.run(handle()))
        cases.append(Case("pydantic-ai", "handle_call", kind, on_loop(runner, handle)))
    return cases


def openai_agents(runner: Any, stack: contextlib.ExitStack) -> list[Case]:
    """openai-agents `FunctionTool.on_invoke_tool`: JSON arguments parsed, validated, run."""
    try:
        from agents import function_tool
        from agents.tool_context import ToolContext
    except ImportError as exc:
        raise LookupError(f"not installed ({exc})") from exc
    cases = []
    for fn, kind in ((aadd, ASYNC), (add, SYNC)):
        made = function_tool(fn)
        context = ToolContext(context=None, tool_name=made.name, tool_call_id="bench",
                              tool_arguments=ARGS_JSON)

        def invoke(made: Any = made, context: Any = context) -> Awaitable[Any]:
            return made.on_invoke_tool(context, ARGS_JSON)  # type: ignore[no-any-return]

        _check(f"openai-agents {made.name}", runner.run(invoke()))
        cases.append(Case("openai-agents", "on_invoke_tool", kind, on_loop(runner, invoke)))
    return cases


def langchain(runner: Any, stack: contextlib.ExitStack) -> list[Case]:
    """LangChain `StructuredTool`: `ainvoke` of an async tool, `invoke` of a sync one."""
    try:
        from langchain_core.tools import StructuredTool
    except ImportError as exc:
        raise LookupError(f"not installed ({exc})") from exc
    async_tool = StructuredTool.from_function(coroutine=aadd)
    sync_tool = StructuredTool.from_function(func=add)
    _check("LangChain ainvoke", runner.run(async_tool.ainvoke(PARAMS)))
    _check("LangChain invoke", sync_tool.invoke(PARAMS))
    return [
        Case("LangChain", "ainvoke", ASYNC, on_loop(runner, lambda: async_tool.ainvoke(PARAMS))),
        Case("LangChain", "invoke", SYNC, inline(lambda: sync_tool.invoke(PARAMS))),
    ]


def fastmcp(runner: Any, stack: contextlib.ExitStack) -> list[Case]:
    """FastMCP `Client.call_tool` on an in-memory server: the whole MCP round trip, no socket."""
    try:
        from fastmcp import Client, FastMCP
    except ImportError as exc:
        raise LookupError(f"not installed ({exc})") from exc
    server = FastMCP("bench")
    server.tool(add)
    server.tool(aadd)

    def measure(name: str) -> Measure:
        async def session(n: int, warmup: int) -> list[float]:
            async with Client(server) as client:  # opened and closed outside the timed calls
                return await asample_us(lambda: client.call_tool(name, PARAMS), n, warmup)

        return lambda n, warmup: runner.run(session(n, warmup))

    async def first(name: str) -> Any:
        async with Client(server) as client:
            return (await client.call_tool(name, PARAMS)).data

    cases = []
    for name, kind in (("aadd", ASYNC), ("add", SYNC)):
        _check(f"FastMCP {name}", runner.run(first(name)))
        cases.append(Case("FastMCP", "call_tool in memory", kind, measure(name), weight=10))
    return cases


def toolcaller(runner: Any, stack: contextlib.ExitStack) -> list[Case]:
    """Our own calls: `acall` of the async and the sync tool, `call` of the sync one."""
    caller = ToolCaller(tools=[tool(add), tool(aadd)])
    stack.callback(caller.close)

    def envelope_sum(envelope: Any) -> Any:
        return envelope.result if envelope.success else envelope.error

    _check("toolcaller acall aadd", envelope_sum(runner.run(caller.acall("aadd", PARAMS))))
    _check("toolcaller acall add", envelope_sum(runner.run(caller.acall("add", PARAMS))))
    _check("toolcaller call add", envelope_sum(caller.call("add", PARAMS)))
    return [
        Case("toolcaller", "acall", ASYNC, on_loop(runner, lambda: caller.acall("aadd", PARAMS))),
        Case("toolcaller", "acall", SYNC, on_loop(runner, lambda: caller.acall("add", PARAMS))),
        Case("toolcaller", "call", SYNC, inline(lambda: caller.call("add", PARAMS))),
    ]


BUILDERS: dict[str, Callable[[Any, contextlib.ExitStack], list[Case]]] = {
    "pydantic-ai": pydantic_ai,
    "openai-agents": openai_agents,
    "LangChain": langchain,
    "FastMCP": fastmcp,
    "toolcaller": toolcaller,
}
