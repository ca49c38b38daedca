"""The JSON contract as pydantic models: request options, envelopes, errors and metadata.

camelCase exists only here, as aliases; Python code uses snake_case attributes.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_serializer, model_serializer

from toolcaller.errors import ErrorCode

__all__ = [
    "AttemptInfo",
    "CallMetadata",
    "DiscoverOptions",
    "DiscoveryMetadata",
    "Envelope",
    "ErrorInfo",
    "Options",
    "ToolInfo",
    "attempt_info",
    "call_envelope",
    "format_timestamp",
]

DEFAULT_TIMEOUT_MS = 5_000
DEFAULT_RETRIES = 3
DEFAULT_RETRY_DELAY_MS = 1_000
DEFAULT_DEADLINE_MS = 5_000
MAX_MS = 86_400_000  # one day: longer waits are mistakes, not plans
MAX_RETRIES = 100


def format_timestamp(moment: datetime) -> str:
    """Format a UTC moment as ISO 8601 with milliseconds and `Z`."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, ser_json_bytes="base64", frozen=True)


class Options(_Model):
    """Execution options of one call; every field has the contract's default."""

    model_config = ConfigDict(
        populate_by_name=True, strict=True, extra="forbid", frozen=True, validate_by_alias=True
    )

    timeout: float = Field(
        DEFAULT_TIMEOUT_MS, gt=0, le=MAX_MS, allow_inf_nan=False,
        description="Time limit of one attempt, in milliseconds.",
    )
    retries: int = Field(
        DEFAULT_RETRIES, ge=0, le=MAX_RETRIES,
        description="Attempts after the first; only TIMEOUT and EXECUTION_ERROR are retried.",
    )
    retry_delay: float = Field(
        DEFAULT_RETRY_DELAY_MS, alias="retryDelay", ge=0, le=MAX_MS, allow_inf_nan=False,
        description="Wait before the first retry, in milliseconds.",
    )
    format: Literal["json", "raw"] = Field(
        "json", description="`json` parses the output; `raw` returns it untouched."
    )
    deadline: float = Field(
        DEFAULT_DEADLINE_MS, gt=0, le=MAX_MS, allow_inf_nan=False,
        description="Budget of the whole call, retries included, in milliseconds.",
    )
    backoff: float = Field(
        1.0, ge=1.0, le=10.0, allow_inf_nan=False,
        description="Each wait is the previous one times this factor.",
    )
    jitter: float = Field(
        0.0, ge=0, le=MAX_MS, allow_inf_nan=False,
        description="A random extra wait of up to this many milliseconds.",
    )
    isolation: Literal["thread", "process"] | None = Field(
        None, description="Run a sync Python tool in a worker thread or a killable child process."
    )


class DiscoverOptions(_Model):
    """Options of a discover request."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    filter: str | None = Field(None, description="Filter on name, description and tags.")


class ToolInfo(_Model):
    """One tool as discovery lists it."""

    name: str
    description: str
    params_schema: dict[str, Any] | bool = Field(alias="paramsSchema")
    metadata: dict[str, Any] = Field(default_factory=dict)


class ErrorInfo(_Model):
    """The `error` object of a failure envelope."""

    code: ErrorCode
    message: str
    details: Any = None
    retryable: bool = False


class AttemptInfo(_Model):
    """One attempt in the metadata trail: its outcome, duration and the wait before it."""

    attempt: int
    code: ErrorCode | None = None
    duration: float = Field(description="Milliseconds the attempt took.")
    wait: float = Field(0.0, description="Milliseconds waited before the attempt started.")


class CallMetadata(_Model):
    """Metadata of an execute envelope."""

    duration: float = Field(description="Milliseconds from the request's arrival to the envelope.")
    attempts: int = Field(description="Attempts actually started.")
    tool_name: str | None = Field(alias="toolName")
    timestamp: datetime = Field(description="When the request arrived (UTC).")
    call_id: str | None = Field(None, alias="callId")
    trail: list[AttemptInfo] = Field(default_factory=list)

    @field_serializer("timestamp")
    def _timestamp(self, moment: datetime) -> str:
        return format_timestamp(moment)


class DiscoveryMetadata(_Model):
    """Metadata of a discovery envelope."""

    duration: float
    total: int = Field(description="Number of tools listed.")
    timestamp: datetime

    @field_serializer("timestamp")
    def _timestamp(self, moment: datetime) -> str:
        return format_timestamp(moment)


class Envelope(_Model):
    """The one answer to any request: success, result, error and metadata."""

    success: bool
    result: Any = None
    error: ErrorInfo | None = None
    metadata: CallMetadata | DiscoveryMetadata

    @model_serializer(mode="wrap")
    def _drop_absent_error(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("error") is None:
            data.pop("error", None)
        return data

    @property
    def code(self) -> ErrorCode | None:
        """The error code, or `None` on success."""
        return self.error.code if self.error is not None else None

    def to_dict(self) -> dict[str, Any]:
        """Return the envelope as JSON-compatible data with the contract's camelCase keys."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self, *, indent: int | None = None) -> str:
        """Return the envelope as strict JSON text."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)


def call_envelope(*, success: bool, result: Any, error: ErrorInfo | None, duration: float,
                  attempts: int, tool_name: str | None, timestamp: datetime,
                  call_id: str | None, trail: list[AttemptInfo]) -> Envelope:
    """Build an execute envelope from values the engine made, without validating them again."""
    metadata = _trusted(CallMetadata, {
        "duration": duration, "attempts": attempts, "tool_name": tool_name,
        "timestamp": timestamp, "call_id": call_id, "trail": trail,
    })
    return _trusted(Envelope, {"success": success, "result": result, "error": error,
                               "metadata": metadata})


def attempt_info(attempt: int, code: ErrorCode | None, duration: float,
                 wait: float) -> AttemptInfo:
    """Build one trail entry from values the engine made, without validating them again."""
    return _trusted(AttemptInfo, {"attempt": attempt, "code": code, "duration": duration,
                                  "wait": wait})


_Built = TypeVar("_Built", bound=BaseModel)
_new = object.__new__
_set = object.__setattr__
_ALL_FIELDS: dict[type[BaseModel], set[str]] = {}


def _trusted(cls: type[_Built], values: dict[str, Any]) -> _Built:
    """What `model_construct` does for a model whose every field is given, in half the time.

    The envelopes of 10,000 calls in flight are alive at once: each model made this way
    shares one set of field names instead of holding its own, so the garbage collector has
    a third fewer objects to walk. `tests/contract/test_envelope_build.py` pins it to validation.
    """
    fields_set = _ALL_FIELDS.get(cls)
    if fields_set is None:
        fields_set = _ALL_FIELDS[cls] = set(cls.model_fields)
    model = _new(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


def now_utc(epoch_s: float) -> datetime:
    """Return the UTC datetime of a `time.time()` reading."""
    return datetime.fromtimestamp(epoch_s, UTC)
