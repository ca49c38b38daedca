"""The attempt loop of `ToolCaller`: sync and async drivers, envelopes and history records.

Split from `caller.py` to keep modules small; it is part of the caller, the one place where
exceptions become envelopes.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable
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

    __slots__ = ("adapter", "options", "params", "redacted", "secret_keys", "tool")

    def __init__(self, tool: Tool, params: JSONObject, options: Options, adapter: Adapter,
                 secret_keys: frozenset[str], redacted: JSONObject) -> None:
        self.tool = tool
        self.params = params
        self.options = options
        self.adapter = adapter
        self.secret_keys = secret_keys
        self.redacted = redacted
        """The params with secrets masked, as the history keeps them."""




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
            try:
                output = await _run_with_timeout(p.adapter, p.tool, p.params, ctx)
                result = to_result(output, p.options.format)
            except asyncio.CancelledError:
                raise
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
        self.history.add(CallRecord(
            call_id, p.tool.name, arrived, duration, True, None, None,
            p.redacted, p.options,
            _attempt_records(plan, ()),
        ))
        return envelope

    def _failed(self, call_id: str, name: Any, params: Any, p: Prepared | None,
                error: ToolCallError, arrived: float, start: float, plan: CallPlan | None,
                secrets: Iterable[str]) -> Envelope:
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
        self.history.add(CallRecord(
            call_id, tool_name, arrived, duration, False, error.code.value, message,
            _safe_redact(params, secret_keys),
            p.options if p else None,
            _attempt_records(plan, known) if plan else [],
        ))
        return envelope


async def _run_with_timeout(adapter: Adapter, tool: Tool, params: JSONObject,
                            ctx: AttemptContext) -> object:
    # asyncio.timeout() costs ~5 µs a call; a bare timer handle and task.cancel() cost ~1.
    task = asyncio.current_task()
    assert task is not None
    fired: list[bool] = []

    def expire() -> None:
        fired.append(True)
        task.cancel()

    loop = asyncio.get_running_loop()
    timer = loop.call_at(loop.time() + ctx.timeout_s, expire)
    try:
        return await adapter.arun(tool, params, ctx)
    except asyncio.CancelledError:
        if not fired or task.uncancel() > 0:
            raise  # cancelled from outside: let it through
        note = ("; the sync tool goes on running in its worker thread (threads cannot be "
                "stopped: use isolation 'process' to kill it)" if ctx.straggler else "")
        raise ToolTimeoutError(f"no result within {ctx.timeout_s * 1000:.0f} ms{note}",
                               straggler=ctx.straggler) from None
    finally:
        timer.cancel()


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
