"""The explorer page in headless Chromium, used as a person would: search, fill, call, cancel."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("playwright", reason="playwright not installed (run .ci/run_browser.sh)")

from playwright.sync_api import expect

from tests.browser.explorer_page import (
    ConsoleLog,
    ExplorerPage,
    assert_showcase_succeeded,
    call_showcase,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

README_SHOT = Path(__file__).resolve().parents[2] / "docs" / "explorer.png"
SLOW_SECONDS = 30  # far beyond the test's waits: only Cancel can end this call in time
CANCEL_WITHIN_MS = 10_000


class TestCatalogue:
    def test_page_lists_the_registry_from_the_environment(self, explorer: ExplorerPage,
                                                          registry_file: Path) -> None:
        """`serve(registry)` reaches the page: it lists the temp registry's tools only."""
        wanted = sorted(t["name"] for t in json.loads(registry_file.read_text())["tools"])
        explorer.expect_rows(wanted)
        explorer.shot("loaded")

    def test_plain_serve_lists_the_embedded_demo(self, demo_explorer: ExplorerPage) -> None:
        """Without a registry, the page lists the embedded demo registry's tools."""
        from toolcaller import ToolCaller

        with ToolCaller() as caller:
            names = sorted(tool["name"] for tool in caller.discover().result["tools"])
        demo_explorer.expect_rows(names)

    def test_typing_a_search_narrows_the_rows(self, explorer: ExplorerPage) -> None:
        """Each keystroke filters: "math" leaves the math tools, "tag:error" the failing ones."""
        explorer.search("math")
        explorer.expect_rows(["math.add", "math.divide"])
        explorer.shot("search-math")
        explorer.search_box.fill("")
        explorer.search("tag:error")
        explorer.expect_rows(["demo.fail", "demo.nan", "demo.not_found", "demo.not_json"])
        expect(explorer.page.get_by_text(re.compile(r"showing 4 of 4 \(filtered from \d+ tools\)"))
               ).to_be_visible()
        explorer.shot("search-tag")


class TestCalls:
    def test_a_filled_form_is_called_and_its_result_shown(self, explorer: ExplorerPage) -> None:
        """Text, number, dropdown and nested fields reach the tool; the envelope is a success."""
        status = call_showcase(explorer)
        assert_showcase_succeeded(explorer, status)
        assert "1 attempt" in status

    def test_a_failing_tool_shows_its_code_and_message(self, explorer: ExplorerPage) -> None:
        """demo.fail with 2 retries: RETRY_EXHAUSTED after 3 attempts, with the tool's message."""
        explorer.select_tool("demo.fail")
        explorer.set_options(retries=2, retryDelay=10)
        explorer.shot("fail-filled")
        explorer.call()
        status = explorer.wait_for_outcome()
        explorer.shot("fail-result")
        assert "RETRY_EXHAUSTED" in status
        assert "3 attempts" in status
        expect(explorer.message).to_contain_text("this tool always fails")

    def test_a_slow_call_can_be_cancelled(self, explorer: ExplorerPage) -> None:
        """A 30 s call with a long timeout shows Cancel, which ends it at once: no envelope, a
        `cancelled` row in the history."""
        explorer.select_tool("demo.slow")
        explorer.fill("seconds", str(SLOW_SECONDS))
        explorer.set_options(timeout=60_000, deadline=60_000, retries=0)
        explorer.call()
        expect(explorer.status).to_contain_text("running")
        expect(explorer.call_button).to_be_disabled()
        explorer.shot("slow-running")
        explorer.cancel_button.click()
        expect(explorer.message).to_contain_text("cancelled by the user",
                                                 timeout=CANCEL_WITHIN_MS)
        expect(explorer.call_button).to_be_enabled()
        expect(explorer.cancel_button).to_be_hidden()
        explorer.shot("slow-cancelled")


