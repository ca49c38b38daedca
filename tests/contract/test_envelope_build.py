"""Envelopes built without validation (`call_envelope`, `attempt_info`) are validated ones."""

from __future__ import annotations

import copy
import json
import pickle
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from tests.helpers import check_envelope, make_tool
from toolcaller import Envelope, ToolCaller
from toolcaller.envelope import AttemptInfo, CallMetadata, ErrorInfo, attempt_info, call_envelope
from toolcaller.errors import ErrorCode

STAMP = datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)  # whole milliseconds: JSON keeps it
TRAIL = [(1, ErrorCode.TIMEOUT, 30.5, 0.0), (2, ErrorCode.EXECUTION_ERROR, 2.25, 10.0),
         (3, None, 1.125, 20.0)]
FAILURE = ErrorInfo(code=ErrorCode.RETRY_EXHAUSTED, message="failed 3 times",
                    details={"last": {"code": "TIMEOUT"}, "waits": [10.0, 20.0]}, retryable=True)


def built(success: bool = True, error: ErrorInfo | None = None,
          trail: list[tuple[int, ErrorCode | None, float, float]] | None = None,
          **metadata: Any) -> Envelope:
    """An envelope made the engine's way, without validation."""
    entries = TRAIL if trail is None else trail
    values: dict[str, Any] = {"duration": 42.5, "attempts": len(entries), "tool_name": "t",
                              "timestamp": STAMP, "call_id": "c-1", **metadata}
    return call_envelope(success=success, result={"sum": [1, 2.5]} if success else None,
                         error=error, trail=[attempt_info(*entry) for entry in entries],
                         **values)


def validated(success: bool = True, error: ErrorInfo | None = None,
              trail: list[tuple[int, ErrorCode | None, float, float]] | None = None,
              **metadata: Any) -> Envelope:
    """The same envelope made with normal validation, camelCase keys and all."""
    entries = TRAIL if trail is None else trail
    values: dict[str, Any] = {"duration": 42.5, "attempts": len(entries), "toolName": "t",
                              "timestamp": STAMP, "callId": "c-1", **metadata}
    steps = [AttemptInfo(attempt=a, code=c, duration=d, wait=w) for a, c, d, w in entries]
    meta = CallMetadata(**values, trail=steps)
    if error is None:
        return Envelope(success=success, result={"sum": [1, 2.5]}, metadata=meta)
    return Envelope(success=success, result=None, error=error, metadata=meta)


PAIRS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "success": ({}, {}),
    "failure": ({"success": False, "error": FAILURE}, {"success": False, "error": FAILURE}),
    "not-started": ({"success": False, "error": FAILURE, "trail": [], "tool_name": None,
                     "call_id": None},
                    {"success": False, "error": FAILURE, "trail": [], "toolName": None,
                     "callId": None}),
}


@pytest.fixture(params=list(PAIRS))
def pair(request: pytest.FixtureRequest) -> tuple[Envelope, Envelope]:
    """A built envelope and its validated twin: success, failure, and no attempt started."""
    built_kwargs, validated_kwargs = PAIRS[request.param]
    return built(**built_kwargs), validated(**validated_kwargs)


class TestSameAsValidated:
    def test_equal(self, pair: tuple[Envelope, Envelope]) -> None:
        """The built envelope equals the validated one, both ways, metadata and trail too."""
        made, expected = pair
        assert made == expected
        assert expected == made
        assert made.metadata == expected.metadata
        assert made.metadata.trail == expected.metadata.trail  # type: ignore[union-attr]

    def test_same_serializations(self, pair: tuple[Envelope, Envelope]) -> None:
        """to_dict, to_json, model_dump_json(by_alias=True) and model_dump are identical."""
        made, expected = pair
        assert made.to_dict() == expected.to_dict()
        assert made.to_json() == expected.to_json()
        assert made.to_json(indent=2) == expected.to_json(indent=2)
        assert made.model_dump_json(by_alias=True) == expected.model_dump_json(by_alias=True)
        assert made.model_dump() == expected.model_dump()
        check_envelope(made.to_dict())

    def test_same_repr(self, pair: tuple[Envelope, Envelope]) -> None:
        """repr and str are identical, field order included."""
        made, expected = pair
        assert repr(made) == repr(expected)
        assert str(made) == str(expected)

    def test_code_property(self, pair: tuple[Envelope, Envelope]) -> None:
        """`.code` reads the same on both."""
        made, expected = pair
        assert made.code == expected.code

    @pytest.mark.parametrize("code", list(ErrorCode), ids=[c.value for c in ErrorCode])
    def test_every_code(self, code: ErrorCode) -> None:
        """Each error code, in the error and the trail, builds as it validates."""
        error = ErrorInfo(code=code, message=f"{code} happened", retryable=False)
        trail: list[tuple[int, ErrorCode | None, float, float]] = [(1, code, 3.0, 0.0)]
        made = built(success=False, error=error, trail=trail)
        assert made == validated(success=False, error=error, trail=trail)
        assert made.to_dict()["metadata"]["trail"][0]["code"] == code.value
        assert made.code is code

    def test_attempt_info_alone(self) -> None:
        """attempt_info equals AttemptInfo validated, and dumps the same JSON."""
        made = attempt_info(2, ErrorCode.TIMEOUT, 12.5, 100.0)
        expected = AttemptInfo(attempt=2, code=ErrorCode.TIMEOUT, duration=12.5, wait=100.0)
        assert made == expected
        assert made.model_dump_json(by_alias=True) == expected.model_dump_json(by_alias=True)
        assert repr(made) == repr(expected)


