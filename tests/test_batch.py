"""Batch calls (`toolcaller.batch`): rows in, a DataFrame out, bounded, ordered, cancellable."""

from __future__ import annotations

import asyncio
import datetime
import json
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import typing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from toolcaller import ToolCaller, tool
from toolcaller.batch import (
    OUTCOME_COLUMNS,
    CallerSource,
    Envelopes,
    amap_calls,
    map_calls,
    source_for,
)
from toolcaller.errors import UsageError


def _days_between(start: datetime.date, end: datetime.date) -> int:
    """Days from start to end (dates arrive as ISO strings: pydantic coerces them)."""
    return (end - start).days


# TODO: schema_from_function reads string annotations (PEP 563) unresolved; resolve them here
# until it uses inspect.signature(fn, eval_str=True).
_days_between.__annotations__ = typing.get_type_hints(_days_between)
days_between = tool(_days_between, name="days_between")


def triple(x: int) -> dict[str, int]:
    """Triple a number."""
    return {"x": x * 3}


class InFlight:
    """Counts calls running at once and remembers the most seen."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.lock = threading.Lock()

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


@pytest.fixture
def caller() -> Iterator[ToolCaller]:
    made = ToolCaller()
    yield made
    made.close()


@pytest.fixture(scope="module")
def processes() -> Iterator[ProcessPoolExecutor]:
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


def counting_caller(counter: InFlight, *, sync: bool = False) -> ToolCaller:
    async def hold(ms: float = 10) -> dict[str, float]:
        counter.enter()
        try:
            await asyncio.sleep(ms / 1000)
        finally:
            counter.leave()
        return {"ms": ms}

    def hold_sync(ms: float = 10) -> dict[str, float]:
        counter.enter()
        try:
            time.sleep(ms / 1000)
        finally:
            counter.leave()
        return {"ms": ms}

    return ToolCaller(tools=[tool(hold_sync if sync else hold, name="hold")])


DIVISIONS = [{"a": 6, "b": 3}, {"a": 1, "b": 0}, {"a": 5, "b": 2}, {"a": 2, "b": 0}]


class TestRowsAndFrame:
    def test_list_of_dicts_gives_input_and_outcome_columns(self, caller: ToolCaller) -> None:
        """A list of dicts gives its keys as columns, then the outcome columns, in row order."""
        frame = map_calls(caller, "math.divide", DIVISIONS, progress=False)
        assert list(frame.columns) == ["a", "b", *OUTCOME_COLUMNS]
        assert frame["success"].tolist() == [True, False, True, False]
        assert frame["code"].tolist()[1] == "EXECUTION_ERROR"
        assert frame["result"].tolist()[0] == {"quotient": 2.0}
        assert frame["attempts"].tolist() == [1, 1, 1, 1]
        assert "ZeroDivisionError" in frame["message"].iloc[3]
        assert frame["call_id"].is_unique

    def test_union_of_keys_first_seen_first(self, caller: ToolCaller) -> None:
        """Columns are the union of the rows' keys; a row lacking a key is sent without it."""
        rows = [{"text": "a"}, {"text": "b", "upper": True}, {"repeat": 2, "text": "c"}]
        frame = map_calls(caller, "text.echo", rows, progress=False)
        assert list(frame.columns[:3]) == ["text", "upper", "repeat"]
        assert frame["result"].map(lambda r: r["text"]).tolist() == ["a", "B", "c c"]

    def test_dataframe_rows_drop_missing_cells(self, caller: ToolCaller) -> None:
        """A DataFrame row becomes params: missing cells are absent keys, numpy becomes Python."""
        table = pd.DataFrame({"a": np.array([1, 2, 3], dtype=np.int32), "b": [1.5, np.nan, 2.0]},
                             index=["x", "y", "z"])
        frame = map_calls(caller, "math.add", table, progress=False)
        assert list(frame.index) == ["x", "y", "z"]
        assert frame["a"].dtype == np.int32  # the input columns are kept as they were
        assert frame["success"].tolist() == [True, False, True]
        assert frame.loc["y", "code"] == "INVALID_PARAMS"
        assert "'b' is required" in frame.loc["y", "message"]
        assert frame.loc["z", "result"] == {"sum": 5.0}
        record = caller.history.get(frame.loc["x", "call_id"])
        assert record is not None
        assert json.dumps(record.params) == '{"a": 1, "b": 1.5}'

    def test_nullable_and_object_cells(self, caller: ToolCaller) -> None:
        """pd.NA and None cells are dropped too; nullable integers arrive as ints."""
        table = pd.DataFrame({"text": ["a", None], "repeat": pd.array([2, pd.NA], dtype="Int64")})
        frame = map_calls(caller, "text.echo", table, progress=False)
        assert frame["result"].iloc[0] == {"text": "a a", "length": 3}
        assert frame["code"].iloc[1] == "INVALID_PARAMS"

    def test_envelopes_are_kept_by_position(self, caller: ToolCaller) -> None:
        """`attrs["envelopes"]` holds each row's envelope; derived frames share it, uncopied."""
        frame = map_calls(caller, "math.divide", DIVISIONS, progress=False)
        envelopes = frame.attrs["envelopes"]
        assert isinstance(envelopes, Envelopes)
        assert len(envelopes) == 4
        assert envelopes[1].error is not None
        assert envelopes[1].error.code == "EXECUTION_ERROR"
        assert envelopes[2].metadata.call_id == frame["call_id"].iloc[2]
        assert frame[frame["success"]].attrs["envelopes"] is envelopes

    def test_success_envelopes_are_built_when_read_and_equal_a_call(
            self, caller: ToolCaller) -> None:
        """A success row's envelope, built on reading, is the one `call` gives; it pickles."""
        frame = map_calls(caller, "math.divide", DIVISIONS, progress=False)
        envelopes = frame.attrs["envelopes"]
        first = envelopes[0]
        assert envelopes[0] is first  # built once
        direct = caller.call("math.divide", DIVISIONS[0]).to_dict()
        built = first.to_dict()
        assert built["result"] == direct["result"] == frame["result"][0]
        assert set(built["metadata"]) == set(direct["metadata"])
        assert [e.success for e in envelopes[-4:]] == frame["success"].tolist()
        again = pickle.loads(pickle.dumps(frame))
        assert again.attrs["envelopes"][2].to_dict() == envelopes[2].to_dict()

    def test_a_row_that_is_not_an_object_fails_alone(self, caller: ToolCaller) -> None:
        """A row that is not a dict gets INVALID_PARAMS; the other rows run."""
        frame = map_calls(caller, "math.add", [{"a": 1, "b": 2}, 7, {"a": 2, "b": 2}],
                          progress=False)
        assert frame["code"].tolist()[1] == "INVALID_PARAMS"
        assert frame["success"].tolist() == [True, False, True]

    def test_unknown_tool_gives_every_row_not_found(self, caller: ToolCaller) -> None:
        """An unknown tool name is TOOL_NOT_FOUND on every row, never an exception."""
        frame = map_calls(caller, "math.ad", [{"a": 1}, {"a": 2}], progress=False)
        assert frame["code"].tolist() == ["TOOL_NOT_FOUND"] * 2
        assert frame["attempts"].tolist() == [0, 0]

    def test_outcome_names_in_the_input_are_renamed(self) -> None:
        """An input column named like an outcome column becomes `param:<name>`."""
        def note(message: str) -> str:
            return message.upper()

        with ToolCaller(tools=[tool(note)]) as caller:
            frame = map_calls(caller, "note", [{"message": "hi"}], progress=False)
        assert frame["param:message"].tolist() == ["hi"]
        assert frame["result"].tolist() == ["HI"]
        assert frame["message"].isna().all()

    def test_options_apply_to_every_row(self, caller: ToolCaller) -> None:
        """Options and option keywords reach every call."""
        frame = map_calls(caller, "demo.slow", [{"seconds": 1}] * 3, progress=False,
                          options={"retries": 0}, timeout=20)
        assert frame["code"].tolist() == ["TIMEOUT"] * 3
        assert frame["attempts"].tolist() == [1, 1, 1]

    def test_empty_input_gives_an_empty_frame(self, caller: ToolCaller) -> None:
        """No rows, no calls: an empty frame with the outcome columns."""
        frame = map_calls(caller, "math.add", [], progress=False)
        assert list(frame.columns) == list(OUTCOME_COLUMNS)
        assert len(frame) == 0

    @pytest.mark.parametrize("bad", [0, -1, 1.5, True], ids=["zero", "negative", "float", "bool"])
    def test_bad_concurrency_is_a_usage_error(self, caller: ToolCaller, bad: Any) -> None:
        """`concurrency` must be a positive integer."""
        with pytest.raises(UsageError, match="concurrency"):
            map_calls(caller, "math.add", [{"a": 1, "b": 1}], concurrency=bad)

    def test_options_must_be_a_dict(self, caller: ToolCaller) -> None:
        """Options that are not a dict are refused before any row runs."""
        with pytest.raises(UsageError, match="options must be a dict"):
            map_calls(caller, "math.add", [{"a": 1, "b": 1}], options="fast")  # type: ignore[arg-type]

    def test_bad_option_values_fail_each_row(self, caller: ToolCaller) -> None:
        """A bad option value is INVALID_PARAMS on every row, like a single call."""
        frame = map_calls(caller, "math.add", [{"a": 1, "b": 1}] * 2, progress=False,
                          timeout=-5)
        assert frame["code"].tolist() == ["INVALID_PARAMS"] * 2

    def test_a_single_dict_is_a_usage_error(self, caller: ToolCaller) -> None:
        """A lone dict is not a batch: the message says to wrap it in a list."""
        with pytest.raises(UsageError, match="wrap a single row"):
            map_calls(caller, "math.add", {"a": 1, "b": 1})


