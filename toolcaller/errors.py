"""The error vocabulary: the six contract codes and the exceptions that carry them.

ToolCallError                 (ends up in an envelope; `code`, `retryable`, `details`)
├── ToolTimeoutError          TIMEOUT          retryable
├── RetryExhaustedError       RETRY_EXHAUSTED
├── ToolNotFoundError         TOOL_NOT_FOUND
├── InvalidParamsError        INVALID_PARAMS
├── ExecutionError            EXECUTION_ERROR  retryable unless permanent=True
└── ParseError                PARSE_ERROR

UsageError                    (a developer's mistake at definition time: raised, never enveloped)
└── RegistryError             a registry file that cannot be used
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

__all__ = [
    "ErrorCode",
    "ExecutionError",
    "InvalidParamsError",
    "ParseError",
    "RegistryError",
    "RetryExhaustedError",
    "ToolCallError",
    "ToolNotFoundError",
    "ToolTimeoutError",
    "UsageError",
]


class ErrorCode(StrEnum):
    """The six standard error codes of the contract."""

    TIMEOUT = "TIMEOUT"
    RETRY_EXHAUSTED = "RETRY_EXHAUSTED"
    TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
    INVALID_PARAMS = "INVALID_PARAMS"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    PARSE_ERROR = "PARSE_ERROR"


class ToolCallError(Exception):
    """Base of every failure that ends up in an envelope."""

    code: ClassVar[ErrorCode]
    retryable: bool = False

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class ToolTimeoutError(ToolCallError):
    """The attempt did not finish within its timeout (or the call's deadline cut it)."""

    code = ErrorCode.TIMEOUT
    retryable = True

    def __init__(self, message: str, *, details: Any = None, straggler: Any = None) -> None:
        super().__init__(message, details=details)
        self.straggler = straggler
        """Something with `wait(timeout_s) -> bool` when the attempt goes on running
        (a sync tool in a thread cannot be stopped); `None` when it was really stopped."""


class RetryExhaustedError(ToolCallError):
    """Several attempts were made and the last one failed."""

    code = ErrorCode.RETRY_EXHAUSTED


class ToolNotFoundError(ToolCallError):
    """No tool has the requested name."""

    code = ErrorCode.TOOL_NOT_FOUND


class InvalidParamsError(ToolCallError):
    """The request, its options or its params are not valid."""

    code = ErrorCode.INVALID_PARAMS


class ExecutionError(ToolCallError):
    """The tool failed while running; retried unless `permanent=True`.

    A tool raises `ExecutionError("...", permanent=True)` for a failure that another attempt
    cannot mend (an HTTP 404, a missing file). `retry_after_s` lets it ask for a longer wait
    before the next attempt (an HTTP `Retry-After`).
    """

    code = ErrorCode.EXECUTION_ERROR

    def __init__(
        self,
        message: str,
        *,
        details: Any = None,
        permanent: bool = False,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message, details=details)
        self.retryable = not permanent
        self.retry_after_s = retry_after_s


class ParseError(ToolCallError):
    """The tool's output could not be turned into the requested format."""

    code = ErrorCode.PARSE_ERROR


class UsageError(Exception):
    """A developer's mistake when defining tools or building a caller (raised, not enveloped)."""


class RegistryError(UsageError):
    """A registry file that cannot be used; the message names the file, the JSON pointer and why."""

    def __init__(self, message: str, *, source: str = "", pointer: str = "") -> None:
        super().__init__(message)
        self.source = source
        self.pointer = pointer
