"""A call's checks before any attempt (SPEC rules 1–3): name, params, tool, options, schema.

`Preparer.prepare` turns a request's parts into a `CallContext`, or raises the one error that
ends the call with `attempts: 0`. What it derives per tool (the compiled validator, the
secret property names, the default options) is made once and kept while the tool lives.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass
from typing import Any

from toolcaller.core.clock import Clock
from toolcaller.core.context import CallContext
from toolcaller.core.options import options_for
from toolcaller.core.params import as_tool_params
from toolcaller.core.redact import collect_secrets, redact_params, secret_names_in_schema
from toolcaller.core.registry import Registry
from toolcaller.core.schema import ParamsValidator
from toolcaller.core.tool import Tool
from toolcaller.envelope import Options
from toolcaller.errors import (
    ExecutionError,
    InvalidParamsError,
    ToolCallError,
    ToolNotFoundError,
    ToolTimeoutError,
)
from toolcaller.request import describe_kind

__all__ = ["Arrival", "Preparer"]


@dataclass(frozen=True, slots=True)
class Arrival:
    """When and how a request arrived: what is known of a call before any check."""

    call_id: str
    arrived: float
    """Wall-clock time (`time.time()`)."""
    started: float
    """`clock.now()` reading."""
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class _Checks:
    validator: ParamsValidator
    secret_keys: frozenset[str]
    options: Options | None
    """The options of a call that gives none (`None`: the tool's defaults are invalid)."""


class Preparer:
    """Checks calls against a registry's tools."""

    def __init__(self, registry: Registry, clock: Clock) -> None:
        self.registry = registry
        self.clock = clock
        self._checks: weakref.WeakKeyDictionary[Tool, _Checks] = weakref.WeakKeyDictionary()

    def prepare(self, arrival: Arrival, name: Any, params: Any, options: Any,
                option_kwargs: dict[str, Any]) -> CallContext:
        """Check a call before any attempt; raise the error that ends it."""
        if not isinstance(name, str) or not name.strip():
            raise InvalidParamsError(f"toolName must be a non-empty string, got "
                                     f"{describe_kind(name)}")
        if params is None:
            params = {}
        elif not isinstance(params, dict):
            raise InvalidParamsError(f"params must be an object, got {describe_kind(params)}")
        tool = self.find(name)
        if tool.problem is not None:
            raise ExecutionError(f"tool {name!r} cannot be called: {tool.problem}",
                                 permanent=True)
        checks = self._checks_of(tool)
        try:
            opts = (checks.options if options is None and not option_kwargs and checks.options
                    else options_for(tool.options, options, option_kwargs))
            redacted = redact_params(params, checks.secret_keys)  # also refuses NaN and Infinity
            _validate(name, checks.validator, params)
            converted = as_tool_params(params, tool.params_schema, tool.params_model)
        except InvalidParamsError as error:
            error.secret_keys = checks.secret_keys  # type: ignore[attr-defined]
            raise
        return CallContext(arrival.call_id, tool, converted, opts, self.clock, arrival.arrived,
                           arrival.started, redacted, checks.secret_keys,
                           collect_secrets(params, checks.secret_keys),
                           tool_call_id=arrival.tool_call_id)

    async def aprepare(self, arrival: Arrival, name: Any, params: Any, options: Any,
                       option_kwargs: dict[str, Any]) -> CallContext:
        """Check a call from async code; a tool that must be listed first is, in a thread.

        Listing may start an MCP server or read a big OpenAPI document: when the call's
        deadline comes first the call ends TIMEOUT saying what is still going on, and the
        listing goes on in its thread, so that a later call finds the tool.
        """
        if not self.registry.needs_listing(name):
            return self.prepare(arrival, name, params, options, option_kwargs)
        listing = asyncio.ensure_future(asyncio.to_thread(
            self.prepare, arrival, name, params, options, option_kwargs))
        deadline_s = self.deadline_s(name, options, option_kwargs)
        room_s = arrival.started + deadline_s - self.clock.now()
        done, _ = await asyncio.wait((listing,), timeout=max(room_s, 0.0))
        if listing in done:
            return listing.result()
        listing.add_done_callback(_read_outcome)
        waiting = self.registry.waiting_for(name) or "its tools are still being listed"
        raise ToolTimeoutError(f"tool {name!r} is not known yet: {waiting} (the call's "
                               f"deadline is {deadline_s * 1000:g} ms)")

    def find(self, name: str) -> Tool:
        """Return the tool named `name` (listing a source if needed), or raise TOOL_NOT_FOUND."""
        try:
            tool = self.registry.get(name)
        except ToolCallError:
            raise
        except Exception as exc:
            raise ExecutionError(f"cannot list the tools for {name!r}: {exc}",
                                 permanent=True) from exc
        if tool is None:
            close = self.registry.suggest(name)
            tip = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise ToolNotFoundError(f"no tool named {name!r}{tip}",
                                    details={"suggestions": close} if close else None)
        return tool

    def deadline_s(self, name: Any, options: Any, option_kwargs: dict[str, Any]) -> float:
        """The deadline a call will have, in seconds, found without listing any source."""
        defaults = self.registry.default_options(name) if isinstance(name, str) else {}
        try:
            opts = options_for(defaults, options, option_kwargs)
        except ToolCallError:
            opts = Options()
        return opts.deadline / 1000.0

    def _checks_of(self, tool: Tool) -> _Checks:
        checks = self._checks.get(tool)
        if checks is None:
            try:
                defaults: Options | None = options_for(tool.options, None, {})
            except InvalidParamsError:
                defaults = None  # each call reports the tool's bad default options
            checks = self._checks[tool] = _Checks(ParamsValidator(tool.params_schema),
                                                  secret_names_in_schema(tool.params_schema),
                                                  defaults)
        return checks


def _read_outcome(future: asyncio.Future[Any]) -> None:
    """Read an abandoned listing's outcome, so that asyncio does not report it as unread."""
    if not future.cancelled():
        future.exception()


def _validate(name: str, validator: ParamsValidator, params: Any) -> None:
    """Raise `InvalidParamsError` listing every violation, before any attempt (rule 3)."""
    violations = validator.violations(params)
    if violations:
        first = violations[0]
        where = f" at {first['pointer']}" if first["pointer"] else ""
        raise InvalidParamsError(
            f"params of {name!r} are invalid{where}: {first['message']}"
            + (f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""),
            details={"violations": violations},
        )
