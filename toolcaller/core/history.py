"""A bounded, thread-safe record of calls and their attempts, exportable as DataFrames or JSONL."""

from __future__ import annotations

import contextlib
import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from toolcaller.envelope import Options, format_timestamp, now_utc

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AttemptRecord", "CallRecord", "History", "call_row", "row_attempt_count",
           "row_attempts"]

DEFAULT_MAX_CALLS = 10_000


class AttemptRecord(NamedTuple):
    """One attempt of a call: when it started, how long it took, how it ended.

    The history keeps it as a plain tuple (see `History`) and makes this when read.
    """

    attempt: int
    started: float
    """Milliseconds after the call's arrival."""
    duration: float
    """Milliseconds."""
    wait: float
    """Milliseconds waited before this attempt."""
    code: str | None = None
    """Error code, `None` on success."""
    message: str | None = None
    """Error message (redacted)."""
    retryable: bool | None = None


@dataclass(slots=True)
class CallRecord:
    """One call: what was asked, how it ended, and its attempts (secrets already masked)."""

    call_id: str
    tool_name: str | None
    arrived: float
    """`time.time()` when the request arrived."""
    duration: float
    """Milliseconds."""
    success: bool
    code: str | None
    message: str | None
    params: Any
    """The params, with secrets masked."""
    options: Options | None
    """The call's resolved options (`options_dict()` gives the ones that differ from defaults)."""
    attempts: list[AttemptRecord] = field(default_factory=list)

    def options_dict(self) -> dict[str, Any]:
        """Return the options that differ from the contract's defaults, with request keys."""
        if self.options is None:
            return {}
        return self.options.model_dump(by_alias=True, exclude_defaults=True)

    @property
    def timestamp(self) -> str:
        """The arrival time, ISO 8601 UTC with milliseconds."""
        return format_timestamp(now_utc(self.arrived))

    def to_dict(self) -> dict[str, Any]:
        """Return the record as JSON-compatible data (camelCase keys, like the envelope)."""
        return {
            "callId": self.call_id,
            "toolName": self.tool_name,
            "timestamp": self.timestamp,
            "duration": self.duration,
            "success": self.success,
            "code": self.code,
            "message": self.message,
            "attempts": len(self.attempts),
            "params": self.params,
            "options": self.options_dict(),
            "trail": [a._asdict() for a in self.attempts],
        }


