"""Property tests: any JSON value, and any request-shaped value, gets a well-formed envelope."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import FakeClock, check_envelope, make_tool, wait_until
from toolcaller import ExecutionError, ToolCaller
from toolcaller.adapters.base import TextOutput
from toolcaller.envelope import Options

FUZZ = settings(deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([0, -1, 2**63, -(2**63) - 1, 10**400])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)

OPTION_KEYS = sorted({f.alias or n for n, f in Options.model_fields.items()}
                     | {"retry_delay", "timout", "filter"})
OPTION_VALUES = (
    SCALARS
    | st.integers(min_value=-2, max_value=5)
    | st.floats(min_value=0, max_value=30)
    | st.sampled_from(["json", "raw", "thread", "process", "xml"])
)


@functools.cache
def fuzz_caller() -> ToolCaller:
    """A caller with only fast tools, a fake clock and fake sleeps (no real waiting)."""
    clock = FakeClock()

    def add(a: float, b: float) -> float:
        return a + b

    def echo(text: str) -> str:
        return text

    def open_(**params: Any) -> Any:
        return params

    def fail(**params: Any) -> None:
        raise RuntimeError(f"failed with {params!r}"[:200])

    def permanent(**params: Any) -> None:
        raise ExecutionError("gone", permanent=True)

    def bad_output(**params: Any) -> TextOutput:
        return TextOutput("<not json>")

    def login(user: str, password: str) -> None:
        raise PermissionError(f"{user} / {password}")

    async def async_echo(**params: Any) -> Any:
        return params

    number = {"type": "number"}
    tools = [
        make_tool(add, "math.add", {"type": "object", "properties": {"a": number, "b": number},
                                    "required": ["a", "b"], "additionalProperties": False}),
        make_tool(echo, "text.echo", {"type": "object", "properties": {
            "text": {"type": "string"}}, "required": ["text"]}),
        make_tool(open_, "open"),
        make_tool(fail, "fail"),
        make_tool(permanent, "perm"),
        make_tool(bad_output, "bad.output"),
        make_tool(login, "login", {"type": "object", "required": ["user", "password"],
                                   "properties": {"user": {"type": "string"},
                                                  "password": {"type": "string",
                                                               "writeOnly": True}}}),
        make_tool(async_echo, "async.echo", idempotent=True),
    ]
    return ToolCaller(tools=tools, clock=clock, max_history=1000)


TOOL_NAMES = ["math.add", "text.echo", "open", "fail", "perm", "bad.output", "login",
              "async.echo", "nope"]

REQUESTS = st.fixed_dictionaries(
    {},
    optional={
        "toolName": st.sampled_from(TOOL_NAMES) | st.text(max_size=12) | SCALARS,
        "params": st.dictionaries(
            st.sampled_from(["a", "b", "text", "user", "password", "x"]) | st.text(max_size=6),
            JSON, max_size=3) | SCALARS,
        "options": st.none()
        | st.dictionaries(st.sampled_from(OPTION_KEYS) | st.text(max_size=6), OPTION_VALUES,
                          max_size=3)
        | SCALARS,
        "action": st.sampled_from(["discover", "call", "execute", "explode"]) | SCALARS,
        "id": st.integers() | st.text(max_size=5),
        "extra": SCALARS,
    },
)
DISCOVER = st.fixed_dictionaries(
    {"action": st.just("discover")},
    optional={"options": st.none() | st.dictionaries(
        st.sampled_from(["filter", "limit"]), st.text(max_size=20) | JSON, max_size=2) | JSON},
)


class TestHandleNeverRaises:
    @settings(FUZZ, max_examples=500)
    @given(request=JSON)
    def test_any_json_value(self, request: Any) -> None:
        """Any JSON value, NaN and huge numbers included, gets a well-formed envelope."""
        check_envelope(fuzz_caller().handle(request))

    @settings(FUZZ, max_examples=400)
    @given(request=st.dictionaries(st.text(max_size=10), JSON, max_size=5))
    def test_any_json_object(self, request: dict[str, Any]) -> None:
        """Any JSON object (unknown keys and all) gets a well-formed envelope."""
        check_envelope(fuzz_caller().handle(request))

    @settings(FUZZ, max_examples=500)
    @given(request=REQUESTS)
    def test_request_shaped_values(self, request: dict[str, Any]) -> None:
        """Requests with fuzzed toolName, params and options get well-formed envelopes."""
        envelope = check_envelope(fuzz_caller().handle(request))
        if envelope["success"] and "total" not in envelope["metadata"]:
            assert envelope["metadata"]["attempts"] >= 1

    @settings(FUZZ, max_examples=500)
    @given(name=st.sampled_from(TOOL_NAMES[:-1]), params=st.dictionaries(
        st.sampled_from(["a", "b", "text", "user", "password"]),
        st.integers(-5, 5) | st.floats(-1e6, 1e6) | st.text(max_size=8), max_size=4),
        options=st.dictionaries(st.sampled_from(OPTION_KEYS), OPTION_VALUES, max_size=3))
    def test_real_tools_with_fuzzed_options(self, name: str, params: dict[str, Any],
                                            options: dict[str, Any]) -> None:
        """Known tools with plausible params and fuzzed options answer with a valid envelope."""
        envelope = check_envelope(fuzz_caller().handle(
            {"toolName": name, "params": params, "options": options}))
        assert envelope["metadata"]["toolName"] == name

    @settings(FUZZ, max_examples=300)
    @given(request=DISCOVER)
    def test_discover_requests(self, request: dict[str, Any]) -> None:
        """Fuzzed discover requests list tools or fail with INVALID_PARAMS, never run a tool."""
        caller = fuzz_caller()
        before = caller.history.total
        envelope = check_envelope(caller.handle(request))
        assert envelope["success"] or envelope["error"]["code"] == "INVALID_PARAMS"
        if envelope["success"]:
            assert caller.history.total == before

    @settings(FUZZ, max_examples=150)
    @given(request=REQUESTS)
    def test_ahandle(self, request: dict[str, Any]) -> None:
        """The async `ahandle` gives well-formed envelopes for the same requests."""
        caller = fuzz_caller()

        async def main() -> dict[str, Any]:
            answer = await caller.ahandle(request)
            pool = caller.adapters["python"].threads  # type: ignore[attr-defined]
            # stragglers must end while this loop lives (see test_execution)
            await asyncio.to_thread(wait_until, lambda: pool.busy == 0)
            return answer

        check_envelope(asyncio.run(main()))
