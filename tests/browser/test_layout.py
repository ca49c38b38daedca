"""Issue 13's layout and what the Inspector taught: panes, Call in view, gating, badges, log.

Each runs in Voilà and in Lab, at 1400×900 and 1024×700, light and dark, and leaves
screenshots of each pane state in tests/artifacts/browser/.
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("playwright", reason="playwright not installed (run .ci/run_browser.sh)")

from playwright.sync_api import expect

from tests.browser.conftest import record_timing
from tests.browser.steps import pick, timed_call

if TYPE_CHECKING:
    from tests.browser.explorer_page import ExplorerPage

# A host and theme's first test also opens its page (Lab starts a kernel, runs the notebook).
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

THREE_PANES_FROM_PX = 1100  # the explorer's own width (Lab's notebook is narrower than Voilà)
TWO_PANES_FROM_PX = 700


def _box(ui: ExplorerPage, selector: str) -> dict[str, float]:
    box = ui.explorer.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box


def test_panes_side_by_side_where_the_width_allows(ui: ExplorerPage) -> None:
    """Catalogue | form | result and history in a row when the explorer is wide; the form under
    the catalogue, results beside them, when it is narrower."""
    width = _box(ui, ":scope")["width"]
    catalogue, form = _box(ui, ".tc-pane-catalogue"), _box(ui, ".tc-pane-form")
    output = _box(ui, ".tc-pane-output")
    if width >= THREE_PANES_FROM_PX:
        assert catalogue["x"] < form["x"] < output["x"]
        assert abs(catalogue["y"] - form["y"]) < 2
    elif width >= TWO_PANES_FROM_PX:
        assert abs(catalogue["x"] - form["x"]) < 2
        assert form["y"] > catalogue["y"]
        assert output["x"] > form["x"]
    else:
        assert catalogue["y"] < form["y"] < output["y"]
    ui.shot("panes")


@pytest.mark.parametrize("tool", ["math.add", "form.signup"])
def test_call_and_the_result_stay_in_view(ui: ExplorerPage, tool: str) -> None:
    """After a pick, Call is in the window without scrolling; after a call, the result too;
    and the page never scrolls sideways."""
    pick(ui, tool)
    ui.explorer.evaluate("e => e.scrollIntoView({block: 'start'})")
    height = (ui.page.viewport_size or {"height": 0})["height"]
    call_bottom = ui.bottom_of(ui.call_button)
    record_timing(f"Call bottom y, {tool}", ui.where, call_bottom, unit="px")
    assert call_bottom <= height, f"Call ends at y={call_bottom:.0f} of {height}"
    if tool == "math.add":
        ui.fill("a *", "1")
        ui.fill("b *", "2")
        timed_call(ui)
        assert ui.bottom_of(ui.status) <= height
    assert ui.horizontal_overflow() <= 0
    ui.shot(f"in-view-{tool}")


def test_call_is_gated_and_says_why(ui: ExplorerPage) -> None:
    """Disabled while the form would fail, with the reasons beside it; enabled once valid."""
    pick(ui, "form.signup")
    expect(ui.call_button).to_be_disabled()
    expect(ui.why).to_contain_text("Call is disabled")
    expect(ui.why).to_contain_text("'count' is required")
    ui.fill("name *", "Ada")
    ui.fill("email *", "ada@example.com")
    ui.fill("count *", "2")
    ui.choose("plan *", "team")
    expect(ui.call_button).to_be_enabled()
    expect(ui.why).not_to_contain_text("disabled")
    ui.shot("gated")


@pytest.mark.parametrize(("tool", "shown", "absent"), [
    ("notes.read", ["read-only", "idempotent"], ["destructive", "open-world"]),
    ("notes.delete", ["destructive", "idempotent", "open-world"], ["read-only"]),
    ("web.get", ["GET", "read-only", "idempotent", "open-world"], ["destructive"]),
    ("web.post", ["POST", "open-world"], ["idempotent", "read-only"]),
], ids=["registry-read", "registry-delete", "http-get", "http-post"])
def test_badges_from_annotations_and_methods(ui: ExplorerPage, tool: str, shown: list[str],
                                             absent: list[str]) -> None:
    """Registry annotations and HTTP methods become badges on the tool card."""
    pick(ui, tool)
    flags = ui.tool_card.locator(".tc-flag")
    texts = flags.all_inner_texts()
    assert all(name in texts for name in shown), texts
    assert not any(name in texts for name in absent), texts
    ui.shot("badges")


def test_the_log_copies_exports_resends_and_compares(ui: ExplorerPage) -> None:
    """The exact request and envelope, a copy button, JSON Lines export, "edit and resend",
    and the diff of the resent call's envelope against the original's."""
    pick(ui, "math.add")
    ui.fill("a *", "1")
    ui.fill("b *", "2")
    timed_call(ui)
    ui.open_tab("log")
    request = {"toolName": "math.add", "params": {"a": 1, "b": 2}}
    block = ui.log.locator("pre").first
    expect(block).to_contain_text('"toolName": "math.add"')
    assert {k: v for k, v in json.loads(block.inner_text()).items() if k != "options"} == request
    expect(ui.log.locator("pre").nth(1)).to_contain_text('"sum": 3')
    ui.log.get_by_role("button", name="copy").first.click()
    expect(ui.log.get_by_role("button", name="copied").first).to_be_visible()
    copied = ui.page.evaluate("() => navigator.clipboard.readText()")
    assert json.loads(copied)["params"] == request["params"]
    link = ui.log.locator("a.tc-export")
    expect(link).to_have_attribute("download", "toolcaller-calls.jsonl")
    href = link.get_attribute("href") or ""
    lines = base64.b64decode(href.split("base64,", 1)[1]).decode("utf-8").splitlines()
    assert json.loads(lines[-1])["request"]["toolName"] == "math.add"
    ui.log.get_by_role("button", name="edit and resend").click()
    editor = ui.log.locator(".tc-resend-editor textarea")
    editor.fill(json.dumps({**request, "params": {"a": 1, "b": 5}}))
    ui.log.locator(".tc-send").click()
    expect(ui.status).to_contain_text("success")
    diff = ui.log.locator(".tc-diff")
    expect(diff).to_contain_text('-     "sum": 3')
    expect(diff).to_contain_text('+     "sum": 6')
    ui.shot("log-diff")


def test_a_resend_may_send_what_the_form_refuses(ui: ExplorerPage) -> None:
    """Edit and resend sends the request as written: the engine's INVALID_PARAMS comes back."""
    pick(ui, "math.add")
    ui.fill("a *", "1")
    ui.fill("b *", "2")
    timed_call(ui)
    ui.open_tab("log")
    ui.log.get_by_role("button", name="edit and resend").click()
    editor = ui.log.locator(".tc-resend-editor textarea")
    # The editor may still hold the previous test's edit: wait for the kernel to put this
    # call's request in, or the fill below could be overwritten by that late update.
    expect(editor).to_have_value(re.compile(r'"b": 2'))
    editor.fill('{"toolName": "math.add", "params": {"a": "one"}}')
    ui.log.locator(".tc-send").click()
    expect(ui.status).to_contain_text("INVALID_PARAMS")
    expect(ui.result).to_contain_text("expected a number")


