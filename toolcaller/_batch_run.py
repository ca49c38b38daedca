"""Running a batch's rows on this loop, and keeping their envelopes (see `toolcaller.batch`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, overload

from toolcaller._attempt import MAX_GRACE_S, TaskTimer, keep_until_done
from toolcaller._calls import Answered, Outcome, success_envelope
from toolcaller._progress import Bar
from toolcaller.core.history import row_attempt_count
from toolcaller.envelope import Envelope

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["OUTCOME_COLUMNS", "Batch", "Envelopes", "LocalRun", "advance"]

OUTCOME_COLUMNS = ("success", "code", "message", "result", "duration_ms", "attempts", "call_id")


class Batch(Protocol):
    """What running the rows needs of a batch (`toolcaller.batch._Batch`)."""

    caller: ToolCaller
    tool_name: str
    rows: list[Any]
    concurrency: int
    options: dict[str, Any] | None
    option_kwargs: dict[str, Any]


class Envelopes(Sequence[Envelope]):
    """The envelopes of a batch, in row order; pandas shares it instead of deep-copying it.

    A successful row is kept as its history row and result, and its envelope is built the
    first time it is read: a batch of 10,000 calls then holds plain tuples, which the garbage
    collector does not walk, instead of 60,000 model objects stalling the loop.
    """

    __slots__ = ("_items", "_results")

    def __init__(self, items: Iterable[Envelope | tuple[Any, ...]],
                 results: Iterable[Any] | None = None) -> None:
        self._items: list[Envelope | tuple[Any, ...]] = list(items)
        self._results: list[Any] = ([None] * len(self._items) if results is None
                                    else list(results))

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Envelope: ...

    @overload
    def __getitem__(self, index: slice) -> list[Envelope]: ...

    def __getitem__(self, index: int | slice) -> Envelope | list[Envelope]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        item = self._items[index]
        if isinstance(item, Envelope):
            return item
        built = self._items[index] = success_envelope(item, self._results[index])
        return built

    def __deepcopy__(self, memo: dict[int, Any]) -> Envelopes:
        return self  # envelopes are frozen: sharing is safe, and copying 10,000 of them is not

    def __repr__(self) -> str:
        return f"<Envelopes of {len(self)} rows>"

    def _columns(self) -> dict[str, list[Any]]:
        """The frame's outcome columns, read without building the successes' envelopes."""
        values = [_outcome(item, result)
                  for item, result in zip(self._items, self._results, strict=True)]
        columns = zip(*values, strict=True) if values else ([] for _ in OUTCOME_COLUMNS)
        return {name: list(column) for name, column in zip(OUTCOME_COLUMNS, columns,
                                                            strict=True)}


def _outcome(item: Envelope | tuple[Any, ...], result: Any) -> tuple[Any, ...]:
    """One row's values of `OUTCOME_COLUMNS`, from its envelope or its history row."""
    if isinstance(item, Envelope):
        meta, error = item.metadata, item.error
        return (item.success, error.code.value if error else None,
                error.message if error else None, item.result, float(meta.duration),
                getattr(meta, "attempts", 0), getattr(meta, "call_id", None))
    return (True, None, None, result, float(item[3]), row_attempt_count(item), item[0])




def advance(bar: Bar, ok: bool) -> None:
    with contextlib.suppress(Exception):  # a broken progress display must not stop the batch
        bar.advance(ok)