class TestConcurrency:
    def test_order_is_kept_whatever_finishes_first(self) -> None:
        """Rows that finish in reverse order still come back in input order."""
        counter = InFlight()
        with counting_caller(counter) as caller:
            rows = [{"ms": 30 - i * 3} for i in range(10)]
            frame = map_calls(caller, "hold", rows, concurrency=10, progress=False)
        assert [r["ms"] for r in frame["result"]] == [r["ms"] for r in rows]

    @pytest.mark.parametrize("limit", [1, 3, 8])
    def test_limit_bounds_the_calls_in_flight(self, limit: int) -> None:
        """At most `concurrency` calls run at once, and the limit is reached."""
        counter = InFlight()
        with counting_caller(counter) as caller:
            frame = map_calls(caller, "hold", [{"ms": 5}] * 24, concurrency=limit,
                              progress=False)
        assert frame["success"].all()
        assert counter.most == limit

    def test_limit_holds_for_sync_tools(self) -> None:
        """Sync tools run in worker threads, still at most `concurrency` at once."""
        counter = InFlight()
        with counting_caller(counter, sync=True) as caller:
            map_calls(caller, "hold", [{"ms": 5}] * 20, concurrency=4, progress=False)
        assert counter.most == 4

    def test_limit_holds_with_an_executor(self) -> None:
        """With an executor, at most `concurrency` rows are submitted at a time."""
        counter = InFlight()
        with counting_caller(counter, sync=True) as caller, ThreadPoolExecutor(16) as pool:
            frame = map_calls(caller, "hold", [{"ms": 5}] * 20, concurrency=3, executor=pool,
                              progress=False)
        assert frame["success"].all()
        assert counter.most == 3

    def test_a_thousand_rows_run_quickly(self, caller: ToolCaller) -> None:
        """1,000 rows of math.add take well under two seconds."""
        started = time.perf_counter()
        frame = map_calls(caller, "math.add", [{"a": i, "b": 1} for i in range(1000)],
                          concurrency=32, progress=False)
        assert time.perf_counter() - started < 2.0
        assert frame["result"].map(lambda r: r["sum"]).tolist() == list(range(1, 1001))
        assert len(caller.history) == 1000


