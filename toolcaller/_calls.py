"""The attempt loop of `ToolCaller`: sync and async drivers, envelopes and history records.

Split from `caller.py` to keep modules small; it is part of the caller, the one place where
exceptions become envelopes.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, Protocol

from toolcaller._attempt import LATE_S, MAX_GRACE_S, TaskTimer, run_in_task, run_inline
from toolcaller._types import JSONObject
from toolcaller.adapters.base import Adapter, AttemptContext
from toolcaller.core.history import History, call_row, row_attempts
from toolcaller.core.policy import MIN_ATTEMPT_MS, Attempt, CallPlan, Step
from toolcaller.core.redact import collect_secrets, mask_text, redact_params, redact_value
from toolcaller.core.results import to_result
from toolcaller.core.tool import Tool
from toolcaller.envelope import (
    Envelope,
    ErrorInfo,
    Options,
    attempt_info,
    call_envelope,
    now_utc,
)
from toolcaller.errors import ErrorCode, ToolCallError, ToolTimeoutError

__all__ = ["Answer", "Answered", "AttemptRunner", "Outcome", "Prepared", "Success",
           "as_envelope", "success_envelope"]

Success = tuple[tuple[Any, ...], Any]
"""A successful call as its history row (`toolcaller.core.history.call_row`) and result."""
Outcome = Envelope | Success
"""How a call's attempts end: a failure's envelope, or a success kept as row and result.

The envelope of a success is built from them when wanted (`as_envelope`): a batch of
10,000 calls then keeps plain tuples, which the garbage collector does not walk, instead
of 60,000 model objects.
"""


class Prepared:
    """A validated call, ready for its attempts."""

    __slots__ = ("_token", "adapter", "options", "params", "redacted", "secret_keys", "tool")

    def __init__(self, tool: Tool, params: JSONObject, options: Options, adapter: Adapter,
                 secret_keys: frozenset[str], redacted: JSONObject) -> None:
        self.tool = tool
        self.params = params
        self.options = options
        self.adapter = adapter
        self.secret_keys = secret_keys
        self.redacted = redacted
        """The params with secrets masked, as the history keeps them."""
        self._token = [True]

    def claim(self) -> bool:
        """Take the right to record this call's outcome; only the first claim gets it.

        `call` may answer by its deadline while the attempts go on on a blocked loop: one of
        the two records the call, never both.
        """
        try:
            self._token.pop()  # atomic under the GIL
        except IndexError:
            return False
        return True




class Answer(Protocol):
    """Where a watched call's outcome goes when its task is stuck in a tool (a batch row)."""

    timer: TaskTimer
    """The timer of the task the call's attempts run in."""

    def __call__(self, outcome: Outcome) -> None:
        """Take the call's outcome, given without the stuck task."""

    def take_over(self, rest: Coroutine[Any, Any, Outcome]) -> None:
        """Run the call's remaining attempts without the stuck task; their outcome is the call's."""


class Answered(Exception):
    """Raised in a stuck task once its tool lets go: the call went on or ended without it."""


class _Overdue:
    """Takes a call away from an inline attempt stuck in a tool that ignored its cancellation."""

    __slots__ = ("answer", "answered", "arrived", "attempt", "budget_s", "call_id", "p", "plan",
                 "runner", "secrets", "start", "timer")

    def __init__(self, runner: AttemptRunner, p: Prepared, call_id: str, arrived: float,
                 start: float, plan: CallPlan, secrets: set[str], answer: Answer) -> None:
        self.runner, self.p, self.call_id, self.arrived, self.start = (
            runner, p, call_id, arrived, start)
        self.plan, self.secrets, self.answer = plan, secrets, answer
        self.timer = answer.timer
        self.attempt: Attempt | None = None
        self.budget_s = 0.0
        self.answered = False

    def overdue(self) -> None:
        """End the stuck attempt as TIMEOUT; retry elsewhere or answer (`run_inline` calls it)."""
        if self.answered or self.attempt is None:
            return
        self.answered = True
        p, plan, runner = self.p, self.plan, self.runner
        error = ToolTimeoutError(
            f"no result within {self.budget_s * 1000:.0f} ms, and the tool ignored its "
            "cancellation: it goes on running, abandoned")
        plan.end(self.attempt, error)
        step = plan.next(error)
        if step is not None:  # retries and time are left: they run without the stuck task
            self.answer.take_over(runner._attempt_loop(
                p, self.call_id, self.arrived, self.start, plan, step, self.secrets, None))
            return
        self.answer(runner._failed(self.call_id, p.tool.name, p.params, p,
                                   plan.final_error(p.tool.name), self.arrived, self.start,
                                   plan, self.secrets))


