"""The model side: one response's tool calls answered, against calling the tools yourself.

Run: python -m benchmarks.llm [--runs 20] [--n 2000]

1. One OpenAI Chat response with 100 calls of a 50 ms tool, answered by `arun_tool_calls`
   (async tool; a sync tool too, which needs a worker thread per call: at most 64 run at once)
   and by the sync `run_tool_calls`. Target: ≤ 0.1 s for the async tool.
2. Per-response overhead with instant tools: `arun_tool_calls` against what you would write
   yourself (parse each call's JSON arguments, gather the calls, build the reply messages),
   for responses of 1 and 10 calls; "acall each" is the engine alone (the same, with
   `caller.acall` for each call: validation, timeouts, history, envelopes); "read+reply" is
   the model side's own work alone (reading the calls, writing the replies).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from benchmarks._timing import asample_us, sample_us, summary, table
from toolcaller import ToolCaller, tool
from toolcaller.llm.calls import read_tool_calls
from toolcaller.llm.replies import reply_messages

CALLS = 100
PAUSE_S = 0.05
TARGET_S = 0.1


async def slow_async(x: int) -> int:
    """Wait 50 ms, return x."""
    await asyncio.sleep(PAUSE_S)
    return x


def slow_sync(x: int) -> int:
    """Block 50 ms, return x."""
    time.sleep(PAUSE_S)
    return x


async def instant(x: int) -> int:
    """Return x."""
    return x


def response(name: str, count: int) -> dict[str, Any]:
    """An OpenAI chat completion calling `name` `count` times."""
    calls = [{"id": f"call_{i}", "type": "function",
              "function": {"name": name, "arguments": json.dumps({"x": i})}}
             for i in range(count)]
    return {"id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                         "message": {"role": "assistant", "content": None,
                                     "tool_calls": calls}}]}


async def by_hand(fns: dict[str, Any], reply: dict[str, Any]) -> list[dict[str, Any]]:
    """What calling the tools yourself takes: parse, gather, write the tool messages."""
    calls = reply["choices"][0]["message"]["tool_calls"]
    results = await asyncio.gather(*(fns[c["function"]["name"]](
        **json.loads(c["function"]["arguments"])) for c in calls))
    return [{"role": "tool", "tool_call_id": c["id"], "content": json.dumps(r)}
            for c, r in zip(calls, results, strict=True)]


async def via_acall(caller: ToolCaller, reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The engine without the model side: `acall` each call yourself, write the messages."""
    calls = reply["choices"][0]["message"]["tool_calls"]
    envelopes = await asyncio.gather(*(caller.acall(
        "fast.echo", json.loads(c["function"]["arguments"]), tool_call_id=c["id"])
        for c in calls))
    return [{"role": "tool", "tool_call_id": c["id"], "content": json.dumps(e.result)}
            for c, e in zip(calls, envelopes, strict=True)]


async def awall_s(caller: ToolCaller, reply: dict[str, Any], runs: int) -> list[float]:
    """Seconds per response answered with `arun_tool_calls`, all on one running loop."""
    times = []
    for _ in range(runs + 1):  # the first one warms up (threads, caches)
        started = time.perf_counter()
        replies = await caller.arun_tool_calls(reply)
        times.append(time.perf_counter() - started)
        assert replies.ok
        assert len(replies.messages) == CALLS
    return times[1:]


def wall_s(caller: ToolCaller, reply: dict[str, Any], runs: int) -> list[float]:
    """Seconds per response answered with the sync `run_tool_calls`."""
    times = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        replies = caller.run_tool_calls(reply)
        times.append(time.perf_counter() - started)
        assert replies.ok
        assert len(replies.messages) == CALLS
    return times[1:]


async def abare_s(reply: dict[str, Any], runs: int) -> list[float]:
    times = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        await by_hand({"slow_async": slow_async}, reply)
        times.append(time.perf_counter() - started)
    return times[1:]


def hundred_calls(runs: int) -> list[dict[str, Any]]:
    caller = ToolCaller([tool(slow_async, name="slow.async"),
                         tool(slow_sync, name="slow.sync")])
    cases = {
        "async tool, arun_tool_calls": asyncio.run(
            awall_s(caller, response("slow_async", CALLS), runs)),
        "async tool, run_tool_calls (sync)": wall_s(caller, response("slow_async", CALLS), runs),
        "sync tool, arun_tool_calls": asyncio.run(
            awall_s(caller, response("slow_sync", CALLS), runs)),
        "async tool, by hand (parse, gather, reply)": asyncio.run(
            abare_s(response("slow_async", CALLS), runs)),
    }
    caller.close()
    rows = []
    for label, times in cases.items():
        median = statistics.median(times)
        targeted = label.startswith(("async tool, a", "async tool, run"))
        rows.append({"case": f"100 × 50 ms, {label}", "median ms": median * 1000,
                     "max ms": max(times) * 1000,
                     "target": f"≤ {TARGET_S * 1000:g} ms" if targeted else "",
                     "ok?": ("yes" if median <= TARGET_S else "NO") if targeted else ""})
    return rows


def overhead(n: int) -> list[dict[str, Any]]:
    caller = ToolCaller([tool(instant, name="fast.echo")])
    rows = []

    async def measure() -> None:
        for count in (1, 10):
            reply = response("fast_echo", count)
            ours = summary(await asample_us(lambda r=reply: caller.arun_tool_calls(r), n))
            mine = summary(await asample_us(
                lambda r=reply: by_hand({"fast_echo": instant}, r), n))
            engine = summary(await asample_us(lambda r=reply: via_acall(caller, r), n))
            done = await caller.arun_tool_calls(reply)
            layer = summary(sample_us(lambda r=reply, d=done, k=count: reply_messages(
                "openai-chat", read_tool_calls(r)[1], d.envelopes, [{}] * k), n))
            rows.append({"case": f"{count} instant call(s) per response",
                         "by hand µs": mine["median"], "acall each µs": engine["median"],
                         "arun_tool_calls µs": ours["median"], "p99 µs": ours["p99"],
                         "read+reply µs": layer["median"],
                         "overhead µs": ours["median"] - mine["median"],
                         "per call µs": (ours["median"] - mine["median"]) / count})

    asyncio.run(measure())
    caller.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="responses per 100-call case")
    parser.add_argument("--n", type=int, default=2000, help="responses per overhead case")
    args = parser.parse_args()
    print(table(hundred_calls(args.runs), ["case", "median ms", "max ms", "target", "ok?"]))
    print()
    print(table(overhead(args.n), ["case", "by hand µs", "acall each µs", "arun_tool_calls µs",
                                   "p99 µs", "overhead µs", "per call µs", "read+reply µs"]))


if __name__ == "__main__":
    main()
