"""`History` keeps each call as its record: what goes in comes back equal, in frames too."""

from __future__ import annotations

import io
import json
import threading
from typing import TYPE_CHECKING

from tests.helpers import attempt_of
from toolcaller import History
from toolcaller.core.history import CallRecord
from toolcaller.envelope import Options

if TYPE_CHECKING:
    import pandas as pd

CALL_COLUMNS = ["call_id", "tool_name", "timestamp", "duration_ms", "success", "code",
                "message", "attempts", "params", "status", "tool_call_id"]
ATTEMPT_COLUMNS = ["call_id", "tool_name", "attempt", "started_ms", "wait_ms", "duration_ms",
                   "code", "message", "retryable"]
OPTIONS = Options(timeout=250.5, retries=2, retryDelay=10, format="raw", deadline=900,
                  backoff=2.0, jitter=3.5, isolation="thread")


def failed(call_id: str, attempts: int = 3, options: Options | None = OPTIONS) -> CallRecord:
    """A failed call whose attempts all failed, each with its own message and retryable flag."""
    trail = [attempt_of(n + 1, 10.0 * n, 1.5 + n, 0.0 if n == 0 else 5.0 * n,
                           "TIMEOUT" if n % 2 == 0 else "EXECUTION_ERROR", f"boom {n + 1}",
                           n < attempts - 1)
             for n in range(attempts)]
    return CallRecord(call_id, "flaky", 1_700_000_000.125, 42.25, False, "RETRY_EXHAUSTED",
                      f"{call_id} failed {attempts} times",
                      {"user": {"name": "ada", "tags": ["a", "b"]}, "n": [1, 2.5, None]},
                      options, trail)


def succeeded(call_id: str, tool_name: str | None = "ok",
              options: Options | None = None) -> CallRecord:
    """A call that succeeded at its first attempt."""
    return CallRecord(call_id, tool_name, 1_700_000_100.5, 1.75, True, None, None,
                      {"id": call_id}, options, [attempt_of(1, 0.0, 1.5, 0.0)])


def not_started(call_id: str) -> CallRecord:
    """A call refused before any attempt (no tool name, no options, no params)."""
    return CallRecord(call_id, None, 1_700_000_200.0, 0.5, False, "TOOL_NOT_FOUND",
                      "unknown tool", None, None, [])


def sample() -> list[CallRecord]:
    """Calls of every shape: 3, 1, 0 and 2 attempts, options non-default, default and None."""
    return [failed("f1"), succeeded("s1", options=Options.model_validate({})), not_started("n1"),
            failed("f2", attempts=2, options=None), succeeded("s2", tool_name=None)]


def filled(records: list[CallRecord], max_calls: int = 100) -> History:
    """A history holding the given records, added in order."""
    history = History(max_calls=max_calls)
    for item in records:
        history.add(item)
    return history


def calls_frame(records: list[CallRecord]) -> pd.DataFrame:
    """The calls frame built by hand from records, one list per column."""
    import pandas as pd

    return pd.DataFrame({
        "call_id": [r.call_id for r in records],
        "tool_name": [r.tool_name for r in records],
        "timestamp": pd.to_datetime([r.arrived for r in records], unit="s",
                                    utc=True).as_unit("ns"),
        "duration_ms": pd.Series([r.duration for r in records], dtype="float64"),
        "success": pd.Series([r.success for r in records], dtype="bool"),
        "code": pd.Series([r.code for r in records], dtype="object"),
        "message": pd.Series([r.message for r in records], dtype="object"),
        "attempts": pd.Series([len(r.attempts) for r in records], dtype="int64"),
        "params": pd.Series([r.params for r in records], dtype="object"),
        "status": pd.Series([r.status for r in records], dtype="object"),
        "tool_call_id": pd.Series([r.tool_call_id for r in records], dtype="object"),
    })


def attempts_frame(records: list[CallRecord]) -> pd.DataFrame:
    """The attempts frame built by hand from records, one row per attempt."""
    import pandas as pd

    pairs = [(r, a) for r in records for a in r.attempts]
    return pd.DataFrame({
        "call_id": [r.call_id for r, _ in pairs],
        "tool_name": [r.tool_name for r, _ in pairs],
        "attempt": pd.Series([a.attempt for _, a in pairs], dtype="int64"),
        "started_ms": pd.Series([a.started for _, a in pairs], dtype="float64"),
        "wait_ms": pd.Series([a.wait for _, a in pairs], dtype="float64"),
        "duration_ms": pd.Series([a.duration for _, a in pairs], dtype="float64"),
        "code": pd.Series([a.code and a.code.value for _, a in pairs], dtype="object"),
        "message": pd.Series([a.message for _, a in pairs], dtype="object"),
        "retryable": pd.Series([a.retryable for _, a in pairs], dtype="object"),
    })


