"""Steps the explorer tests share: a pick and a call, each timed into the suite's summary."""

from __future__ import annotations

from tests.browser.conftest import record_timing
from tests.browser.explorer_page import ExplorerPage


def pick(ui: ExplorerPage, name: str) -> None:
    """Search for a tool and pick it; record how long its form took."""
    record_timing("pick tool → form", ui.where, ui.select_tool(name, search=True))


def timed_call(ui: ExplorerPage) -> str:
    """Press Call and wait for the outcome; record how long it took; return the status line."""
    status, seconds = ui.timed_call()
    record_timing("click → result", ui.where, seconds)
    return status
