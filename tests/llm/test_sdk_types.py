"""With the providers' own SDK types, offline: recorded responses in, replies the SDKs accept.

Each provider's recorded response (tests/llm/fixtures) holds five calls: one succeeds, one has
arguments that are not JSON, one names an unknown tool, one times out, one raises with a
secret in its message. Exactly five replies come back, with the right ids and error flags,
and no secret; the replies validate against the SDKs' request-param types (strictly, extra
keys refused, lazy iterables walked).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.llm.conftest import CODES, IDS, SECRET, TOKEN, recorded


def forced(value: Any) -> Any:
    """pydantic validates `Iterable[...]` fields lazily: walk them so each element is checked."""
    if isinstance(value, dict):
        return {k: forced(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [forced(v) for v in value]
    if hasattr(value, "__next__"):
        return [forced(v) for v in value]
    return value


def strict_adapter(typed_dict: Any) -> Any:
    """A TypeAdapter that refuses extra keys (a subclass: the SDK class stays untouched)."""
    from pydantic import ConfigDict, TypeAdapter, with_config

    strict = with_config(ConfigDict(extra="forbid"))(
        type(f"Strict{typed_dict.__name__}", (typed_dict,), {"__total__": False}))
    return TypeAdapter(strict)


def check(adapter: Any, value: Any) -> None:
    forced(adapter.validate_python(value, strict=True))


def openai_chat_response() -> Any:
    chat = pytest.importorskip("openai.types.chat")
    return chat.ChatCompletion.model_validate(recorded("openai-chat"))


def openai_responses_response() -> Any:
    responses = pytest.importorskip("openai.types.responses")
    return responses.Response.model_validate(recorded("openai-responses"))


def anthropic_response() -> Any:
    types = pytest.importorskip("anthropic.types")
    # As the SDK's client builds responses (construct_type, no validation): a tool_use input
    # left as text (a stream accumulator's, a proxy's) stays text.
    return types.Message.construct(**recorded("anthropic"))


def gemini_response() -> Any:
    types = pytest.importorskip("google.genai.types")
    data = recorded("gemini")
    parts = data["candidates"][0]["content"]["parts"]
    text = parts[1]["functionCall"].pop("args")  # genai's model takes only dict args ...
    response = types.GenerateContentResponse.model_validate(data)
    response.candidates[0].content.parts[1].function_call.args = text  # ... but holds any
    return response


def no_secret(messages: list[dict[str, Any]]) -> None:
    text = json.dumps(messages)
    assert SECRET not in text
    assert TOKEN not in text
    assert "***" in text


def check_history(caller: Any, ids: list[str]) -> None:
    rows = {r.tool_call_id: r for r in caller.history.records()}
    assert sorted(rows) == sorted(ids)
    assert [rows[i].code for i in ids] == CODES
    assert SECRET not in json.dumps([r.to_dict() for r in caller.history.records()])


class TestOpenAIChat:
    async def test_five_calls_five_tool_messages(self, caller: Any) -> None:
        """One `role: tool` message per call, in order, errors marked, accepted by the SDK."""
        chat = pytest.importorskip("openai.types.chat")
        replies = await caller.arun_tool_calls(openai_chat_response())
        assert replies.provider == "openai-chat"
        assert [m["tool_call_id"] for m in replies.messages] == IDS["openai-chat"]
        assert [e.code for e in replies.envelopes] == CODES
        flagged = [m["content"].startswith("Error: ") for m in replies.messages]
        assert flagged == [False, True, True, True, True]
        assert json.loads(replies.messages[0]["content"]) == {
            "city": "Paris", "temperature": 21, "unit": "c"}
        assert replies.messages[2]["content"].startswith("Error: TOOL_NOT_FOUND: ")
        assert "weather_current" in replies.messages[2]["content"]  # the model's names
        no_secret(replies.messages)
        adapter = strict_adapter(chat.ChatCompletionToolMessageParam)
        for message in replies.messages:
            check(adapter, message)
        from pydantic import TypeAdapter

        check(TypeAdapter(list[chat.ChatCompletionMessageParam]), replies.messages)
        check_history(caller, IDS["openai-chat"])


class TestOpenAIResponses:
    async def test_five_calls_five_function_call_outputs(self, caller: Any) -> None:
        """One `function_call_output` per call (the reasoning item is left alone)."""
        pytest.importorskip("openai.types.responses")
        from openai.types.responses import ResponseInputParam
        from openai.types.responses.response_input_item_param import FunctionCallOutput
        from pydantic import TypeAdapter

        replies = await caller.arun_tool_calls(openai_responses_response())
        assert replies.provider == "openai-responses"
        assert [m["call_id"] for m in replies.messages] == IDS["openai-responses"]
        assert {m["type"] for m in replies.messages} == {"function_call_output"}
        assert [e.code for e in replies.envelopes] == CODES
        assert [m["output"].startswith("Error: ") for m in replies.messages] == [
            False, True, True, True, True]
        no_secret(replies.messages)
        adapter = strict_adapter(FunctionCallOutput)
        for message in replies.messages:
            check(adapter, message)
            assert message["call_id"]  # Optional in this SDK: checked here
        check(TypeAdapter(ResponseInputParam), replies.messages)
        check_history(caller, IDS["openai-responses"])


class TestAnthropic:
    async def test_five_calls_one_user_message_of_tool_results(self, caller: Any) -> None:
        """ONE user message holds a tool_result per call; failures say `is_error: true`."""
        pytest.importorskip("anthropic.types")
        from anthropic.types import MessageParam, ToolResultBlockParam
        from pydantic import TypeAdapter

        replies = await caller.arun_tool_calls(anthropic_response())
        assert replies.provider == "anthropic"
        (message,) = replies.messages
        assert message["role"] == "user"
        blocks = message["content"]
        assert [b["tool_use_id"] for b in blocks] == IDS["anthropic"]
        assert [b["is_error"] for b in blocks] == [False, True, True, True, True]
        assert [e.code for e in replies.envelopes] == CODES
        assert blocks[1]["content"].startswith("INVALID_PARAMS: the arguments are not valid JSON")
        no_secret(replies.messages)
        adapter = strict_adapter(ToolResultBlockParam)
        for block in blocks:
            check(adapter, block)
        check(TypeAdapter(MessageParam), message)
        check_history(caller, IDS["anthropic"])


class TestGemini:
    async def test_five_calls_one_content_of_function_responses(self, caller: Any) -> None:
        """ONE user content holds a functionResponse per call: `{output}` or `{error}`."""
        types = pytest.importorskip("google.genai.types")
        response = gemini_response()
        replies = await caller.arun_tool_calls(response)
        assert replies.provider == "gemini"
        (message,) = replies.messages
        parts = [p["functionResponse"] for p in message["parts"]]
        assert [p["id"] for p in parts] == IDS["gemini"]
        assert [p["name"] for p in parts] == [
            "weather_current", "weather_current", "weather_forecast", "reports_slow",
            "vault_open"]
        assert [next(iter(p["response"])) for p in parts] == [
            "output", "error", "error", "error", "error"]
        assert parts[0]["response"]["output"] == {"city": "Paris", "temperature": 21,
                                                  "unit": "c"}
        assert [e.code for e in replies.envelopes] == CODES
        no_secret(replies.messages)
        content = types.Content.model_validate(message)  # genai forbids extra keys itself
        assert content.role == "user"
        assert [p.function_response.id for p in content.parts] == IDS["gemini"]
        # the model's own turn is untouched: its thought signature is still there
        assert response.candidates[0].content.parts[0].thought_signature
        check_history(caller, IDS["gemini"])


@pytest.mark.parametrize("provider", ["openai-chat", "openai-responses", "anthropic", "gemini"])
async def test_the_json_gives_the_same_replies_as_the_sdk_object(caller: Any,
                                                                 provider: str) -> None:
    """A response's JSON (a dict) and the SDK's object give the same reply messages."""
    builders = {"openai-chat": openai_chat_response,
                "openai-responses": openai_responses_response,
                "anthropic": anthropic_response, "gemini": gemini_response}
    from_object = await caller.arun_tool_calls(builders[provider]())
    from_json = await caller.arun_tool_calls(recorded(provider))
    assert _shape(from_json.messages) == _shape(from_object.messages)


def _shape(messages: list[dict[str, Any]]) -> str:
    text = json.dumps(messages, sort_keys=True)
    for word in ("ms", "attempt"):  # timings differ between runs; the shape does not
        text = text.replace(word, "")
    import re

    return re.sub(r"\d+(\.\d+)?", "N", text)