class TestCopies:
    def test_copy_deepcopy_pickle(self, pair: tuple[Envelope, Envelope]) -> None:
        """copy.copy, copy.deepcopy and a pickle round trip give equal envelopes."""
        made, expected = pair
        for twin in (copy.copy(made), copy.deepcopy(made), pickle.loads(pickle.dumps(made))):
            assert twin == made == expected
            assert twin.to_json() == made.to_json()
            assert twin.model_fields_set == made.model_fields_set

    def test_model_copy_keeps_other_envelopes_fields_set(self) -> None:
        """model_copy(update=...) of one built envelope leaves other envelopes' fields set alone."""
        first, other = built(), built(success=False, error=FAILURE)
        before = set(other.model_fields_set)
        changed = first.model_copy(update={"result": 99, "note": "not a field"})
        deep = first.model_copy(update={"result": 7, "extra": 1}, deep=True)
        meta = first.metadata.model_copy(update={"attempts": 9, "spare": 1})
        assert (changed.result, deep.result, meta.attempts) == (99, 7, 9)  # type: ignore[union-attr]
        assert first.result == {"sum": [1, 2.5]}
        assert other.model_fields_set == before == set(Envelope.model_fields)
        assert other.metadata.model_fields_set == set(CallMetadata.model_fields)
        assert built().model_fields_set == set(Envelope.model_fields)
        assert attempt_info(1, None, 1.0, 0.0).model_fields_set == set(AttemptInfo.model_fields)

    def test_validate_the_dict(self, pair: tuple[Envelope, Envelope]) -> None:
        """model_validate(built.to_dict()) and model_validate_json(built.to_json()) equal it."""
        made, _ = pair
        assert Envelope.model_validate(made.to_dict()) == made
        assert Envelope.model_validate_json(made.to_json()) == made


class TestFrozen:
    def test_assigning_raises(self) -> None:
        """A built envelope, its metadata and its trail entries are frozen like validated ones."""
        made = built()
        with pytest.raises(ValidationError, match="frozen"):
            made.success = False
        with pytest.raises(ValidationError, match="frozen"):
            made.metadata.duration = 0.0
        with pytest.raises(ValidationError, match="frozen"):
            made.metadata.trail[0].wait = 1.0  # type: ignore[union-attr]
        assert made == validated()


class TestEndToEnd:
    @pytest.mark.parametrize(
        ("name", "success"), [("add", True), ("fails", False)], ids=["success", "failure"],
    )
    def test_real_call_has_the_contract_keys(self, name: str, success: bool) -> None:
        """A real call's envelope dict has success, result and the metadata contract keys."""
        def fails(a: int, b: int) -> int:
            raise RuntimeError(f"cannot add {a} and {b}")

        caller = ToolCaller(tools=[make_tool(lambda a, b: a + b, "add"),
                                   make_tool(fails, "fails")])
        envelope = caller.call(name, {"a": 1, "b": 2}, {"retries": 1, "retryDelay": 0})
        data = check_envelope(envelope.to_dict())
        assert {"success", "result", "metadata"} <= set(data)
        assert {"duration", "attempts", "toolName", "timestamp", "callId", "trail"} <= set(
            data["metadata"])
        assert data["success"] is success
        assert data["result"] == (3 if success else None)
        assert data["metadata"]["toolName"] == name
        assert data["metadata"]["attempts"] == len(data["metadata"]["trail"]) == (
            1 if success else 2)
        json.loads(envelope.to_json())

    def test_real_call_equals_its_validated_twin(self) -> None:
        """The engine's envelope equals one validated from its own field values."""
        caller = ToolCaller(tools=[make_tool(lambda a, b: a + b, "add")])
        envelope = caller.call("add", {"a": 1, "b": 2})
        meta = envelope.metadata
        assert isinstance(meta, CallMetadata)
        twin = Envelope(success=envelope.success, result=envelope.result, metadata=CallMetadata(
            duration=meta.duration, attempts=meta.attempts, toolName=meta.tool_name,
            timestamp=meta.timestamp, callId=meta.call_id,
            trail=[AttemptInfo.model_validate(dict(a)) for a in meta.trail]))
        assert envelope == twin
        assert envelope.to_json() == twin.to_json()
        assert repr(envelope) == repr(twin)
