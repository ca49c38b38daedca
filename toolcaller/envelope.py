"""The JSON contract as pydantic models: request options, envelopes, errors and metadata.

camelCase exists only here, as aliases; Python code uses snake_case attributes.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, model_serializer

from toolcaller.errors import ErrorCode

__all__ = [
    "Attempt",
    "CallMetadata",
    "DiscoverOptions",
    "DiscoveryMetadata",
    "Envelope",
    "ErrorInfo",
    "Options",
    "ToolInfo",
    "format_timestamp",
    "now_utc",
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


class Attempt(_Model):
    """One attempt of a call: how it ended, how long it took, and the wait before it.

    The one record of an attempt: the envelope's `metadata.trail`, a failure's
    `error.details.attempts` and the history all hold these.
    """

    attempt: int = Field(description="1 for the first attempt.")
    code: ErrorCode | None = Field(None, description="The attempt's error code; null on success.")
    message: str | None = Field(None, description="The attempt's error message (secrets masked).")
    retryable: bool | None = Field(None, description="Whether the attempt's failure is retried.")
    duration: float = Field(description="Milliseconds the attempt took.")
    wait: float = Field(0.0, description="Milliseconds waited before the attempt started.")
    started: float = Field(0.0, description="Milliseconds after the request's arrival.")
    notes: list[dict[str, Any]] = Field(
        default_factory=list,
        description="What the tool reported during the attempt: progress and log messages "
                    "(`kind`, `at` in ms after arrival, `message`, `progress`, `total`).",
    )

    @model_serializer(mode="wrap")
    def _drop_empty_notes(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not data.get("notes"):
            data.pop("notes", None)
        return data


class CallMetadata(_Model):
    """Metadata of an execute envelope."""

    duration: float = Field(description="Milliseconds from the request's arrival to the envelope.")
    attempts: int = Field(description="Attempts actually started.")
    tool_name: str | None = Field(alias="toolName")
    timestamp: datetime = Field(description="When the request arrived (UTC).")
    call_id: str | None = Field(None, alias="callId")
    trail: list[Attempt] = Field(default_factory=list)

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


def now_utc(epoch_s: float) -> datetime:
    """Return the UTC datetime of a `time.time()` reading."""
    return datetime.fromtimestamp(epoch_s, UTC)