@pytest.fixture
def default_sigint() -> Iterator[None]:
    """Python's own SIGINT handler for the test: a background job starts with SIGINT ignored,
    which would make a Ctrl-C a no-op."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


class TestAsync:
    async def test_amap_runs_on_the_running_loop(self) -> None:
        """`amap_calls` awaits the rows on the current loop: async tools run here."""
        loops: list[asyncio.AbstractEventLoop] = []

        async def where(n: int) -> int:
            loops.append(asyncio.get_running_loop())
            await asyncio.sleep(0)
            return n

        with ToolCaller(tools=[tool(where)]) as caller:
            frame = await amap_calls(caller, "where", [{"n": i} for i in range(20)],
                                     concurrency=5, progress=False)
        assert frame["result"].tolist() == list(range(20))
        assert set(loops) == {asyncio.get_running_loop()}

    async def test_amap_mixed_outcomes(self, caller: ToolCaller) -> None:
        """Failures are rows, not exceptions, in `amap` too."""
        frame = await amap_calls(caller, "math.divide", DIVISIONS, progress=False)
        assert frame["code"].tolist()[1::2] == ["EXECUTION_ERROR"] * 2

    async def test_map_works_inside_a_running_loop(self, caller: ToolCaller) -> None:
        """Sync `map` inside a running loop (a Jupyter cell) runs on the caller's loop thread."""
        frame = map_calls(caller, "math.add", [{"a": 1, "b": 2}] * 5, progress=False)
        assert frame["success"].all()

    async def test_map_inside_the_loop_thread_is_refused(self, caller: ToolCaller) -> None:
        """On the caller's own loop thread `map` would deadlock: it says to use `amap`."""
        async def inside() -> None:
            map_calls(caller, "math.add", [{"a": 1, "b": 2}])

        with pytest.raises(UsageError, match="amap"):
            await caller.portal.arun(inside())

    async def test_cancelling_amap_cancels_the_rows(self) -> None:
        """Cancelling `amap` cancels the rows in flight; no task is left behind."""
        counter = InFlight()
        with counting_caller(counter) as caller:
            task = asyncio.create_task(amap_calls(
                caller, "hold", [{"ms": 10_000}] * 50, concurrency=5, progress=False,
                timeout=20_000, deadline=20_000))
            await asyncio.sleep(0.1)
            assert counter.now == 5
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert counter.now == 0
            assert asyncio.all_tasks() == {asyncio.current_task()}

    def test_ctrl_c_in_map_cancels_the_rows(self, default_sigint: None) -> None:
        """Ctrl-C during `map` cancels the rows still running, then KeyboardInterrupt goes on."""
        counter = InFlight()
        with counting_caller(counter) as caller:
            timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
            timer.start()
            started = time.perf_counter()
            with pytest.raises(KeyboardInterrupt):
                map_calls(caller, "hold", [{"ms": 10_000}] * 50, concurrency=5, progress=False,
                          timeout=20_000, deadline=20_000)
            assert time.perf_counter() - started < 2
            assert counter.now == 0

            async def others() -> int:
                return len(asyncio.all_tasks()) - 1

            assert caller.portal.run(others()) == 0


