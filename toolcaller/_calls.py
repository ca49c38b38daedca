"""The attempt loop of `ToolCaller`: sync and async drivers, envelopes and history records.

Split from `caller.py` to keep modules small; it is part of the caller, the one place where
exceptions become envelopes.
"""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.adapters.base import Adapter, AttemptContext
from toolcaller.core.history import AttemptRecord, CallRecord, History
from toolcaller.core.policy import MIN_ATTEMPT_MS, CallPlan, Step
from toolcaller.core.redact import collect_secrets, mask_text, redact_params, redact_value
from toolcaller.core.results import to_result
from toolcaller.core.tool import Tool
from toolcaller.envelope import AttemptInfo, CallMetadata, Envelope, ErrorInfo, Options, now_utc
from toolcaller.errors import ToolCallError, ToolTimeoutError

__all__ = ["AttemptRunner", "Prepared"]


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
                return self._succeeded(call_id, p, result, arrived, start, plan)
            step = self._attempt_failed(plan, attempt, error, p)
            if step is not None and _blocking(error, p.tool):
                step = self._await_straggler_sync(plan, error, step)
        return self._failed(call_id, p.tool.name, p.params, p, plan.final_error(p.tool.name),
                            arrived, start, plan, secrets)

    async def _attempts_async(self, p: Prepared, call_id: str, arrived: float,
                              start: float) -> Envelope:
        plan = CallPlan(p.options, start, self._clock, self._rng)
        secrets: set[str] = set()
        step = plan.first()
        while step is not None:
            if step.wait_s > 0:
                await self._asleep(step.wait_s)
            attempt = plan.begin(step.wait_s)
            ctx = AttemptContext(step.budget_s, p.options.format, attempt.number, call_id,
                                 secrets)
            grace_s = min(max(plan.deadline - self._clock() - step.budget_s, LATE_S), MAX_GRACE_S)
            try:
                output = await _run_with_timeout(p.adapter, p.tool, p.params, ctx, grace_s)
                result = to_result(output, p.options.format)
            except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
                raise  # the caller's own interruption, not the tool's failure
            except BaseException as exc:  # noqa: BLE001 - mapped to a code in _attempt_failed
                error = _as_error(exc)
            else:
                plan.end(attempt, None)
                return self._succeeded(call_id, p, result, arrived, start, plan)
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
                   start: float, plan: CallPlan) -> Envelope:
        duration = _ms(self._clock() - start)
        trail = _trail(plan)
        envelope = Envelope(
            success=True,
            result=result,
            metadata=CallMetadata(duration=duration, attempts=len(plan.attempts),
                                  toolName=p.tool.name, timestamp=now_utc(arrived),
                                  callId=call_id, trail=trail),
        )
        if p.claim():
            self.history.add(CallRecord(
                call_id, p.tool.name, arrived, duration, True, None, None,
                p.redacted, p.options, _attempt_records(plan, ()),
            ))
        return envelope

    def _failed(self, call_id: str, name: Any, params: Any, p: Prepared | None,
                error: ToolCallError, arrived: float, start: float, plan: CallPlan | None,
                secrets: Iterable[str], secret_keys: frozenset[str] | None = None) -> Envelope:
        if secret_keys is None:
            secret_keys = (p.secret_keys if p is not None
                           else getattr(error, "secret_keys", frozenset()))
        known = set(secrets) | collect_secrets(params, secret_keys)
        message = mask_text(error.message, known)
        details = redact_value(error.details, known) if error.details is not None else None
        duration = _ms(self._clock() - start)
        tool_name = name if isinstance(name, str) else None
        envelope = Envelope(
            success=False,
            error=ErrorInfo(code=error.code, message=message, details=details,
                            retryable=error.retryable),
            metadata=CallMetadata(duration=duration,
                                  attempts=len(plan.attempts) if plan else 0,
                                  toolName=tool_name, timestamp=now_utc(arrived),
                                  callId=call_id, trail=_trail(plan) if plan else []),
        )
        if p is None or p.claim():
            self.history.add(CallRecord(
                call_id, tool_name, arrived, duration, False, error.code.value, message,
                _safe_redact(params, secret_keys), p.options if p else None,
                _attempt_records(plan, known) if plan else [],
            ))
        return envelope


_ABANDONED: set[asyncio.Task[Any]] = set()
"""Attempts that ignored their cancellation: kept referenced until they end by themselves."""
MAX_GRACE_S = 0.5
EAGER_TASKS = sys.version_info >= (3, 12)
LATE_S = 0.005