def test_rerun_with_edits_shows_the_diff(ui: ExplorerPage) -> None:
    """History → "edit in form" loads a call's params; changed and called, the log compares
    the two envelopes."""
    pick(ui, "text.echo")
    ui.fill("text *", "hello")
    timed_call(ui)
    ui.open_tab("history")
    ui.history.get_by_label("call", exact=True).select_option(index=0)
    ui.history.get_by_role("button", name="edit in form").click()
    expect(ui.field("text *")).to_have_value("hello")
    ui.fill("text *", "hello again")
    timed_call(ui)
    ui.open_tab("log")
    newest = ui.log.get_by_label("call", exact=True).locator("option").first
    expect(newest).to_contain_text("text.echo ✓ (re-run of")
    diff = ui.log.locator(".tc-diff")
    expect(diff).to_contain_text('-     "text": "hello"')
    expect(diff).to_contain_text('+     "text": "hello again"')
    ui.shot("rerun-diff")


def test_screenshots_of_each_pane_state(ui: ExplorerPage) -> None:
    """Catalogue search, a form with errors, a running call, a failure with its trail, the
    history and the log: a screenshot of each (looked at by a person, not compared)."""
    ui.search("tag:error")
    expect(ui.catalog).to_contain_text("filtered from")
    ui.shot(always=True, name="state-catalogue")
    pick(ui, "demo.showcase")
    ui.fill("Title *", "lower case")
    ui.fill("count", "500")
    ui.shot(always=True, name="state-form-errors")
    pick(ui, "demo.flaky")
    ui.fill("key", f"shots-{uuid.uuid4()}")  # a fresh key fails twice, then works
    ui.set_options(retries=3, retryDelay=800)
    ui.call()
    expect(ui.status).to_contain_text("waiting")
    ui.shot(always=True, name="state-running")
    ui.wait_for_outcome()
    pick(ui, "demo.fail")
    ui.set_options(retries=2, retryDelay=50)
    timed_call(ui)
    ui.open_panel("details")
    ui.shot(always=True, name="state-failure")
    ui.open_tab("history")
    ui.shot(always=True, name="state-history")
    ui.open_tab("log")
    ui.shot(always=True, name="state-log")
