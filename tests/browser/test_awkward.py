"""Issue 13's awkward items, each as a person meets it: Voilà and Lab, both sizes and themes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("playwright", reason="playwright not installed (run .ci/run_browser.sh)")

from playwright.sync_api import expect

from tests.browser.steps import pick, timed_call

if TYPE_CHECKING:
    from tests.browser.explorer_page import ExplorerPage

# A host and theme's first test also opens its page (Lab starts a kernel, runs the notebook).
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

BULK = 480


def test_out_of_range_numbers_keep_what_was_typed(ui: ExplorerPage) -> None:
    """500 in a 1..100 box stays 500, 0 in a quantity of at least 1 stays 0: both reported."""
    pick(ui, "form.signup")
    ui.fill("count *", "500")
    expect(ui.field("count *")).to_have_value("500")
    expect(ui.form).to_contain_text("500 is greater than the maximum of 100")
    ui.include_tick("items").check()
    ui.form.get_by_role("button", name="add").click()
    ui.fill("quantity *", "0")
    expect(ui.field("quantity *")).to_have_value("0")
    expect(ui.form).to_contain_text("0 is less than the minimum of 1")
    ui.shot("out-of-range")


def test_a_blank_form_is_not_red_until_touched_or_called(ui: ExplorerPage) -> None:
    """No error on a fresh form; an edited field shows its own; Enter (a call) shows them all."""
    pick(ui, "form.signup")
    expect(ui.errors()).to_have_count(0)
    expect(ui.call_button).to_be_disabled()
    ui.shot("blank")
    ui.fill("name *", "ada")
    expect(ui.errors()).to_have_count(1)
    expect(ui.errors().first).to_have_text('"ada" does not match the required pattern')
    ui.field("name *").press("Enter")
    expect(ui.form).to_contain_text("'count' is required")
    expect(ui.form).to_contain_text("'plan' is required")
    ui.shot("all-errors")


def test_a_failed_union_names_its_closest_variant(ui: ExplorerPage) -> None:
    """No Python dict, no regex: the closest alternative and the field that fails in it."""
    pick(ui, "form.signup")
    ui.include_tick("payment").check()
    ui.fill("number *", "12")
    expected = ('an object matches none of the allowed alternatives; the closest, "card", '
                'fails at /number: "12" does not match the required pattern')
    expect(ui.form).to_contain_text(expected)
    text = ui.form.inner_text()
    assert "{'" not in text  # no Python dict
    assert "[0-9]" not in text  # no regex
    ui.shot("union")


def test_required_fields_start_empty(ui: ExplorerPage) -> None:
    """No 0 in a required number, no first option picked in a required enum."""
    pick(ui, "form.signup")
    expect(ui.field("count *")).to_have_value("")
    expect(ui.field("plan *")).to_have_value("")
    expect(ui.field("count *")).to_have_attribute("placeholder", "integer, 1 to 100")


def test_fields_say_what_they_are(ui: ExplorerPage) -> None:
    """Descriptions under the labels, ticks that say "include", one control per boolean, fields
    left out dimmed, and an array of enum values that keeps its label once switched on."""
    pick(ui, "form.signup")
    expect(ui.form.get_by_text("How many seats", exact=True)).to_be_visible()
    titles = ui.form.locator("[title]").evaluate_all(
        "els => els.filter(e => e.offsetParent !== null).map(e => e.title)")  # shown ones
    assert "null" not in titles
    tick = ui.include_tick("homepage")
    expect(tick).to_be_visible()
    expect(ui.form.locator(".tc-tick").first).to_contain_text("include homepage")
    expect(ui.form.get_by_role("checkbox", name=re.compile("newsletter"))).to_have_count(0)
    expect(ui.field("newsletter")).to_have_value("not set")
    dimmed = ui.form.locator(".tc-off").first
    assert float(dimmed.evaluate("e => getComputedStyle(e).opacity")) < 1
    ui.include_tick("topics").check()
    expect(ui.include_tick("topics")).to_be_visible()  # the field keeps its name once ticked
    expect(ui.form.locator(".tc-tags")).to_be_visible()
    ui.shot("fields")


def test_picking_another_tool_clears_the_last_result(ui: ExplorerPage) -> None:
    """The result of math.add does not stay beside text.echo's form."""
    pick(ui, "math.add")
    ui.fill("a *", "1")
    ui.fill("b *", "2")
    assert "✓ success" in timed_call(ui)
    pick(ui, "text.echo")
    expect(ui.status).to_have_text("")


