"""Batch calls: one tool over many params rows, a concurrency limit, a progress bar, a DataFrame.

    frame = caller.map("math.divide", [{"a": 1, "b": 2}, {"a": 1, "b": 0}], concurrency=8)
    frame[["a", "b", "success", "code", "result"]]      # row 1: EXECUTION_ERROR
    frame.attrs["envelopes"][1].error.message            # the full envelope of row 1

**Rows.** `params` is an iterable of dicts (the output's input columns are the union of their
keys, first seen first) or a pandas DataFrame (each row a params dict: missing cells - NaN,
None, NA, NaT - leave their key out; numpy scalars and arrays become Python values; the
frame's index is kept). A row that is not a dict gets its own INVALID_PARAMS envelope.

**Output.** A DataFrame in input order: the input columns, then `success`, `code`, `message`,
`result`, `duration_ms`, `attempts`, `call_id` (an input column named like one of these is
renamed `param:<name>`). `frame.attrs["envelopes"]` is an `Envelopes` sequence, one `Envelope` per
row by position (`frame.attrs["envelopes"][k]` belongs to `frame.iloc[k]`); pandas shares it
with derived frames instead of deep-copying it, so after filtering, look rows up by `call_id`
(`caller.history.get(call_id)`) or by position in the original frame.

**Where rows run.** Without an executor, rows run on an event loop, at most `concurrency` at
once: `amap` on the running loop (async tools on the loop, sync tools in the engine's worker
threads, at most 64 of them); `map` on the caller's private loop thread, so it also works in a
Jupyter cell or inside another running loop. A row never stops the batch: every row gets its
envelope. `concurrency` workers each await `acall` row after row (see
`toolcaller.batch.local`). Cancelling `amap` (or Ctrl-C in `map`) cancels the rows still
running, starts no other, and waits for them to unwind (at most 0.5 s: a tool ignoring the
cancel is left behind) before the `CancelledError` (`KeyboardInterrupt`) goes on. `map` is a
portal onto `amap`, run on the caller's private loop.

**Executors.** `executor=` takes any `concurrent.futures.Executor`; at most `concurrency` rows
are submitted at a time.

- A `ThreadPoolExecutor` (or subclass) runs `caller.call` itself: the caller is shared.
- Any other executor (processes, `dask.distributed.Client.get_executor()`) runs the picklable
  `toolcaller.batch.remote.run_row(source, tool_name, params, options) -> envelope dict`. A
  `ToolCaller` holds threads and locks and cannot be pickled, so a `CallerSource` travels
  instead and each worker process rebuilds a caller from it once (cached by its `key`). By
  default the source is the called tool alone: registry tools (python `"module:function"`,
  script, http) travel as they are; a tool made from a Python function travels as
  `"module:qualname"` and must be importable in the workers (no lambdas, no nested functions).
  MCP tools need `source="tools.json"`: the registry file each worker loads (or `"demo"`).
  Paths must be valid on the workers. Rows run there are added to this caller's history too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcaller.batch.local import CANCEL_GRACE_S, run_rows
from toolcaller.batch.progress import Progress
from toolcaller.batch.remote import CallerSource, record_remote, run_row, source_for
from toolcaller.envelope import Envelope
from toolcaller.errors import ExecutionError, UsageError

if TYPE_CHECKING:
    import pandas as pd

    from toolcaller.caller import ToolCaller

__all__ = ["OUTCOME_COLUMNS", "CallerSource", "Envelopes", "amap_calls", "map_calls", "source_for"]

DEFAULT_CONCURRENCY = 16
OUTCOME_COLUMNS = ("success", "code", "message", "result", "duration_ms", "attempts", "call_id")
_PLAIN = frozenset({str, int, float, bool, dict, list, type(None)})


class Envelopes(list[Envelope]):
    """The envelopes of a batch, in row order; pandas shares it instead of deep-copying it."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Envelopes:
        return self  # envelopes are frozen: sharing is safe, and copying 10,000 of them is not

    def __repr__(self) -> str:
        return f"<Envelopes of {len(self)} rows>"


# -- public API ---------------------------------------------------------------------------------