class TestRoundTrip:
    def test_records_and_iteration(self) -> None:
        """records() and iteration give back records equal to those added, oldest first."""
        history = filled(sample())
        assert history.records() == sample()
        assert list(history) == sample()

    def test_get_and_last(self) -> None:
        """get() finds each record by id, equal to what was added; last() is the newest."""
        history = filled(sample())
        for item in sample():
            assert history.get(item.call_id) == item
        assert history.last() == sample()[-1]

    def test_options_come_back_equal(self) -> None:
        """Non-default, default and absent options come back equal, with the same options_dict."""
        for item, back in zip(sample(), filled(sample()).records(), strict=True):
            assert back.options == item.options
            assert back.options_dict() == item.options_dict()
        assert filled([failed("f")]).records()[0].options_dict()["retryDelay"] == 10.0

    def test_failures_keep_messages_and_retryable(self) -> None:
        """failures() gives the failed calls with every attempt's code, message and flag."""
        back = filled(sample()).failures()
        assert back == [r for r in sample() if not r.success]
        assert back[0].attempts[0] == attempt_of(1, 0.0, 1.5, 0.0, "TIMEOUT", "boom 1", True)
        assert back[0].attempts[-1].retryable is False
        assert back[0].attempts[-1].message == "boom 3"

    def test_listeners_hear_an_equal_record(self) -> None:
        """A subscriber gets a record equal to the one added."""
        history = History()
        heard: list[CallRecord] = []
        history.subscribe(heard.append)
        for item in sample():
            history.add(item)
        assert heard == sample()

    def test_jsonl(self) -> None:
        """to_jsonl writes, per call, the JSON of the record that was added."""
        buffer = io.StringIO()
        assert filled(sample()).to_jsonl(buffer) == len(sample())
        lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
        assert lines == [json.loads(json.dumps(r.to_dict(), default=str)) for r in sample()]
        assert lines[0]["trail"][1]["message"] == "boom 2"
        assert lines[0]["params"]["user"]["tags"] == ["a", "b"]


class TestFrames:
    def test_calls_frame_is_the_hand_built_one(self) -> None:
        """frame() equals the frame built by hand, with mixed attempt counts (3, 1, 0, 2, 1)."""
        import pandas as pd

        frame = filled(sample()).frame()
        pd.testing.assert_frame_equal(frame, calls_frame(sample()))
        assert frame["attempts"].tolist() == [3, 1, 0, 2, 1]

    def test_attempts_frame_is_the_hand_built_one(self) -> None:
        """attempts_frame() equals the one built by hand: one row per attempt, in order."""
        import pandas as pd

        frame = filled(sample()).attempts_frame()
        pd.testing.assert_frame_equal(frame, attempts_frame(sample()))
        assert frame["call_id"].tolist() == ["f1"] * 3 + ["s1"] + ["f2"] * 2 + ["s2"]

    def test_frames_of_given_records(self) -> None:
        """Frames of the records passed (here the failures) equal the hand-built ones."""
        import pandas as pd

        history = filled(sample())
        chosen = history.failures()
        pd.testing.assert_frame_equal(history.frame(chosen), calls_frame(chosen))
        pd.testing.assert_frame_equal(history.attempts_frame(chosen), attempts_frame(chosen))

    def test_empty_history(self) -> None:
        """An empty history gives the hand-built empty frames, with the usual columns."""
        import pandas as pd

        frame, attempts = History().frame(), History().attempts_frame()
        assert list(frame.columns) == CALL_COLUMNS
        assert list(attempts.columns) == ATTEMPT_COLUMNS
        pd.testing.assert_frame_equal(frame, calls_frame([]))
        pd.testing.assert_frame_equal(attempts, attempts_frame([]))

    def test_calls_without_attempts_only(self) -> None:
        """A history of calls that never started an attempt has an empty attempts frame."""
        import pandas as pd

        records = [not_started("a"), not_started("b")]
        history = filled(records)
        pd.testing.assert_frame_equal(history.frame(), calls_frame(records))
        assert history.attempts_frame().empty
        assert list(history.attempts_frame().columns) == ATTEMPT_COLUMNS


class TestNewestAndCounts:
    def test_newest_order(self) -> None:
        """newest(n) gives up to n records, newest first."""
        history = filled(sample())
        assert [r.call_id for r in history.newest(3)] == ["s2", "f2", "n1"]
        assert history.newest(99) == sample()[::-1]
        assert history.newest(0) == []

    def test_newest_failures_only(self) -> None:
        """newest(n, failures_only=True) skips successes, still newest first."""
        history = filled(sample())
        assert [r.call_id for r in history.newest(2, failures_only=True)] == ["f2", "n1"]
        assert history.newest(9, failures_only=True) == history.failures()[::-1]

    def test_failure_count(self) -> None:
        """failure_count() counts the failed calls kept, and forgets them on clear()."""
        history = filled(sample())
        assert history.failure_count() == 3
        history.clear()
        assert history.failure_count() == 0
        assert History().failure_count() == 0

    def test_failure_count_follows_the_bound(self) -> None:
        """Calls dropped by the bound no longer count as failures."""
        history = filled([failed("f1"), failed("f2"), succeeded("s1"), succeeded("s2")],
                         max_calls=3)
        assert history.failure_count() == 1
        assert history.total == 4


class TestBound:
    def test_params_dropped_in_step_with_rows(self) -> None:
        """Past max_calls every kept record still has its own params."""
        history = filled([succeeded(f"id-{i}") for i in range(10)], max_calls=4)
        kept = history.records()
        assert [r.call_id for r in kept] == ["id-6", "id-7", "id-8", "id-9"]
        assert all(r.params == {"id": r.call_id} for r in kept)
        assert history.frame()["params"].tolist() == [{"id": r.call_id} for r in kept]

    def test_concurrent_adds(self) -> None:
        """Four threads adding at once lose no call, and params stay with their call."""
        history = History(max_calls=10_000)
        bounded = History(max_calls=300)

        def write(thread: int) -> None:
            for i in range(250):
                item = succeeded(f"t{thread}-{i}") if i % 2 else failed(f"t{thread}-{i}", 1)
                item.params = {"id": item.call_id}
                history.add(item)
                bounded.add(item)

        threads = [threading.Thread(target=write, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(history) == history.total == 1000
        assert history.failure_count() == 500
        assert len({r.call_id for r in history}) == 1000
        assert (len(bounded), bounded.total) == (300, 1000)
        for kept in (history, bounded):
            assert all(r.params == {"id": r.call_id} for r in kept)