class TestExecutors:
    def test_thread_pool_uses_the_caller_itself(self, caller: ToolCaller) -> None:
        """A ThreadPoolExecutor runs `caller.call`: same history, same outcomes."""
        with ThreadPoolExecutor(4) as pool:
            frame = map_calls(caller, "math.divide", DIVISIONS * 5, executor=pool,
                              progress=False)
        assert frame["success"].tolist() == [True, False, True, False] * 5
        assert {r.call_id for r in caller.history} == set(frame["call_id"])

    def test_process_pool_with_a_registry_tool(self, caller: ToolCaller,
                                               processes: ProcessPoolExecutor) -> None:
        """Demo tools travel to worker processes; envelopes come back as the same frame."""
        rows = [{"a": i, "b": i % 3} for i in range(30)]
        frame = map_calls(caller, "math.divide", rows, executor=processes, progress=False)
        assert frame["success"].tolist() == [i % 3 != 0 for i in range(30)]
        assert set(frame["code"].dropna()) == {"EXECUTION_ERROR"}
        assert frame["result"].iloc[4] == {"quotient": 4.0}
        pids = {e.metadata.call_id.split("-")[0] for e in frame.attrs["envelopes"]}
        assert caller._id_prefix not in pids  # ran elsewhere
        assert caller.history.get(frame["call_id"].iloc[0]).code == "EXECUTION_ERROR"

    def test_process_pool_with_a_registry_file(self, tmp_path: Path,
                                               processes: ProcessPoolExecutor) -> None:
        """`source=` names a registry file that each worker loads once."""
        registry = tmp_path / "tools.json"
        registry.write_text(json.dumps({"tools": [{
            "name": "add", "description": "Add.", "python": "toolcaller.demo.tools:add",
            "paramsSchema": {"type": "object", "required": ["a", "b"]}}]}))
        with ToolCaller.from_file(registry) as caller:
            frame = map_calls(caller, "add", [{"a": i, "b": 1} for i in range(10)],
                              executor=processes, source=registry, progress=False)
        assert [r["sum"] for r in frame["result"]] == list(range(1, 11))

    def test_process_pool_with_function_tools(self, processes: ProcessPoolExecutor) -> None:
        """Function tools travel as `module:qualname`; `@tool`'s type coercion still applies."""
        with ToolCaller(tools=[days_between, tool(triple)]) as caller:
            dates = map_calls(caller, "days_between",
                              [{"start": "2026-01-01", "end": "2026-03-01"}],
                              executor=processes, progress=False)
            tripled = map_calls(caller, "triple", [{"x": 2}, {"x": "no"}], executor=processes,
                                progress=False)
        assert dates["result"].tolist() == [59]
        assert tripled["result"].iloc[0] == {"x": 6}
        assert tripled["code"].iloc[1] == "INVALID_PARAMS"

    def test_a_lambda_tool_cannot_travel(self) -> None:
        """A tool whose function workers cannot import is refused before any row runs."""
        with ToolCaller(tools=[tool(lambda x: x, name="anon")]) as caller, \
                pytest.raises(UsageError, match="cannot import"):
            source_for(caller, "anon")

    def test_sources_name_what_workers_load(self, caller: ToolCaller, tmp_path: Path) -> None:
        """A path, 'demo' or the tool itself: each source has a stable key."""
        assert source_for(caller, "x", "demo") == CallerSource(demo=True, key="demo")
        by_file = source_for(caller, "x", tmp_path / "tools.json")
        assert by_file.registry == str((tmp_path / "tools.json").resolve())
        first, second = source_for(caller, "math.add"), source_for(caller, "math.add")
        assert first.key == second.key
        assert first.tools[0].params_model is None  # rebuilt in the workers
        assert source_for(caller, "math.add").key != source_for(caller, "math.divide").key

    def test_a_broken_executor_fails_each_row(self, caller: ToolCaller) -> None:
        """An executor that cannot run rows gives EXECUTION_ERROR rows, not an exception."""
        pool = ThreadPoolExecutor(1)
        pool.shutdown()
        frame = map_calls(caller, "math.add", [{"a": 1, "b": 2}] * 3, executor=pool,
                          progress=False)
        assert frame["code"].tolist() == ["EXECUTION_ERROR"] * 3
        assert "executor could not run" in frame["message"].iloc[0]

    def test_not_an_executor_is_a_usage_error(self, caller: ToolCaller) -> None:
        """`executor=` must be a concurrent.futures.Executor."""
        with pytest.raises(UsageError, match="Executor"):
            map_calls(caller, "math.add", [{"a": 1, "b": 2}], executor=object())  # type: ignore[arg-type]


