"""`toolcaller.core.history`: bounded, thread-safe, DataFrames and JSON Lines."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pytest

from tests.helpers import TIMESTAMP, attempt_of, make_tool
from toolcaller import History, ToolCaller
from toolcaller.core.history import CallRecord
from toolcaller.envelope import Options


def record(i: int, success: bool = True, attempts: int = 1) -> CallRecord:
    trail = [attempt_of(n + 1, float(n), 1.5, 0.0 if n == 0 else 10.0,
                           None if success and n == attempts - 1 else "EXECUTION_ERROR",
                           None if success and n == attempts - 1 else "boom",
                           None if success and n == attempts - 1 else True)
             for n in range(attempts)]
    return CallRecord(f"id-{i}", "t", 1_700_000_000.0 + i, 2.5, success,
                      None if success else "RETRY_EXHAUSTED", None if success else "failed",
                      {"i": i}, Options(retries=1), trail)


CALL_COLUMNS = ["call_id", "tool_name", "timestamp", "duration_ms", "success", "code",
                "message", "attempts", "params", "status", "tool_call_id"]
ATTEMPT_COLUMNS = ["call_id", "tool_name", "attempt", "started_ms", "wait_ms", "duration_ms",
                   "code", "message", "retryable"]


class TestBounds:
    def test_oldest_dropped_past_the_bound(self) -> None:
        """Past max_calls the oldest records go; `total` still counts every call."""
        history = History(max_calls=3)
        for i in range(5):
            history.add(record(i))
        assert [r.call_id for r in history] == ["id-2", "id-3", "id-4"]
        assert len(history) == 3
        assert history.total == 5

    @pytest.mark.parametrize("bad", [0, -1], ids=["zero", "negative"])
    def test_bound_must_be_positive(self, bad: int) -> None:
        """A bound below 1 is a ValueError."""
        with pytest.raises(ValueError, match="max_calls"):
            History(bad)

    def test_caller_bound(self) -> None:
        """`ToolCaller(max_history=N)` keeps the last N calls."""
        caller = ToolCaller(tools=[make_tool(lambda: 1, "t")], max_history=2)
        for _ in range(4):
            caller.handle({"toolName": "t"})
        assert len(caller.history) == 2
        assert caller.history.total == 4

    def test_clear(self) -> None:
        """`clear()` forgets records and resets the total."""
        history = History()
        history.add(record(1))
        history.clear()
        assert len(history) == 0
        assert history.total == 0
        assert history.last() is None


class TestQueries:
    def test_get_last_failures(self) -> None:
        """get by id, last, and failures answer from the records."""
        history = History()
        history.add(record(1))
        history.add(record(2, success=False, attempts=2))
        history.add(record(3))
        assert history.get("id-2").success is False  # type: ignore[union-attr]
        assert history.get("nope") is None
        assert history.last().call_id == "id-3"  # type: ignore[union-attr]
        assert [r.call_id for r in history.failures()] == ["id-2"]

    def test_listeners(self) -> None:
        """Listeners hear each new record; a broken listener breaks nothing."""
        history = History()
        heard: list[str] = []
        history.subscribe(lambda r: (_ for _ in ()).throw(RuntimeError("broken")))
        stop = history.subscribe(lambda r: heard.append(r.call_id))
        history.add(record(1))
        stop()
        history.add(record(2))
        assert heard == ["id-1"]
        assert len(history) == 2


class TestThreadSafety:
    def test_concurrent_adds_and_reads(self) -> None:
        """Writers in 10 threads and a reader lose nothing and never crash."""
        history = History(max_calls=100_000)
        errors: list[BaseException] = []

        def write(base: int) -> None:
            for i in range(500):
                history.add(record(base * 1000 + i))

        def read() -> None:
            try:
                for _ in range(50):
                    history.frame()
                    list(history)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(b,)) for b in range(10)]
        threads.append(threading.Thread(target=read))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert len(history) == history.total == 5000
        assert len({r.call_id for r in history}) == 5000


class TestFrames:
    @pytest.fixture
    def history(self) -> History:
        made = History()
        made.add(record(1))
        made.add(record(2, success=False, attempts=3))
        return made

    def test_calls_frame_columns_and_dtypes(self, history: History) -> None:
        """One row per call, with typed columns (UTC timestamps, floats, bools, ints)."""
        import pandas as pd

        frame = history.frame()
        assert list(frame.columns) == CALL_COLUMNS
        assert len(frame) == 2
        assert isinstance(frame["timestamp"].dtype, pd.DatetimeTZDtype)
        assert str(frame["timestamp"].dt.tz) == "UTC"
        assert frame["duration_ms"].dtype == "float64"
        assert frame["success"].dtype == bool
        assert pd.api.types.is_integer_dtype(frame["attempts"])
        assert pd.api.types.is_string_dtype(frame["call_id"])
        assert frame["attempts"].tolist() == [1, 3]
        assert frame["params"].tolist() == [{"i": 1}, {"i": 2}]
        assert frame["timestamp"][0] == pd.Timestamp(1_700_000_001.0, unit="s", tz="UTC")

    def test_attempts_frame_columns_and_dtypes(self, history: History) -> None:
        """One row per attempt, with its call's id and tool."""
        import pandas as pd

        frame = history.attempts_frame()
        assert list(frame.columns) == ATTEMPT_COLUMNS
        assert frame["call_id"].tolist() == ["id-1", "id-2", "id-2", "id-2"]
        assert frame["attempt"].tolist() == [1, 1, 2, 3]
        for column in ("started_ms", "wait_ms", "duration_ms"):
            assert frame[column].dtype == "float64"
        assert pd.api.types.is_integer_dtype(frame["attempt"])

    def test_empty_frames_have_the_columns(self) -> None:
        """An empty history gives empty frames with the same columns."""
        assert list(History().frame().columns) == CALL_COLUMNS
        assert list(History().attempts_frame().columns) == ATTEMPT_COLUMNS

    def test_real_calls(self) -> None:
        """A caller's history frames show real calls: success, code, attempts."""
        import pandas as pd

        caller = ToolCaller(tools=[make_tool(lambda: 1, "ok"),
                                   make_tool(lambda: 1 / 0, "bad")])
        caller.handle({"toolName": "ok"})
        caller.handle({"toolName": "bad", "options": {"retries": 1, "retryDelay": 0}})
        frame = caller.history.frame()
        assert frame["success"].tolist() == [True, False]
        assert frame["code"].tolist()[1] == "RETRY_EXHAUSTED"
        codes = caller.history.attempts_frame()["code"].tolist()
        assert len(codes) == 3
        assert pd.isna(codes[0])
        assert codes[1:] == ["EXECUTION_ERROR", "EXECUTION_ERROR"]