class AttemptRunner:
    """Runs the attempts of prepared calls and records their envelopes (mixed into ToolCaller)."""

    history: History
    _clock: Callable[[], float]
    _wall: Callable[[], float]
    _sleep: Callable[[float], None]
    _asleep: Callable[[float], Any]
    _rng: Callable[[], float]

    def _attempts_sync(self, p: Prepared, call_id: str, arrived: float,
                       start: float) -> Envelope:
        plan = CallPlan(p.options, start, self._clock, self._rng)
        secrets: set[str] = set()
        step = plan.first()
        while step is not None:
            if step.wait_s > 0:
                self._sleep(step.wait_s)
            attempt = plan.begin(step.wait_s)
            ctx = AttemptContext(step.budget_s, p.options.format, attempt.number, call_id,
                                 secrets)
            try:
                result = to_result(p.adapter.run(p.tool, p.params, ctx), p.options.format)
            except (KeyboardInterrupt, SystemExit):
                raise  # Ctrl-C in the calling thread; a tool's own arrive wrapped by its adapter
            except BaseException as exc:  # noqa: BLE001 - mapped to a code in _attempt_failed
                error = _as_error(exc)
            else:
                plan.end(attempt, None)
                return success_envelope(*self._succeeded(call_id, p, result, arrived, start,
                                                         plan))
            step = self._attempt_failed(plan, attempt, error, p)
            if step is not None and _blocking(error, p.tool):
                step = self._await_straggler_sync(plan, error, step)
        return self._failed(call_id, p.tool.name, p.params, p, plan.final_error(p.tool.name),
                            arrived, start, plan, secrets)

    def _attempts_async(self, p: Prepared, call_id: str, arrived: float, start: float,
                        answer: Answer | None = None) -> Coroutine[Any, Any, Outcome]:
        """Run a call's attempts, each in a task of its own (see `Outcome` for the result).

        With `answer`, each runs inline in this task instead (`run_inline`). If a tool then
        ignores its cancellation past its grace, the call goes on without this task: its
        outcome goes to `answer`, and this task raises `Answered` once the tool lets go.
        """
        plan = CallPlan(p.options, start, self._clock, self._rng)
        secrets: set[str] = set()
        watch = (_Overdue(self, p, call_id, arrived, start, plan, secrets, answer)
                 if answer is not None else None)
        # The loop's coroutine itself, not one awaiting it: a frame fewer per call.
        return self._attempt_loop(p, call_id, arrived, start, plan, plan.first(), secrets, watch)

    async def _attempt_loop(self, p: Prepared, call_id: str, arrived: float, start: float,
                            plan: CallPlan, step: Step | None, secrets: set[str],
                            watch: _Overdue | None) -> Outcome:
        while step is not None:
            if step.wait_s > 0:
                await self._asleep(step.wait_s)
            attempt = plan.begin(step.wait_s)
            ctx = AttemptContext(step.budget_s, p.options.format, attempt.number, call_id,
                                 secrets)
            if watch is not None:
                watch.attempt, watch.budget_s = attempt, step.budget_s
            grace_s = min(max(plan.deadline - self._clock() - step.budget_s, LATE_S), MAX_GRACE_S)
            try:
                output = await (
                    run_in_task(p.adapter, p.tool, p.params, ctx, grace_s) if watch is None
                    else run_inline(p.adapter, p.tool, p.params, ctx, grace_s, watch))
                result = to_result(output, p.options.format)
            except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
                raise  # the caller's own interruption, not the tool's failure
            except BaseException as exc:  # noqa: BLE001 - mapped to a code in _attempt_failed
                error = _as_error(exc)
            else:
                if watch is not None and watch.answered:
                    raise Answered
                plan.end(attempt, None)
                return self._succeeded(call_id, p, result, arrived, start, plan)
            if watch is not None and watch.answered:
                raise Answered
            step = self._attempt_failed(plan, attempt, error, p)
            if step is not None and _blocking(error, p.tool):
                step = await asyncio.to_thread(self._await_straggler_sync, plan, error, step)
        return self._failed(call_id, p.tool.name, p.params, p, plan.final_error(p.tool.name),
                            arrived, start, plan, secrets)

    def _attempt_failed(self, plan: CallPlan, attempt: Any, error: ToolCallError,
                        p: Prepared) -> Step | None:
        plan.end(attempt, error)
        return plan.next(error)

    def _await_straggler_sync(self, plan: CallPlan, error: ToolCallError,
                              step: Step) -> Step | None:
        """Hold a retry until the timed-out attempt's thread ends (a tool not idempotent)."""
        straggler = getattr(error, "straggler", None)
        began = self._clock()
        room = plan.deadline - began - MIN_ATTEMPT_MS / 1000.0
        if straggler is None or straggler.wait(max(room, 0.0)):
            refit = plan.fit(max(step.wait_s - (self._clock() - began), 0.0))
            if refit is None:
                plan.stop_reason = "the deadline leaves no time for another attempt"
            return refit
        plan.stop_reason = (
            f"attempt {len(plan.attempts)} is still running in its thread, and a tool that is "
            "not idempotent is not started again while it runs (declare it idempotent, or use "
            "isolation 'process')"
        )
        return None

    # -- envelopes and history -------------------------------------------------------------

    def _succeeded(self, call_id: str, p: Prepared, result: Any, arrived: float,
                   start: float, plan: CallPlan) -> Success:
        row = call_row(call_id, p.tool.name, arrived, _ms(self._clock() - start), True, None,
                       None, p.options, _attempt_rows(plan, ()))
        if p.claim():
            self.history.add_row(row, p.redacted)
        return row, result

    def _failed(self, call_id: str, name: Any, params: Any, p: Prepared | None,
                error: ToolCallError, arrived: float, start: float, plan: CallPlan | None,
                secrets: Iterable[str], secret_keys: frozenset[str] | None = None) -> Envelope:
        if secret_keys is None:
            secret_keys = (p.secret_keys if p is not None
                           else getattr(error, "secret_keys", frozenset()))
        known = set(secrets) | collect_secrets(params, secret_keys)
        message = mask_text(error.message, known)
        details = redact_value(error.details, known) if error.details is not None else None
        tool_name = name if isinstance(name, str) else None
        row = call_row(call_id, tool_name, arrived, _ms(self._clock() - start), False,
                       error.code.value, message, p.options if p else None,
                       _attempt_rows(plan, known) if plan else ())
        envelope = _envelope_of(row, None, ErrorInfo(code=error.code, message=message,
                                                     details=details, retryable=error.retryable))
        if p is None or p.claim():
            self.history.add_row(row, _safe_redact(params, secret_keys))
        return envelope