def test_the_catalogue_says_when_it_is_cut_and_filters_clear(ui: ExplorerPage) -> None:
    """"showing 200 of N" comes with "show all"; a tag still filtering says so and clears; a
    long description is read whole in the tool card."""
    expect(ui.catalog).to_contain_text("showing 200 of")
    show_all = ui.catalog.get_by_role("button", name="show all")
    show_all.click()
    expect(show_all).to_be_hidden()
    expect(ui.catalog).to_contain_text(re.compile(r"showing (\d+) of \1 tools"))
    counted = re.search(r"showing (\d+) of", ui.catalog.inner_text())
    total = int(counted.group(1)) if counted else 0
    assert total > BULK
    expect(ui.catalogue.locator("option")).to_have_count(total)
    ui.catalog.get_by_label("tags", exact=True).select_option(label=f"bulk ({BULK})")
    ui.search("tool_01")
    ui.search_box.fill("")
    expect(ui.catalog).to_contain_text(f"showing 200 of {BULK}")
    expect(ui.catalog).to_contain_text("tags: bulk")
    ui.shot("tag-filter")
    ui.catalog.get_by_role("button", name="clear filters").click()
    expect(ui.catalog).to_contain_text(f"showing 200 of {total}")
    expect(ui.catalog).not_to_contain_text("tags: bulk")
    pick(ui, "bulk.tool_000")
    expect(ui.tool_card).to_contain_text("THE-END")


def test_running_shows_time_attempts_waits_and_progress(ui: ExplorerPage) -> None:
    """While a call runs: elapsed time, attempt 2 of 3, the wait before a retry, progress."""
    pick(ui, "demo.fail")
    ui.set_options(retries=2, retryDelay=1500)
    ui.call()
    expect(ui.status).to_contain_text(re.compile(r"waiting \d+\.\d s before attempt 2"))
    expect(ui.status).to_contain_text("attempt 2 of 3", timeout=10_000)
    expect(ui.status).to_contain_text(re.compile(r"\d+\.\d s"))
    ui.shot("retry-wait")
    assert "RETRY_EXHAUSTED" in ui.wait_for_outcome()
    pick(ui, "plugin.steps")
    ui.call()
    expect(ui.status).to_contain_text(re.compile(r"progress [12] of 3"))  # the tool's default
    expect(ui.status).to_contain_text(re.compile(r"step [12] of 3: working"))
    ui.shot("progress")
    assert "✓ success" in ui.wait_for_outcome()


def test_a_cancelled_call_is_a_history_row(ui: ExplorerPage) -> None:
    """Cancel: the history records the call, with the status `cancelled` (no new error code)."""
    pick(ui, "form.slow")
    ui.fill("seconds *", "20")
    ui.call()
    expect(ui.status).to_contain_text("running")
    ui.cancel_button.click()
    expect(ui.status).to_contain_text("cancelled")
    ui.open_tab("history")
    first = ui.history.locator("table").first.locator("tbody tr").first
    expect(first).to_contain_text("form.slow")
    expect(first).to_contain_text("cancelled")
    expect(ui.history).to_contain_text(re.compile(r"\d+ cancelled"))


def test_enter_calls_the_title_the_raw_box_and_local_times(ui: ExplorerPage) -> None:
    """Enter calls; the page is "toolcaller explorer"; the raw JSON box is tall; a local
    date-time says the UTC text it sends."""
    if ui.host == "voila":
        expect(ui.page).to_have_title("toolcaller explorer")
    pick(ui, "math.add")
    ui.fill("a *", "1")
    ui.field("b *").fill("2")
    before = ui.result.inner_text()
    ui.field("b *").press("Enter")
    expect(ui.result).not_to_have_text(before, use_inner_text=True)
    expect(ui.status).to_contain_text("success")
    ui.form.get_by_role("button", name="raw JSON").click()
    raw = ui.form.locator("textarea").first
    assert (raw.bounding_box() or {"height": 0})["height"] > 200
    ui.form.get_by_role("button", name="raw JSON").click()
    pick(ui, "form.signup")
    ui.include_tick("meeting").check()
    ui.form.locator('input[type="datetime-local"]').fill("2026-03-10T14:00")
    expect(ui.form).to_contain_text("sent as 2026-03-10T13:00:00Z (UTC")  # Paris is UTC+1
    ui.shot("local-time")