def map_calls(
    caller: ToolCaller,
    tool_name: str,
    params: Iterable[Any] | pd.DataFrame,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: bool | None = None,
    executor: concurrent.futures.Executor | None = None,
    source: str | Path | CallerSource | None = None,
    options: dict[str, Any] | None = None,
    **option_kwargs: Any,
) -> pd.DataFrame:
    """Call `tool_name` once per params row and return one DataFrame row per call.

    Args:
        caller: the caller whose tools, options and history are used.
        tool_name: the tool to call for every row.
        params: an iterable of params dicts, or a DataFrame whose rows are params.
        concurrency: most rows in flight at once.
        progress: `None` shows a bar in a notebook, or on stderr when it is a terminal;
            `True` always shows one; `False` never.
        executor: where rows run (see the module docstring); `None` runs them here.
        source: what process or distributed workers rebuild the caller from.
        options: request options for every call (`timeout`, `retries`, ...).
        **option_kwargs: options as keywords, like `ToolCaller.call`.

    Raises:
        UsageError: a bad `concurrency`, an executor that cannot receive the tool, or `map`
            called from the caller's own loop thread (use `amap` there).
    """
    if caller.portal.in_loop_thread():
        raise UsageError("map() blocks, and this is the caller's own loop thread: "
                         "use `await caller.amap(...)` here")
    unwound = threading.Event()

    async def run() -> pd.DataFrame:
        try:
            return await amap_calls(caller, tool_name, params, concurrency=concurrency,
                                    progress=progress, executor=executor, source=source,
                                    options=options, **option_kwargs)
        finally:
            unwound.set()

    future = caller.portal.submit(run())
    try:
        return future.result()
    except BaseException:
        future.cancel()  # Ctrl-C: the rows on the private loop stop too, and unwind
        unwound.wait(CANCEL_GRACE_S * 2)
        raise


async def amap_calls(
    caller: ToolCaller,
    tool_name: str,
    params: Iterable[Any] | pd.DataFrame,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: bool | None = None,
    executor: concurrent.futures.Executor | None = None,
    source: str | Path | CallerSource | None = None,
    options: dict[str, Any] | None = None,
    **option_kwargs: Any,
) -> pd.DataFrame:
    """Like `map_calls`, awaited: rows run on the running loop (or go to `executor`)."""
    batch = _Batch.of(caller, tool_name, params, concurrency, options, option_kwargs)
    work = _Work(batch, executor, source)
    bar = Progress(progress, len(batch.rows), tool_name)
    try:
        envelopes = await work.run(bar)
    finally:
        bar.close()
    return batch.frame(envelopes)


# -- rows in, frame out ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Batch:
    caller: ToolCaller
    tool_name: str
    rows: list[Any]
    table: pd.DataFrame | None
    """The input DataFrame, when params came as one."""
    concurrency: int
    options: dict[str, Any] | None
    option_kwargs: dict[str, Any]

    @classmethod
    def of(cls, caller: ToolCaller, tool_name: str, params: Any, concurrency: int,
           options: dict[str, Any] | None, option_kwargs: dict[str, Any]) -> _Batch:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise UsageError(f"concurrency must be a positive integer, got {concurrency!r}")
        if options is not None and not isinstance(options, dict):
            raise UsageError(f"options must be a dict of request options, got "
                             f"{type(options).__name__}")
        table = params if _is_frame(params) else None
        if table is not None:
            rows = [_row_from_record(r) for r in table.to_dict("records")]
        elif isinstance(params, dict | str | bytes):
            raise UsageError(f"params must be an iterable of dicts or a DataFrame, got one "
                             f"{type(params).__name__}: wrap a single row in a list")
        else:
            rows = [_row_from_dict(r) if isinstance(r, dict) else r for r in params]
        return cls(caller, tool_name, rows, table, concurrency, options, option_kwargs)

    def frame(self, envelopes: Envelopes) -> pd.DataFrame:
        """Return the input columns plus one outcome column set per row, in input order."""
        import pandas as pd

        if self.table is not None:
            inputs = self.table.copy()
        else:
            inputs = pd.DataFrame([r if isinstance(r, dict) else {} for r in self.rows],
                                  index=pd.RangeIndex(len(self.rows)))
        clash = {c: f"param:{c}" for c in inputs.columns if c in OUTCOME_COLUMNS}
        if clash:
            inputs = inputs.rename(columns=clash)
        columns = _outcome_columns(envelopes)
        results = columns.pop("result")
        outcomes = pd.DataFrame(columns, index=inputs.index)
        outcomes["result"] = pd.Series(results, index=inputs.index, dtype=object)
        frame = pd.concat([inputs, outcomes[list(OUTCOME_COLUMNS)]], axis=1)
        frame.attrs["envelopes"] = envelopes
        return frame


def _is_frame(value: Any) -> bool:
    pandas = sys.modules.get("pandas")  # a DataFrame can only exist if pandas was imported
    return pandas is not None and isinstance(value, pandas.DataFrame)


def _row_from_record(record: dict[Any, Any]) -> dict[str, Any]:
    return {str(k): _python(v) for k, v in record.items() if not _is_missing(v)}


def _row_from_dict(row: dict[Any, Any]) -> dict[Any, Any]:
    if all(type(v) in _PLAIN for v in row.values()):
        return row
    return {k: _python(v) for k, v in row.items()}