def _as_error(exc: BaseException) -> ToolCallError:
    """Map anything an attempt raised to a contract error (adapters map their own first)."""
    if isinstance(exc, ToolCallError):
        return exc
    from toolcaller.adapters.python import translate_exception

    return translate_exception(exc)


def _blocking(error: ToolCallError, tool: Tool) -> bool:
    straggler = getattr(error, "straggler", None)
    return straggler is not None and getattr(straggler, "running", False) and not tool.idempotent


def success_envelope(row: tuple[Any, ...], result: Any) -> Envelope:
    """Build the envelope of a successful call from its history row and result."""
    return _envelope_of(row, result, None)


def _envelope_of(row: tuple[Any, ...], result: Any, error: ErrorInfo | None) -> Envelope:
    """The envelope of a call from its history row: one source for both, success or not."""
    trail = [attempt_info(a[0], None if a[4] is None else ErrorCode(a[4]), round(a[2], 3),
                          round(a[3], 3))
             for a in row_attempts(row)]
    return call_envelope(success=error is None, result=result, error=error, duration=row[3],
                         attempts=len(trail), tool_name=row[1], timestamp=now_utc(row[2]),
                         call_id=row[0], trail=trail)


def as_envelope(outcome: Outcome) -> Envelope:
    """Return the envelope of an outcome, building it for a success."""
    return outcome if isinstance(outcome, Envelope) else success_envelope(*outcome)


def _attempt_rows(plan: CallPlan, secrets: Iterable[str]) -> tuple[Any, ...]:
    """The attempts as `AttemptRecord` fields, flat (see `toolcaller.core.history`)."""
    if len(plan.attempts) == 1 and plan.attempts[0].error is None:  # every success's case
        a = plan.attempts[0]
        return (a.number, a.started_ms, a.duration_ms, a.wait_ms, None, None, None)
    values: list[Any] = []
    for a in plan.attempts:
        error = a.error
        values += (a.number, a.started_ms, a.duration_ms, a.wait_ms,
                   error.code.value if error else None,
                   mask_text(error.message, secrets) if error else None,
                   error.retryable if error else None)
    return tuple(values)


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def _safe_redact(params: Any, secret_keys: frozenset[str]) -> Any:
    """Redact params for the history of a failed call, even params that are not valid JSON."""
    if not isinstance(params, dict):
        return None
    try:
        return redact_params(params, secret_keys)
    except (ToolCallError, RecursionError):
        return redact_params(_finite(params), secret_keys)


def _finite(value: Any, depth: int = 0) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if depth > 100:
        return "…"
    if isinstance(value, dict):
        return {k: _finite(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v, depth + 1) for v in value]
    return value