class LocalRun:
    """Rows on this loop: `concurrency` workers, each running its rows' attempts inline.

    A worker runs one row at a time in its own task, with no task per attempt: the next row
    starts in the same step as the last one ends, which keeps thousands of calls in flight
    cheap. A tool that ignores its cancellation would hold its worker: past its grace the
    engine takes the row away (`_Slot`), the worker is left behind, and a new one takes its
    place.
    """

    def __init__(self, batch: Batch, bar: Bar) -> None:
        self.batch, self.bar = batch, bar
        self.out: list[Any] = [None] * len(batch.rows)
        """Each row's failure envelope, or its success's history row (see `Envelopes`)."""
        self.results: list[Any] = [None] * len(batch.rows)
        self.todo = iter(range(len(batch.rows)))  # shared by the workers: one loop, no race
        self.left = len(batch.rows)
        self.tasks: set[asyncio.Task[None]] = set()
        """Workers and taken-over rows; not the workers left behind."""
        self.stopping = False
        self.finished: asyncio.Future[None] | None = None

    async def run(self) -> Envelopes:
        if not self.left:
            return Envelopes(())
        self.finished = asyncio.get_running_loop().create_future()
        for _ in range(min(self.batch.concurrency, self.left)):
            self.start(self._work())
        try:
            await self.finished
        except BaseException:
            self.stopping = True
            for task in self.tasks:
                task.cancel()
            if self.tasks:  # rows unwind; a tool ignoring its cancellation is left behind
                await asyncio.wait(self.tasks, timeout=MAX_GRACE_S)
            for task in self.tasks:
                keep_until_done(task)
            raise
        return Envelopes(self.out, self.results)

    def start(self, work: Coroutine[Any, Any, None]) -> None:
        """Run a worker, or a taken-over row, as a task the batch waits for and can cancel."""
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self._ended)

    @property
    def open(self) -> bool:
        """Whether rows may still start."""
        return not self.stopping and self.finished is not None and not self.finished.done()

    async def _work(self) -> None:
        batch, task, timer = self.batch, asyncio.current_task(), TaskTimer()
        caller, name = batch.caller, batch.tool_name
        try:
            while self.open:
                index = next(self.todo, None)
                if index is None:
                    return
                slot = _Slot(self, index, task, timer)
                try:  # awaited here, not in a helper coroutine: a frame fewer per row
                    started = caller._begin(name, batch.rows[index], batch.options,
                                            batch.option_kwargs, slot)
                    outcome = started if isinstance(started, Envelope) else await started
                except Answered:
                    return  # the row went on without this worker, which a new one replaced
                except Exception as exc:  # noqa: BLE001 - a row's failure never stops the batch
                    if slot.taken:
                        return
                    outcome = caller._last_resort({"toolName": name}, exc)
                if slot.taken:
                    return
                self.settle(index, outcome)
        finally:
            timer.close()

    def settle(self, index: int, outcome: Outcome) -> None:
        """Keep a row's outcome; the batch is finished when every row has one."""
        if isinstance(outcome, Envelope):
            self.out[index] = outcome
            advance(self.bar, outcome.success)
        else:  # kept apart: a tuple holding the result (a dict) would be tracked by the GC
            self.out[index], self.results[index] = outcome
            advance(self.bar, True)
        self.left -= 1
        if not self.left and self.finished is not None and not self.finished.done():
            self.finished.set_result(None)

    def _ended(self, task: asyncio.Task[None]) -> None:
        if task not in self.tasks:
            return  # left behind: its row went on without it
        self.tasks.discard(task)
        if task.cancelled():
            if self.open:  # cancelled from outside the batch: its row would never settle
                self.finished.set_exception(  # type: ignore[union-attr]
                    RuntimeError("a task of the batch was cancelled from outside it"))
            return
        error = task.exception()
        if error is not None and self.open:  # Ctrl-C or a bug: the batch stops, no hang
            self.finished.set_exception(error)  # type: ignore[union-attr]


class _Slot:
    """One row in a worker: how the engine takes the row away from a stuck worker."""

    __slots__ = ("index", "run", "taken", "task", "timer")

    def __init__(self, run: LocalRun, index: int, task: asyncio.Task[Any] | None,
                 timer: TaskTimer) -> None:
        self.run, self.index, self.task, self.timer, self.taken = run, index, task, timer, False

    def __call__(self, outcome: Outcome) -> None:
        """The row's outcome, given without the worker."""
        self._leave_worker()
        self.run.settle(self.index, outcome)

    def take_over(self, rest: Coroutine[Any, Any, Outcome]) -> None:
        """Run the row's remaining attempts in a task of their own."""
        self._leave_worker()
        if self.run.open:
            self.run.start(self._finish(rest))
        else:
            rest.close()

    async def _finish(self, rest: Coroutine[Any, Any, Outcome]) -> None:
        self.run.settle(self.index, await rest)

    def _leave_worker(self) -> None:
        self.taken = True
        if self.task is not None:
            self.run.tasks.discard(self.task)
            keep_until_done(self.task)
        if self.run.open:
            self.run.start(self.run._work())  # a new worker takes the stuck one's place
