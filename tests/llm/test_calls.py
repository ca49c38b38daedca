"""Reading responses: the provider from the shape, the calls in order, arguments parsed."""

from __future__ import annotations

from typing import Any

import pytest

from tests.llm.conftest import IDS, recorded
from toolcaller import UsageError
from toolcaller.llm import PROVIDERS, ToolCall, read_tool_calls
from toolcaller.llm.calls import detect_provider

CHAT_MESSAGE = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
GEMINI_CONTENT = {"role": "model", "parts": [{"function_call": {"name": "f", "args": {"x": 1}}}]}


class TestDetection:
    @pytest.mark.parametrize("provider", PROVIDERS)
    def test_each_recorded_response_is_told_from_its_shape(self, provider: str) -> None:
        found, calls = read_tool_calls(recorded(provider))
        assert found == provider
        assert [c.id for c in calls] == IDS[provider]

    @pytest.mark.parametrize(("response", "provider"), [
        (CHAT_MESSAGE, "openai-chat"),
        ({"role": "assistant", "content": "no tools today"}, "openai-chat"),
        (GEMINI_CONTENT, "gemini"),
        ({"type": "message", "role": "assistant", "content": []}, "anthropic"),
        ({"object": "response", "output": []}, "openai-responses"),
    ], ids=["chat message", "chat message without calls", "gemini content", "anthropic empty",
            "responses empty"])
    def test_the_messages_themselves_are_read_too(self, response: Any, provider: str) -> None:
        assert detect_provider(response) == provider

    @pytest.mark.parametrize("response", [{"foo": 1}, [1, 2], "text", None, 42],
                             ids=["dict", "list", "str", "None", "int"])
    def test_anything_else_is_a_usage_error_naming_the_accepted_shapes(self, response: Any,
                                                                        ) -> None:
        with pytest.raises(UsageError, match=r"choices.*output.*tool_use.*functionCall.*provider="):
            read_tool_calls(response)

    def test_provider_forces_the_reading(self) -> None:
        """`provider=` skips detection; the shape must still hold the calls."""
        found, calls = read_tool_calls(CHAT_MESSAGE, provider="openai-chat")
        assert (found, [c.name for c in calls]) == ("openai-chat", ["f"])
        assert read_tool_calls(CHAT_MESSAGE, provider="anthropic") == ("anthropic", [])

    def test_an_unknown_provider_is_a_usage_error(self) -> None:
        with pytest.raises(UsageError, match="provider must be one of openai-chat"):
            read_tool_calls(CHAT_MESSAGE, provider="mistral")


class TestArguments:
    @pytest.mark.parametrize(("text", "arguments", "problem"), [
        ('{"a": 1}', {"a": 1}, None),
        ("", {}, None),
        ("  ", {}, None),
        ('{"a": 1', None, "not valid JSON: Expecting ',' delimiter (line 1, column 8)"),
        ("[1, 2]", None, "must be a JSON object, got an array"),
        ("null", None, "must be a JSON object, got null"),
        ("NaN", None, "must be a JSON object, got a number"),
        ("call me", None, "not valid JSON: Expecting value (line 1, column 1)"),
    ], ids=["object", "empty", "blank", "cut", "array", "null", "nan", "prose"])
    def test_text_arguments_are_parsed_or_say_why_not(self, text: str, arguments: Any,
                                                      problem: str | None) -> None:
        message = {"role": "assistant", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": text}}]}
        (call,) = read_tool_calls(message)[1]
        assert call.arguments == arguments
        assert call.raw_arguments == text
        assert (call.problem is None) == (problem is None)
        if problem:
            assert problem in call.problem

    def test_anthropic_input_that_is_not_an_object_has_a_problem(self) -> None:
        message = {"type": "message", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t", "name": "f", "input": [1]}]}
        (call,) = read_tool_calls(message)[1]
        assert call.problem == "the arguments must be a JSON object, got an array"

    def test_a_gemini_call_without_args_or_id_is_a_call_without_params(self) -> None:
        content = {"role": "model", "parts": [{"text": "hi"}, {"functionCall": {"name": "f"}}]}
        assert read_tool_calls(content)[1] == [ToolCall(None, "f", {})]

    def test_only_function_calls_are_read(self) -> None:
        """Text, reasoning and server-side tool blocks need no reply and are skipped."""
        message = {"type": "message", "role": "assistant", "content": [
            {"type": "text", "text": "hi"},
            {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}},
            {"type": "tool_use", "id": "t", "name": "f", "input": {}}]}
        assert [c.id for c in read_tool_calls(message)[1]] == ["t"]
        assert len(read_tool_calls(recorded("openai-responses"))[1]) == 5  # reasoning skipped

    def test_custom_tool_calls_carry_their_text_as_input(self) -> None:
        chat = {"role": "assistant", "tool_calls": [
            {"id": "c", "type": "custom", "custom": {"name": "sql", "input": "SELECT 1"}}]}
        responses = {"output": [{"type": "custom_tool_call", "call_id": "c", "name": "sql",
                                 "input": "SELECT 1"}]}
        for response in (chat, responses):
            (call,) = read_tool_calls(response)[1]
            assert (call.custom, call.arguments) == (True, {"input": "SELECT 1"})

    def test_no_tool_calls_is_an_empty_list(self) -> None:
        assert read_tool_calls({"role": "assistant", "content": "done"}) == ("openai-chat", [])