class TestProgress:
    def test_text_bar_on_request(self, caller: ToolCaller, capsys: pytest.CaptureFixture[str],
                                 ) -> None:
        """`progress=True` draws a text bar (tqdm) on stderr, even when it is not a terminal."""
        map_calls(caller, "math.divide", DIVISIONS, progress=True)
        err = capsys.readouterr().err
        assert "math.divide: 100%" in err
        assert "4/4" in err
        assert "failed=2" in err
        assert err.endswith("\n")

    @pytest.mark.parametrize("progress", [None, False], ids=["auto", "off"])
    def test_no_bar_when_not_a_terminal_or_off(self, caller: ToolCaller, progress: Any,
                                               capsys: pytest.CaptureFixture[str]) -> None:
        """Off, or left to decide with stderr not a terminal, nothing is written."""
        map_calls(caller, "math.add", [{"a": 1, "b": 2}], progress=progress)
        assert capsys.readouterr().err == ""

    def test_widget_bar_in_a_kernel(self, caller: ToolCaller, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
        """Under an IPython kernel the bar is tqdm's notebook widget, and no text is drawn."""
        pytest.importorskip("ipywidgets")
        import types

        import tqdm.auto
        import tqdm.notebook

        made: list[Any] = []

        class Recorded(tqdm.notebook.tqdm):  # type: ignore[misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                kwargs["display"] = False
                super().__init__(*args, **kwargs)
                made.append(self)

        ipython = types.ModuleType("IPython")
        ipython.get_ipython = lambda: types.SimpleNamespace(kernel=object())  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "IPython", ipython)
        monkeypatch.setattr(tqdm.auto, "tqdm", Recorded)
        map_calls(caller, "math.divide", DIVISIONS)
        assert len(made) == 1
        assert (made[0].n, made[0].total) == (4, 4)
        assert made[0].postfix == "failed=2"
        assert capsys.readouterr().err == ""