class History:
    """The last `max_calls` calls, oldest first; safe to write from many threads at once.

    Each call is kept as a flat tuple of plain values, which the garbage collector stops
    tracking, with its params beside it (a dict of plain values is not tracked either): 10,000
    calls would otherwise leave tens of thousands of objects for every full collection to
    walk, stalling the event loop the calls run on. `CallRecord`s are made when read.
    """

    def __init__(self, max_calls: int = DEFAULT_MAX_CALLS) -> None:
        if max_calls < 1:
            raise ValueError(f"max_calls must be at least 1, got {max_calls!r}")
        self.max_calls = max_calls
        self._rows: deque[tuple[Any, ...]] = deque(maxlen=max_calls)
        self._params: deque[Any] = deque(maxlen=max_calls)
        self._lock = threading.Lock()
        self._listeners: list[Callable[[CallRecord], None]] = []
        self.total = 0
        """Calls recorded since creation (or `clear()`), including those the bound dropped."""

    def add(self, record: CallRecord) -> None:
        """Record a finished call (the oldest is dropped past `max_calls`)."""
        self.add_row(_row(record), record.params)

    def add_row(self, row: tuple[Any, ...], params: Any) -> None:
        """Record a call given as a row (see `call_row`) and its params: what the engine adds."""
        with self._lock:
            self._rows.append(row)
            self._params.append(params)
            self.total += 1
        if self._listeners:
            record = _record(row, params)
            for listener in list(self._listeners):
                with contextlib.suppress(Exception):  # a broken listener must not break a call
                    listener(record)

    def subscribe(self, listener: Callable[[CallRecord], None]) -> Callable[[], None]:
        """Call `listener(record)` after each new call; return a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def records(self) -> list[CallRecord]:
        """Return a snapshot of the records, oldest first."""
        return [_record(row, params) for row, params in self._snapshot()]

    def newest(self, count: int, *, failures_only: bool = False) -> list[CallRecord]:
        """Return up to `count` records, newest first (only failed calls if asked)."""
        picked: list[CallRecord] = []
        for row, params in reversed(self._snapshot()):
            if len(picked) >= count:
                break
            if not failures_only or not row[_SUCCESS]:
                picked.append(_record(row, params))
        return picked

    def failure_count(self) -> int:
        """Return how many of the kept calls failed."""
        with self._lock:
            rows = list(self._rows)
        return sum(1 for row in rows if not row[_SUCCESS])

    def _snapshot(self) -> list[tuple[tuple[Any, ...], Any]]:
        with self._lock:
            return list(zip(self._rows, self._params, strict=True))

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[CallRecord]:
        return iter(self.records())

    def get(self, call_id: str) -> CallRecord | None:
        """Return the record of a call by its id."""
        found = next((rp for rp in reversed(self._snapshot()) if rp[0][0] == call_id), None)
        return _record(*found) if found is not None else None

    def last(self) -> CallRecord | None:
        """Return the newest record."""
        with self._lock:
            last = (self._rows[-1], self._params[-1]) if self._rows else None
        return _record(*last) if last is not None else None

    def failures(self) -> list[CallRecord]:
        """Return the records of failed calls."""
        return [_record(r, p) for r, p in self._snapshot() if not r[_SUCCESS]]

    def clear(self) -> None:
        """Forget every record."""
        with self._lock:
            self._rows.clear()
            self._params.clear()
            self.total = 0

    def frame(self, records: list[CallRecord] | None = None) -> pd.DataFrame:
        """Return one row per call (all, or the `records` given) as a pandas DataFrame."""
        import pandas as pd

        if records is None:
            with self._lock:
                rows, params = list(self._rows), list(self._params)
        else:
            rows, params = [_row(r) for r in records], [r.params for r in records]
        # One list per column, read straight from the rows.
        return pd.DataFrame({
            "call_id": [r[0] for r in rows],
            "tool_name": [r[1] for r in rows],
            "timestamp": pd.to_datetime([r[2] for r in rows], unit="s", utc=True),
            "duration_ms": pd.Series([r[3] for r in rows], dtype="float64"),
            "success": pd.Series([r[4] for r in rows], dtype="bool"),
            "code": pd.Series([r[5] for r in rows], dtype="object"),
            "message": pd.Series([r[6] for r in rows], dtype="object"),
            "attempts": pd.Series([row_attempt_count(r) for r in rows], dtype="int64"),
            "params": pd.Series(params, dtype="object"),
        })

    def attempts_frame(self, records: list[CallRecord] | None = None) -> pd.DataFrame:
        """Return one row per attempt (with its call's id and tool) as a pandas DataFrame."""
        import pandas as pd

        if records is None:
            with self._lock:
                rows = list(self._rows)
        else:
            rows = [_row(r) for r in records]
        pairs = [(r, a) for r in rows for a in row_attempts(r)]
        return pd.DataFrame({
            "call_id": [r[0] for r, _ in pairs],
            "tool_name": [r[1] for r, _ in pairs],
            "attempt": pd.Series([a[0] for _, a in pairs], dtype="int64"),
            "started_ms": pd.Series([a[1] for _, a in pairs], dtype="float64"),
            "wait_ms": pd.Series([a[3] for _, a in pairs], dtype="float64"),
            "duration_ms": pd.Series([a[2] for _, a in pairs], dtype="float64"),
            "code": pd.Series([a[4] for _, a in pairs], dtype="object"),
            "message": pd.Series([a[5] for _, a in pairs], dtype="object"),
            "retryable": pd.Series([a[6] for _, a in pairs], dtype="object"),
        })

    def to_jsonl(self, target: str | Path | TextIO) -> int:
        """Write one JSON object per call (JSON Lines); return the number of lines written."""
        records = self.records()
        if isinstance(target, str | Path):
            with open(target, "w", encoding="utf-8") as handle:
                return self._write(records, handle)
        return self._write(records, target)

    @staticmethod
    def _write(records: list[CallRecord], handle: TextIO) -> int:
        for record in records:
            handle.write(json.dumps(record.to_dict(), ensure_ascii=False, default=str) + "\n")
        return len(records)

    def to_parquet(self, path: str | Path) -> None:
        """Write the calls frame to Parquet (needs pyarrow or fastparquet)."""
        frame = self.frame()
        frame["params"] = frame["params"].map(lambda p: json.dumps(p, default=str))
        frame.to_parquet(path)


# -- rows: how the history keeps a call -------------------------------------------------------
#
# A row is one flat tuple: the call's fields, its options' field values, then seven values per
# attempt. Flat, because the collector untracks a tuple only once every tuple inside it is
# untracked, and it may meet the outer one first: nested tuples could reach the oldest
# generation still tracked.

_OPTION_FIELDS = tuple(Options.model_fields)
_SUCCESS, _OPTIONS = 4, 7
_ATTEMPTS = _OPTIONS + len(_OPTION_FIELDS)
_ATTEMPT_WIDTH = len(AttemptRecord._fields)
_NO_OPTIONS = (None,) * len(_OPTION_FIELDS)


def call_row(call_id: str, tool_name: str | None, arrived: float, duration: float,
             success: bool, code: str | None, message: str | None, options: Options | None,
             attempts: tuple[Any, ...]) -> tuple[Any, ...]:
    """Return a call as the history keeps it; `attempts` is `AttemptRecord` fields, flat."""
    values = tuple(options.__dict__.values()) if options is not None else _NO_OPTIONS
    return (call_id, tool_name, arrived, duration, success, code, message, *values, *attempts)


def _row(record: CallRecord) -> tuple[Any, ...]:
    return call_row(record.call_id, record.tool_name, record.arrived, record.duration,
                    record.success, record.code, record.message, record.options,
                    tuple(v for a in record.attempts for v in a))


def row_attempts(row: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """Return a row's attempts, each as the `AttemptRecord` fields."""
    return [row[i:i + _ATTEMPT_WIDTH] for i in range(_ATTEMPTS, len(row), _ATTEMPT_WIDTH)]


def row_attempt_count(row: tuple[Any, ...]) -> int:
    """Return how many attempts a row holds."""
    return (len(row) - _ATTEMPTS) // _ATTEMPT_WIDTH


def _record(row: tuple[Any, ...], params: Any) -> CallRecord:
    values = row[_OPTIONS:_ATTEMPTS]
    options = (Options.model_construct(**dict(zip(_OPTION_FIELDS, values, strict=True)))
               if values[0] is not None else None)
    return CallRecord(row[0], row[1], row[2], row[3], row[4], row[5], row[6], params, options,
                      [AttemptRecord._make(a) for a in row_attempts(row)])
