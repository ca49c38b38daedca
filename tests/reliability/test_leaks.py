"""No leaks: many timed-out calls of each kind leave no process, thread, descriptor or memory.

`TOOLCALLER_LEAK_CALLS` sets the number of calls per kind (120 by default: more than the
history keeps (100) and than the thread pool's 64 workers, so both bounds are reached; the
benchmark `benchmarks/reliability.py` runs 1,000). Each scenario has its own caller, so its worker
pool starts empty.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability import churn, tools_faulty
from tests.reliability.conftest import FaultServer, py_tool, wait_until
from toolcaller import ToolCaller

CALLS = int(os.environ.get("TOOLCALLER_LEAK_CALLS", "120"))
RSS_MARGIN_MB = 25.0
FD_MARGIN = 4
SCENARIOS = list(churn.kinds())


@pytest.fixture
def key() -> Iterator[str]:
    made = uuid.uuid4().hex
    yield made
    churn.release(made)


@pytest.mark.integration
@pytest.mark.parametrize("name", SCENARIOS)
def test_timed_out_calls_leave_nothing_behind(name: str, key: str, fault_server: FaultServer,
                                              tmp_path: Path) -> None:
    """N timed-out calls: all TIMEOUT; children, threads, fds, memory and history bounded."""
    if name == "mcp-never":
        pytest.importorskip("mcp")
    kind = churn.kinds(fault_server.url, key)[name]
    caller = churn.make_caller(kind, tmp_path)
    try:
        figures = churn.churn(name, kind, caller, CALLS)
        max_workers = caller.adapter_for("python").threads.max_threads
    finally:
        churn.release(key)
        caller.close()
    print(figures.to_dict())
    # A tool that ends soon after its timeout may, on a busy machine, be done by the time the
    # caller's wait begins: a late success, not a leak (see the report in the README section).
    assert set(figures.codes) <= {"TIMEOUT", "OK"}
    assert figures.codes.get("TIMEOUT", 0) >= CALLS * (0.95 if kind.finishes else 1.0)
    assert figures.history == (churn.MAX_HISTORY, CALLS)
    assert figures.max_duration_ms < 1000
    before, _, after = figures.children
    assert after <= before, figures
    assert figures.pool_threads[1] <= max_workers
    threads_before, threads_peak, threads_after = figures.threads
    if name == "thread-never":
        # every worker hangs: the pool's bound is the only bound
        assert threads_peak <= threads_before + max_workers, figures
    else:
        assert threads_after <= threads_before + 2, figures
        assert threads_peak <= threads_before + 8, figures
    assert figures.fds[2] <= figures.fds[0] + FD_MARGIN, figures
    assert figures.rss_mb[2] - figures.rss_mb[0] <= RSS_MARGIN_MB, figures


def test_a_call_that_timed_out_in_the_queue_never_runs() -> None:
    """With every worker busy, a call that times out before it starts is not run later.

    The caller was told TIMEOUT; running the tool afterwards (an email sent, an order placed)
    would act on a call that, as far as the caller knows, did not happen.
    """
    key = uuid.uuid4().hex
    caller = ToolCaller(tools=[py_tool("block_until", "block")])
    pool = caller.adapter_for("python").threads
    try:
        for _ in range(pool.max_threads):
            caller.call("block", {"key": key}, timeout=20, retries=0)
        assert wait_until(lambda: pool.busy == pool.max_threads, 5.0)
        late = f"{key}-late"
        tools_faulty.event(late).set()
        envelope = caller.call("block", {"key": late}, timeout=50, deadline=300,
                               retries=0).to_dict()
        assert envelope["error"]["code"] == "TIMEOUT"
        assert "goes on running" not in envelope["error"]["message"]  # it never started
        churn.release(key)
        assert wait_until(lambda: pool.busy == 0, 5.0)
        time.sleep(0.1)
        assert late not in tools_faulty.RUNS
    finally:
        churn.release(key)
        caller.close()