def _is_missing(value: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    if type(value) in _PLAIN:
        return False
    pandas = sys.modules.get("pandas")
    return pandas is not None and (value is pandas.NA or value is pandas.NaT)


def _python(value: Any) -> Any:
    """Turn numpy scalars and arrays, and pandas timestamps, into plain Python values."""
    if type(value) in _PLAIN:
        return value
    module = type(value).__module__.partition(".")[0]
    if module == "numpy":
        return value.tolist() if hasattr(value, "tolist") else value.item()
    if module == "pandas" and hasattr(value, "isoformat"):
        return value.isoformat()
    return value


# -- running the rows ---------------------------------------------------------------------------


class _Work:
    """Runs a batch's rows locally or on an executor, keeping at most `concurrency` in flight."""

    def __init__(self, batch: _Batch, executor: concurrent.futures.Executor | None,
                 source: str | Path | CallerSource | None) -> None:
        self.batch = batch
        self.executor = executor
        self.source: CallerSource | None = None
        if executor is not None and not isinstance(executor, concurrent.futures.Executor):
            raise UsageError(f"executor must be a concurrent.futures.Executor, "
                             f"got {type(executor).__name__}")
        if executor is not None and not isinstance(executor,
                                                   concurrent.futures.ThreadPoolExecutor):
            self.source = source_for(batch.caller, batch.tool_name, source)
        self.options = dict(batch.options or {}) | batch.option_kwargs

    async def run(self, bar: Progress) -> Envelopes:
        batch = self.batch
        if self.executor is None:
            return Envelopes(await run_rows(batch.caller, batch.tool_name, batch.rows,
                                            batch.concurrency, batch.options,
                                            batch.option_kwargs, bar.advance))
        return Envelopes(await self._run_executor(self.executor, bar))

    async def _run_executor(self, executor: concurrent.futures.Executor,
                            bar: Progress) -> list[Envelope]:
        batch = self.batch
        out: list[Envelope | None] = [None] * len(batch.rows)
        pending: dict[asyncio.Future[Any], int] = {}
        todo = iter(range(len(batch.rows)))
        try:
            while True:
                for index in todo:
                    pending[self._submit(executor, index)] = index
                    if len(pending) >= batch.concurrency:
                        break
                if not pending:
                    return out  # type: ignore[return-value]
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    index = pending.pop(future)
                    envelope = out[index] = self._collect(future, batch.rows[index])
                    bar.advance(envelope.success)
        except BaseException:
            for future in pending:
                future.cancel()
            if pending:
                await asyncio.wait(pending, timeout=CANCEL_GRACE_S)
            raise

    def _submit(self, executor: concurrent.futures.Executor, index: int) -> asyncio.Future[Any]:
        row = self.batch.rows[index]
        submitted: concurrent.futures.Future[Any]
        try:
            if self.source is None:
                submitted = executor.submit(_call_row, self.batch.caller, self.batch.tool_name,
                                            row, self.options)
            else:
                submitted = executor.submit(run_row, self.source, self.batch.tool_name, row,
                                            self.options)
        except Exception as exc:  # noqa: BLE001 - a row the executor refuses gets its envelope
            submitted = concurrent.futures.Future()
            submitted.set_exception(exc)
        return asyncio.wrap_future(submitted)

    def _collect(self, future: asyncio.Future[Any], row: Any) -> Envelope:
        caller, name = self.batch.caller, self.batch.tool_name
        exc = (asyncio.CancelledError("the executor cancelled the call") if future.cancelled()
               else future.exception())
        if exc is None and isinstance(future.result(), Envelope):
            return future.result()  # type: ignore[no-any-return]
        if exc is None:
            return record_remote(caller, name, row, Envelope.model_validate(future.result()))
        error = ExecutionError(f"the executor could not run the call: "
                               f"{type(exc).__name__}: {exc}")
        return record_remote(caller, name, row, error)


def _call_row(caller: ToolCaller, tool_name: str, params: Any,
              options: dict[str, Any]) -> Envelope:
    """Run one row with the caller itself (thread executors)."""
    return caller.call(tool_name, params, None, **options)


def _outcome_columns(envelopes: list[Envelope]) -> dict[str, list[Any]]:
    """The frame's outcome columns, one value per envelope."""
    columns: dict[str, list[Any]] = {name: [] for name in OUTCOME_COLUMNS}
    for envelope in envelopes:
        meta, error = envelope.metadata, envelope.error
        columns["success"].append(envelope.success)
        columns["code"].append(error.code.value if error else None)
        columns["message"].append(error.message if error else None)
        columns["result"].append(envelope.result)
        columns["duration_ms"].append(float(meta.duration))
        columns["attempts"].append(getattr(meta, "attempts", 0))
        columns["call_id"].append(getattr(meta, "call_id", None))
    return columns