class TestHistory:
    def test_history_lists_each_call_with_its_attempts(self, explorer: ExplorerPage) -> None:
        """Three calls, newest first, each with its attempts; the cancelled one is a row too."""
        assert_showcase_succeeded(explorer, call_showcase(explorer))
        explorer.select_tool("demo.fail")
        explorer.set_options(retries=1, retryDelay=10)
        explorer.call()
        assert "RETRY_EXHAUSTED" in explorer.wait_for_outcome()
        explorer.select_tool("demo.slow")
        explorer.set_options(timeout=60_000, deadline=60_000)
        explorer.call()
        expect(explorer.cancel_button).to_be_visible()
        explorer.cancel_button.click()
        expect(explorer.message).to_contain_text("cancelled")

        expect(explorer.history).to_contain_text("3 calls recorded · 1 failed · 1 cancelled")
        calls = explorer.history_calls()
        assert [(c["tool"], c["status"]) for c in calls] == [
            ("demo.slow", "cancelled"), ("demo.fail", "RETRY_EXHAUSTED"),
            ("demo.showcase", "✓ success")]
        assert [c["attempts"] for c in calls[1:]] == ["2", "1"]
        explorer.open_panel("attempts")
        expect(explorer.history.locator("table").nth(1)).to_be_visible()
        attempts = [(a["tool"], a["attempt"], a["outcome"]) for a in explorer.history_attempts()]
        assert attempts == [("demo.fail", "1", "EXECUTION_ERROR"),
                            ("demo.fail", "2", "EXECUTION_ERROR"),
                            ("demo.showcase", "1", "✓ success")]
        assert re.search(r"timing, newest first", explorer.history.inner_text())
        explorer.shot("history")


class TestReadmeScreenshot:
    def test_a_short_session_makes_the_readme_screenshot(self,
                                                         demo_explorer: ExplorerPage) -> None:
        """A failed call, then a success: the page the README shows (docs/explorer.png).

        The shot goes to the artifacts; with TOOLCALLER_UPDATE_SCREENSHOT=1 it also replaces
        docs/explorer.png (not on every run: each shot differs in its timestamps).
        """
        explorer = demo_explorer
        explorer.select_tool("demo.fail")
        explorer.set_options(retries=1, retryDelay=10)
        explorer.call()
        assert "RETRY_EXHAUSTED" in explorer.wait_for_outcome()
        explorer.close_panel("options")  # a shorter page
        explorer.search("math")
        explorer.expect_rows(["math.add", "math.divide"])
        explorer.select_tool("math.add")
        explorer.fill("a *", "2")
        explorer.fill("b *", "3.5")
        explorer.call()
        assert "✓ success" in explorer.wait_for_outcome()
        assert explorer.result_value() == {"sum": 5.5}
        expect(explorer.history).to_contain_text("2 calls recorded · 1 failed")
        shot = explorer.shot("readme")
        assert shot is not None
        if os.environ.get("TOOLCALLER_UPDATE_SCREENSHOT") == "1":
            shutil.copyfile(shot, README_SHOT)


class TestConsoleCheck:
    def test_console_errors_and_uncaught_exceptions_fail_the_check(self,
                                                                   browser: Browser) -> None:
        """The console check sees `console.error` and uncaught exceptions, not warnings."""
        log = ConsoleLog()
        page = browser.new_page()
        try:
            log.follow(page)
            page.set_content("<p>console check</p>")
            with page.expect_console_message(lambda message: message.type == "error"):
                page.evaluate("console.warn('a warning'); console.error('boom')")
            with page.expect_event("pageerror"):
                page.evaluate("setTimeout(() => { throw new Error('uncaught boom') }, 0)")
        finally:
            page.close()
        assert sorted(kind for kind, _, _ in log.errors()) == ["error", "pageerror"]
        with pytest.raises(AssertionError, match="uncaught boom"):
            log.assert_clean()

    def test_a_refused_cdn_stylesheet_is_benign(self) -> None:
        """The one tolerated error: a resource outside 127.0.0.1 that the suite refused."""
        log = ConsoleLog()
        cdn = "https://cdn.jsdelivr.net/npm/@fortawesome/fontawesome-free@%5E5/css/all.min.css"
        log.messages.append(("error", "Failed to load resource: net::ERR_FAILED", cdn))
        log.assert_clean()
        log.messages.append(("error", "Failed to load resource: net::ERR_FAILED",
                             "http://127.0.0.1:8866/voila/static/voila.js"))
        with pytest.raises(AssertionError, match=r"127\.0\.0\.1:8866"):
            log.assert_clean()
