"""Tools and recorded responses shared by the model-side tests."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from toolcaller import Tool, ToolCaller, tool

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SECRET = "hunter2-correct-horse"
TOKEN = "sk-proj-0000fake0000fake0000fake"
FILES = {
    "openai-chat": "openai_chat_five_calls.json",
    "openai-responses": "openai_responses_five_calls.json",
    "anthropic": "anthropic_five_tool_use.json",
    "gemini": "gemini_five_function_calls.json",
}
IDS = {
    "openai-chat": ["call_weather_1", "call_weather_2", "call_forecast_3", "call_report_4",
                    "call_vault_5"],
    "anthropic": ["toolu_01weather", "toolu_02weather", "toolu_03forecast", "toolu_04report",
                  "toolu_05vault"],
    "gemini": ["fc-weather-1", "fc-weather-2", "fc-forecast-3", "fc-report-4", "fc-vault-5"],
}
IDS["openai-responses"] = IDS["openai-chat"]
CODES = [None, "INVALID_PARAMS", "TOOL_NOT_FOUND", "TIMEOUT", "EXECUTION_ERROR"]


def recorded(provider: str) -> dict[str, Any]:
    """The recorded five-call response of a provider, as its API sends it (JSON)."""
    return json.loads((FIXTURES / FILES[provider]).read_text(encoding="utf-8"))


def weather_current(city: str, unit: str = "c") -> dict[str, Any]:
    """The weather now in a city."""
    return {"city": city, "temperature": 21, "unit": unit}


async def reports_slow() -> None:
    """A report that takes far longer than its timeout."""
    await asyncio.sleep(5)


def vault_open(api_key: str) -> None:
    """Open the vault with a key (and fail, naming it: the engine masks it)."""
    raise RuntimeError(f"vault refused key {api_key}; the backup token {TOKEN} expired")


def five_tools() -> list[Tool]:
    """The tools the recorded responses call (`weather_forecast` is not one of them)."""
    return [tool(weather_current, name="weather.current"),
            tool(reports_slow, name="reports.slow", options={"timeout": 100, "retries": 0}),
            tool(vault_open, name="vault.open", options={"retries": 0})]


@pytest.fixture
def caller() -> Any:
    with ToolCaller(five_tools()) as made:
        yield made