class TestExport:
    def test_jsonl_to_stream(self) -> None:
        """to_jsonl writes one camelCase JSON object per call and returns the count."""
        history = History()
        history.add(record(1))
        history.add(record(2, success=False, attempts=2))
        buffer = io.StringIO()
        assert history.to_jsonl(buffer) == 2
        lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
        assert [line["callId"] for line in lines] == ["id-1", "id-2"]
        assert set(lines[0]) >= {"callId", "toolName", "timestamp", "duration", "success",
                                 "code", "message", "attempts", "params", "options", "trail"}
        assert TIMESTAMP.match(lines[0]["timestamp"])
        assert lines[1]["attempts"] == 2
        assert len(lines[1]["trail"]) == 2

    def test_jsonl_is_strict_json(self) -> None:
        """Even params holding NaN or Infinity are written as strict JSON (no NaN tokens)."""
        caller = ToolCaller(tools=[make_tool(lambda **kw: 1, "t")])
        caller.handle({"toolName": "t", "params": {"x": float("nan"), "y": float("inf")}})
        buffer = io.StringIO()
        caller.history.to_jsonl(buffer)

        def refuse(constant: str) -> None:
            raise ValueError(f"{constant} is not JSON")

        for line in buffer.getvalue().splitlines():
            json.loads(line, parse_constant=refuse)

    def test_jsonl_to_path(self, tmp_path: Path) -> None:
        """to_jsonl also writes to a file path."""
        history = History()
        history.add(record(1))
        path = tmp_path / "calls.jsonl"
        assert history.to_jsonl(path) == 1
        assert json.loads(path.read_text(encoding="utf-8"))["callId"] == "id-1"

    def test_parquet(self, tmp_path: Path) -> None:
        """to_parquet writes the calls frame (when pyarrow is installed)."""
        pytest.importorskip("pyarrow")
        import pandas as pd

        history = History()
        history.add(record(1))
        path = tmp_path / "calls.parquet"
        history.to_parquet(path)
        assert pd.read_parquet(path)["call_id"].tolist() == ["id-1"]