async def _run_with_timeout(adapter: Adapter, tool: Tool, params: JSONObject,
                            ctx: AttemptContext, grace_s: float) -> object:
    """Run one attempt as its own task: the envelope never waits for a tool past its time.

    A tool that swallows its cancellation, or blocks the loop and returns late, still ends
    the attempt as TIMEOUT; the first is left to finish alone (after `grace_s` for cleanup).
    """
    loop = asyncio.get_running_loop()
    when = loop.time() + ctx.timeout_s
    # Its own task, so that a tool ignoring its cancellation cannot hold the envelope. (Running
    # the first step by hand in the caller's task would be cheaper, but anyio's cancel scopes,
    # httpx's among them, must be left in the task that entered them.)
    inner = _start_task(loop, adapter.arun(tool, params, ctx))
    if inner.done():  # Python 3.12+: an eager task that finished without suspending
        _check_late(loop, when, ctx)
        return inner.result()
    # One future woken by whichever comes first, the tool or the timer: asyncio.wait() costs
    # ~15 µs a call, this ~3.
    waiter = loop.create_future()

    def wake(_: object = None) -> None:
        if not waiter.done():
            waiter.set_result(None)

    inner.add_done_callback(wake)
    timer = loop.call_at(when, wake)
    try:
        await waiter
    except asyncio.CancelledError:
        inner.cancel()  # the call itself is cancelled (a user's Cancel, Ctrl-C): stop the tool
        raise
    finally:
        timer.cancel()
    if inner.done():
        if loop.time() > when + LATE_S:
            _retrieve(inner)
        _check_late(loop, when, ctx)
        return inner.result()
    inner.cancel()
    await asyncio.wait((inner,), timeout=grace_s)
    if not inner.done():
        _ABANDONED.add(inner)
        inner.add_done_callback(_forget)
        raise ToolTimeoutError(
            f"no result within {ctx.timeout_s * 1000:.0f} ms, and the tool ignored its "
            "cancellation: it goes on running, abandoned")
    _retrieve(inner)
    note = ("; the sync tool goes on running in its worker thread (threads cannot be "
            "stopped: use isolation 'process' to kill it)" if ctx.straggler else "")
    raise ToolTimeoutError(f"no result within {ctx.timeout_s * 1000:.0f} ms{note}",
                           straggler=ctx.straggler)


def _check_late(loop: asyncio.AbstractEventLoop, when: float, ctx: AttemptContext) -> None:
    """A result after the timeout means the tool held the loop: no timer could fire."""
    if loop.time() > when + LATE_S:
        late = (loop.time() - when) * 1000
        raise ToolTimeoutError(
            f"the result came {late:.0f} ms after the {ctx.timeout_s * 1000:.0f} ms timeout: "
            "the tool blocked the event loop (an async tool must not call blocking code)")


def _start_task(loop: asyncio.AbstractEventLoop,
                coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    if EAGER_TASKS:  # no trip through the loop for a tool that does not suspend
        return asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg]
    return loop.create_task(coro)


def _forget(task: asyncio.Task[Any]) -> None:
    _ABANDONED.discard(task)
    _retrieve(task)


def _retrieve(task: asyncio.Task[Any]) -> None:
    """Read a finished task's exception so that asyncio does not log it as never retrieved."""
    if task.done() and not task.cancelled():
        task.exception()


def _as_error(exc: BaseException) -> ToolCallError:
    """Map anything an attempt raised to a contract error (adapters map their own first)."""
    if isinstance(exc, ToolCallError):
        return exc
    from toolcaller.adapters.python import translate_exception

    return translate_exception(exc)


def _blocking(error: ToolCallError, tool: Tool) -> bool:
    straggler = getattr(error, "straggler", None)
    return straggler is not None and getattr(straggler, "running", False) and not tool.idempotent


def _trail(plan: CallPlan) -> list[AttemptInfo]:
    return [
        AttemptInfo(attempt=a.number, code=a.error.code if a.error else None,
                    duration=round(a.duration_ms, 3), wait=round(a.wait_ms, 3))
        for a in plan.attempts
    ]


def _attempt_records(plan: CallPlan, secrets: Iterable[str]) -> list[AttemptRecord]:
    return [
        AttemptRecord(
            a.number, a.started_ms, a.duration_ms, a.wait_ms,
            a.error.code.value if a.error else None,
            mask_text(a.error.message, secrets) if a.error else None,
            a.error.retryable if a.error else None,
        )
        for a in plan.attempts
    ]


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
