"""Load: many threads and tasks calling one caller at once, with mixed outcomes.

Every call gets exactly one envelope, the history holds exactly one record per call (same
ids), and each envelope's code is the one its tool always gives.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import check_envelope
from tests.reliability.conftest import (
    ADD_SCHEMA,
    FaultServer,
    http_tool,
    live_children,
    py_tool,
    wait_until,
)
from toolcaller import ToolCaller

THREADS = 20
CALLS_PER_THREAD = 50
TASKS = 1000

# tool name, params, options, expected code (None: success), expected attempts
PLAN: list[tuple[str, dict[str, Any], dict[str, Any], str | None, int]] = [
    ("ok", {"a": 1, "b": 2}, {}, None, 1),
    ("aok", {"a": 1, "b": 2}, {}, None, 1),
    ("fail", {}, {"retries": 1, "retryDelay": 0}, "RETRY_EXHAUSTED", 2),
    ("afail", {}, {"retries": 0}, "EXECUTION_ERROR", 1),
    ("aslow", {"seconds": 2}, {"timeout": 30, "retries": 0}, "TIMEOUT", 1),
    ("nan", {}, {}, "PARSE_ERROR", 1),
    ("ok", {"a": "x"}, {}, "INVALID_PARAMS", 0),
    ("missing", {}, {}, "TOOL_NOT_FOUND", 0),
    ("http", {"a": 2, "b": 3}, {}, None, 1),
    ("ok", {"a": 1, "b": 2}, {"timeout": -5}, "INVALID_PARAMS", 0),
]


@pytest.fixture
def caller(fault_server: FaultServer) -> Iterator[ToolCaller]:
    made = ToolCaller(tools=[
        py_tool("add", "ok", schema=ADD_SCHEMA), py_tool("aadd", "aok", schema=ADD_SCHEMA),
        py_tool("raise_system_exit", "fail"), py_tool("araise_custom_base", "afail"),
        py_tool("asleep", "aslow"), py_tool("nan", "nan"),
        http_tool("http", f"{fault_server.url}/add"),
    ], max_history=100_000)
    # Adapters are made on first use; racing first uses are tested apart (TestFirstUse).
    made.call("http", {"a": 1, "b": 1})
    made.history.clear()
    yield made
    made.close()


def check(envelopes: list[tuple[int, dict[str, Any]]], caller: ToolCaller, total: int) -> Counter:
    """Check one envelope per call, one record per call, and the codes; return the codes."""
    assert len(envelopes) == total
    assert sorted(i for i, _ in envelopes) == list(range(total))  # one envelope per call
    codes: Counter[str | None] = Counter()
    for index, envelope in envelopes:
        check_envelope(envelope)
        _, _, _, code, attempts = PLAN[index % len(PLAN)]
        got = None if envelope["success"] else envelope["error"]["code"]
        assert got == code, (PLAN[index % len(PLAN)], envelope)
        assert envelope["metadata"]["attempts"] == attempts
        codes[got] += 1
    ids = [e["metadata"]["callId"] for _, e in envelopes]
    assert len(set(ids)) == total
    records = caller.history.records()
    assert caller.history.total == total
    assert len(records) == total
    assert sorted(r.call_id for r in records) == sorted(ids)
    by_id = {r.call_id: r for r in records}
    for _, envelope in envelopes:
        record = by_id[envelope["metadata"]["callId"]]
        assert record.success is envelope["success"]
        assert record.code == (None if envelope["success"] else envelope["error"]["code"])
    return codes


def request(index: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    name, params, options, _, _ = PLAN[index % len(PLAN)]
    return name, params, options


class TestLoad:
    def test_threads_and_tasks_at_once(self, caller: ToolCaller) -> None:
        """20 threads × 50 `call`s and 1,000 `acall` tasks at once: one envelope and record each."""
        results: list[tuple[int, dict[str, Any]]] = []
        lock = threading.Lock()
        start = threading.Barrier(THREADS + 1)

        def worker(first: int) -> None:
            start.wait()
            for index in range(first, first + CALLS_PER_THREAD):
                name, params, options = request(index)
                envelope = caller.call(name, params, **options).to_dict()
                with lock:
                    results.append((index, envelope))

        async def tasks(first: int) -> list[dict[str, Any]]:
            async def one(index: int) -> dict[str, Any]:
                name, params, options = request(index)
                return (await caller.acall(name, params, **options)).to_dict()

            start.wait()
            return await asyncio.gather(*(one(first + i) for i in range(TASKS)))

        threads = [threading.Thread(target=worker, args=(t * CALLS_PER_THREAD,))
                   for t in range(THREADS)]
        for thread in threads:
            thread.start()
        offset = THREADS * CALLS_PER_THREAD
        gathered = asyncio.run(tasks(offset))
        for thread in threads:
            thread.join(60)
        results += [(offset + i, e) for i, e in enumerate(gathered)]
        codes = check(results, caller, offset + TASKS)
        assert codes[None] == (offset + TASKS) * 3 // len(PLAN)

    def test_handle_from_threads(self, caller: ToolCaller) -> None:
        """`handle` (dict in, dict out) under the same load gives the same guarantees."""
        results: list[tuple[int, dict[str, Any]]] = []
        lock = threading.Lock()

        def worker(first: int) -> None:
            for index in range(first, first + CALLS_PER_THREAD):
                name, params, options = request(index)
                envelope = caller.handle({"toolName": name, "params": params,
                                          "options": options})
                with lock:
                    results.append((index, envelope))

        threads = [threading.Thread(target=worker, args=(t * CALLS_PER_THREAD,))
                   for t in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        check(results, caller, THREADS * CALLS_PER_THREAD)


class TestFirstUse:
    """The first calls of a new caller, from many threads at once, share one of each resource."""

    @pytest.fixture
    def slow_first_use(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Make building an adapter or a process pool take 50 ms (widens any race to see it)."""
        import toolcaller.adapters.process as process_module
        import toolcaller.caller as caller_module

        builtin, pool_init = caller_module.make_adapter, process_module.ProcessPool.__init__

        def slow_builtin(*args: Any) -> Any:
            time.sleep(0.05)
            return builtin(*args)

        def slow_pool_init(self: Any) -> None:
            time.sleep(0.05)
            pool_init(self)

        monkeypatch.setattr(caller_module, "make_adapter", slow_builtin)
        monkeypatch.setattr(process_module.ProcessPool, "__init__", slow_pool_init)

    @pytest.mark.usefixtures("slow_first_use")
    def test_http_clients_are_not_duplicated(self, fault_server: FaultServer) -> None:
        """Racing first HTTP calls leave no connection open once the caller is closed."""
        warm = ToolCaller(tools=[http_tool("http", f"{fault_server.url}/add")])
        warm.call("http", {"a": 1, "b": 2})  # imports and one-time set-up, before the baseline
        warm.close()
        gc.collect()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            caller = ToolCaller(tools=[http_tool("http", f"{fault_server.url}/add")])
            run_at_once(lambda: caller.call("http", {"a": 1, "b": 2}), threads=8)
            caller.close()
            gc.collect()
        unclosed = [str(w.message) for w in caught if "unclosed" in str(w.message)]
        assert unclosed == []

    @pytest.mark.usefixtures("slow_first_use")
    def test_process_pools_are_not_duplicated(self) -> None:
        """Racing first calls of a process-isolated tool leave no child once closed."""
        caller = ToolCaller(tools=[py_tool("add", "p", isolation="process")])
        caller.call("p", {"a": 1, "b": 2})  # starts the forkserver (it stays, by design)
        caller.close()
        baseline = live_children()
        caller = ToolCaller(tools=[py_tool("add", "p", isolation="process")])
        run_at_once(lambda: caller.call("p", {"a": 1, "b": 2}), threads=8)
        caller.close()
        assert wait_until(lambda: live_children() <= baseline, 3.0), live_children() - baseline


def run_at_once(fn: Any, threads: int) -> None:
    """Run `fn` in `threads` threads released together."""
    barrier = threading.Barrier(threads)

    def worker() -> None:
        barrier.wait()
        fn()

    started = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join(60)
