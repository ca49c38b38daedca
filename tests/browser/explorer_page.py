"""The explorer as a person sees it: locators by label, role and text, and DOM-state waits.

Every selector the suite uses lives here. Form controls are found by their labels (ipywidgets
links a `<label for=...>` to each control) and include ticks by their accessible names; the
parts of the page by the stable classes the widgets set (`tc-explorer`, `tc-catalog-list`,
`tc-call`, `tc-cancel`, `tc-why`, `tc-result`, `tc-result-status`, `tc-result-message`,
`tc-history`, `tc-log`, `tc-form`, `tc-tool-card`); panels and tabs are opened by clicking
their titles, as a person does. The only other CSS classes used are ipywidgets' own.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

RESET_TOOL = "demo.hang"  # no params: picking it drops the last tool's form
PAGE_READY_MS = 180_000  # a first visit starts a kernel that imports pandas: slow on 2 cores
STEP_MS = 30_000  # one call's round trip through the kernel, generously for a loaded CI machine
NOT_LOCAL = re.compile(r"^https?://(?!127\.0\.0\.1[:/])")
SETTLED = re.compile(r"^(?!\s*$)(?!.*running)", re.S)  # neither empty nor "… running"
SCROLL_HEIGHT_JS = """() => {
  const cells = document.getElementById('rendered_cells');
  return Math.ceil((cells || document.documentElement).scrollHeight) + 16;
}"""
MAX_SHOT_HEIGHT = 8_000
OPEN_PANEL = re.compile(r"\bjupyter-widget-Collapse-open\b")
TABLE_JS = """table => {
  const head = [...table.querySelectorAll('thead th')].map(th => th.innerText.trim());
  return [...table.querySelectorAll('tbody tr')].map(tr =>
    Object.fromEntries([...tr.cells].map((td, i) => [head[i], td.innerText.trim()])));
}"""
CONTRAST_JS = """el => {
  const rgb = c => (c.match(/[\\d.]+/g) || []).slice(0, 4).map(Number);
  const solid = e => { for (let n = e; n; n = n.parentElement) {
      const c = rgb(getComputedStyle(n).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
    } return [255, 255, 255]; };
  const lum = c => { const [r, g, b] = c.map(v => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const fg = rgb(getComputedStyle(el).color).slice(0, 3), bg = solid(el);
  const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
  return {ratio: (hi + 0.05) / (lo + 0.05), fg: fg, bg: bg};
}"""
OVERFLOW_JS = """() => {
  const els = [document.scrollingElement, document.getElementById('rendered_cells'),
               ...document.querySelectorAll('.jp-WindowedPanel-outer, .jp-Notebook')];
  return els.filter(Boolean).map(e => e.scrollWidth - e.clientWidth);
}"""


@dataclass
class ConsoleLog:
    """Console messages and uncaught errors of a page; errors not known to be benign fail.

    `BENIGN` lists, with the reason, the only errors tolerated.
    """

    messages: list[tuple[str, str, str]] = field(default_factory=list)
    """(type, text, url) of every console message; uncaught exceptions have type "pageerror"."""

    def follow(self, page: Page) -> None:
        """Record what `page` logs from now on."""
        page.on("console", lambda m: self.messages.append(
            (m.type, m.text, str(m.location.get("url", "")))))
        page.on("pageerror", lambda e: self.messages.append(
            ("pageerror", f"{e.name}: {e.message}\n{e.stack}", "")))

    def errors(self) -> list[tuple[str, str, str]]:
        """The errors that no entry of `BENIGN` explains."""
        return [m for m in self.messages
                if m[0] in ("error", "pageerror") and _benign(m) is None]

    def save(self, path: Path) -> None:
        """Write every message, one a line, each error marked benign (with why) or not."""
        lines = []
        for kind, text, url in self.messages:
            why = _benign((kind, text, url))
            mark = f"  [benign: {why}]" if why else ""
            lines.append(f"{kind}: {text} ({url}){mark}")
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def assert_clean(self) -> None:
        """Fail with the list of unexplained console errors, if any."""
        found = self.errors()
        assert not found, "JavaScript errors in the browser console:\n" + "\n".join(
            f"  {kind}: {text} ({url})" for kind, text, url in found)


BENIGN: list[tuple[str, Any]] = [
    ("Voilà's template links Font Awesome CSS from a CDN; the suite refuses every request "
     "that is not to 127.0.0.1, and the icons come from the bundled copy",
     lambda kind, text, url: kind == "error" and text.startswith("Failed to load resource")
     and bool(NOT_LOCAL.match(url))),
]


def _benign(message: tuple[str, str, str]) -> str | None:
    return next((why for why, test in BENIGN if test(*message)), None)


class ExplorerPage:
    """Drive the explorer: search, pick, fill, call, cancel, read results, history and log.

    Args:
        page: The Playwright page showing the explorer (a Voilà page or JupyterLab).
        artifacts: Where `shot()` saves screenshots (None: nowhere).
        prefix: Start of each screenshot's file name.
        host: "voila" or "lab".
        theme: "light" or "dark".
    """

    def __init__(self, page: Page, *, artifacts: Path | None = None, prefix: str = "",
                 host: str = "voila", theme: str = "light") -> None:
        self.page = page
        self.artifacts = artifacts
        self.prefix = prefix
        self.host = host
        self.theme = theme
        self.size = ""
        self.test = ""
        self.ready_s = 0.0
        self._shots = 0
        self._shown_before_call = ""

    @property
    def where(self) -> str:
        """Host, theme and size, e.g. `voila-dark-1024x700`."""
        return "-".join(part for part in (self.host, self.theme, self.size) if part)

    # -- opening -----------------------------------------------------------------------------

    def open_voila(self, url: str) -> None:
        """Open the Voilà page and wait until the catalogue lists tools."""
        started = time.monotonic()
        self.page.goto(url)
        self.wait_until_ready(PAGE_READY_MS)
        self.ready_s = time.monotonic() - started

    def open_lab(self, url: str) -> None:
        """Open the notebook in Lab, run it (see `hosts.open_lab_explorer`) and wait for tools."""
        from tests.browser.hosts import open_lab_explorer

        started = time.monotonic()
        open_lab_explorer(self.page, url, self.theme, PAGE_READY_MS)
        self.ready_s = time.monotonic() - started

    def reset(self) -> None:
        """Leave the explorer as a new test expects it: nothing running, no filter, at the top,
        and a tool with no params picked (so that the next pick builds a fresh form)."""
        if self.cancel_button.is_visible():
            # The call may end between the check and the click (the button then hides): a
            # click that finds no button is fine, a button still shown afterwards is not.
            with suppress(PlaywrightTimeoutError):
                self.cancel_button.click(timeout=2_000)
            expect(self.cancel_button).to_be_hidden(timeout=STEP_MS)
        if self.tool_card.count() and self.tool_card.locator("b").first.inner_text() != RESET_TOOL:
            self.select_tool(RESET_TOOL, search=True)
        clear = self.catalog.get_by_role("button", name="clear filters")
        if clear.is_visible():
            clear.click()  # empties the search and the tags
            expect(clear).to_be_hidden()
        self.explorer.scroll_into_view_if_needed()

    # -- the parts of the page ---------------------------------------------------------------

    @property
    def explorer(self) -> Locator:
        """The whole explorer."""
        return self.page.locator(".tc-explorer").first

    @property
    def catalog(self) -> Locator:
        """The catalogue pane: search, tags, counts and the list."""
        return self.page.locator(".tc-explorer .tc-catalog")

    @property
    def search_box(self) -> Locator:
        """The catalogue's search field."""
        return self.page.locator(".tc-catalog").get_by_label("search", exact=True)

    @property
    def catalogue(self) -> Locator:
        """The catalogue's list of tools (a `<select>` listbox, one `<option>` a tool)."""
        return self.page.locator(".tc-catalog-list select")

    @property
    def form(self) -> Locator:
        """The selected tool's form."""
        return self.page.locator(".tc-explorer .tc-form")

    @property
    def tool_card(self) -> Locator:
        """The selected tool's card: name, badges, description."""
        return self.page.locator(".tc-explorer .tc-tool-card")

    @property
    def call_button(self) -> Locator:
        """The Call button."""
        return self.page.locator(".tc-explorer .tc-call")

    @property
    def why(self) -> Locator:
        """What the Call bar says beside the button (why Call is disabled)."""
        return self.page.locator(".tc-explorer .tc-why")

    @property
    def cancel_button(self) -> Locator:
        """The Cancel button (shown while a call runs)."""
        return self.page.locator(".tc-explorer .tc-cancel")

    @property
    def result(self) -> Locator:
        """The result view: badge, message, details, result and metadata."""
        return self.page.locator(".tc-explorer .tc-result")

    @property
    def status(self) -> Locator:
        """The result view's first line: badge, tool name, duration and attempts."""
        return self.result.locator(".tc-result-status")

    @property
    def message(self) -> Locator:
        """The result view's error message ("" on success)."""
        return self.result.locator(".tc-result-message")

    @property
    def history(self) -> Locator:
        """The history view: summary, calls table, timing chart, attempts and re-run."""
        return self.page.locator(".tc-explorer .tc-history")

    @property
    def log(self) -> Locator:
        """The request/response log."""
        return self.page.locator(".tc-explorer .tc-log")

    def field(self, label: str) -> Locator:
        """The form control labelled `label` (a required one ends with " *")."""
        return self.explorer.get_by_label(label, exact=True)

    def include_tick(self, name: str) -> Locator:
        """The "include" checkbox of an optional parameter (its accessible name names it)."""
        return self.form.get_by_role("checkbox", name=f"include {name}", exact=True)

    def errors(self) -> Locator:
        """The inline errors the form shows."""
        return self.form.locator(".tc-error")

    def _panel_title(self, title: str) -> Locator:
        return self.explorer.locator(".jupyter-widget-Collapse-header").filter(
            has_text=re.compile(rf"^\s*{re.escape(title)}\s*$"))

    # -- what a person does ------------------------------------------------------------------

    def wait_until_ready(self, timeout_ms: float) -> None:
        """Wait until the kernel has run the notebook and the catalogue lists tools."""
        expect(self.catalogue.locator("option").first).to_be_attached(timeout=timeout_ms)

    def row_names(self) -> list[str]:
        """The names of the tools the catalogue lists now, in order."""
        texts = self.catalogue.locator("option").all_inner_texts()
        return [text.split()[0] for text in texts if text.split()]

    def expect_rows(self, names: list[str], timeout_ms: float = STEP_MS) -> None:
        """Wait until the catalogue lists exactly these tools, in this order."""
        expect(self.catalogue.locator("option")).to_have_text(
            [re.compile(rf"^{re.escape(name)}\s") for name in names], timeout=timeout_ms)

    def search(self, text: str) -> None:
        """Type into the search field, as a person does (one key at a time)."""
        self.search_box.click()
        self.search_box.press_sequentially(text)

    def select_tool(self, name: str, *, search: bool = False) -> float:
        """Click a tool's row in the catalogue, wait for its form; return the seconds it took.

        With `search`, first type the name into the search field, as a person does in a long
        catalogue.
        """
        if search:
            self.search_box.fill(name)
        row = self.catalogue.locator("option").filter(
            has_text=re.compile(rf"^{re.escape(name)}\s"))
        expect(row).to_have_count(1, timeout=STEP_MS)
        started = time.monotonic()
        row.click()
        expect(self.tool_card.locator("b").first).to_have_text(name, timeout=STEP_MS)
        expect(self.form.get_by_role("button", name="raw JSON")).to_be_visible(timeout=STEP_MS)
        return time.monotonic() - started

    def fill(self, label: str, text: str) -> None:
        """Type into a field, then leave it with Tab."""
        control = self.field(label)
        control.fill(text)
        control.press("Tab")

    def choose(self, label: str, option: str) -> None:
        """Pick an option of a dropdown by its text."""
        self.field(label).select_option(label=option)

    def open_panel(self, title: str) -> None:
        """Open a collapsed panel (options, details, attempts) by clicking its title."""
        if not self.is_open(title):
            self._panel_title(title).first.click()
            expect(self._panel(title)).to_have_class(OPEN_PANEL)

    def close_panel(self, title: str) -> None:
        """Close an open panel by clicking its title."""
        if self.is_open(title):
            self._panel_title(title).first.click()
            expect(self._panel(title)).not_to_have_class(OPEN_PANEL)

    def is_open(self, title: str) -> bool:
        """Whether the panel with this title shows its contents."""
        return bool(OPEN_PANEL.search(self._panel(title).get_attribute("class") or ""))

    def _panel(self, title: str) -> Locator:
        header = self.page.locator(".jupyter-widget-Collapse-header").filter(
            has_text=re.compile(rf"^\s*{re.escape(title)}\s*$"))
        return self.explorer.locator(".jupyter-widget-Collapse").filter(has=header).last

    def open_tab(self, title: str) -> None:
        """Show the output pane's tab with this title ("history" or "log")."""
        self.explorer.locator(".lm-TabBar-tab").filter(has_text=re.compile(
            rf"^\s*{re.escape(title)}\s*$")).click()

    def set_options(self, **values: float) -> None:
        """Open the options panel and set options, e.g. `timeout=60000` (labels as shown)."""
        self.open_panel("options")
        labels = {"timeout": "timeout (ms)", "retries": "retries",
                  "retryDelay": "retryDelay (ms)", "deadline": "deadline (ms)"}
        for name, value in values.items():
            self.fill(labels[name], str(value))
        self.close_panel("options")

    def call(self) -> None:
        """Click Call (`wait_for_outcome` then waits for this call's outcome, not the last's)."""
        self._shown_before_call = self.result.inner_text()
        expect(self.call_button).to_be_enabled()
        self.call_button.click()

    def wait_for_outcome(self, timeout_ms: float = STEP_MS) -> str:
        """Wait until the result view shows the new call's outcome; return its status line.

        The view must differ from what it showed before the click (each envelope shows its own
        call id) and say neither nothing nor "running".
        """
        expect(self.result).not_to_have_text(self._shown_before_call, use_inner_text=True,
                                             timeout=timeout_ms)
        expect(self.status).to_have_text(SETTLED, timeout=timeout_ms)
        return self.status.inner_text()

    def timed_call(self) -> tuple[str, float]:
        """Click Call and wait for the outcome; return its status line and the seconds taken."""
        self.call()
        started = time.monotonic()
        status = self.wait_for_outcome()
        return status, time.monotonic() - started

    def result_value(self) -> Any:
        """The result shown as JSON, parsed (None when the view shows no result)."""
        block = self.result.locator(".widget-html").filter(
            has=self.page.locator("b", has_text=re.compile(r"^result$"))).locator("pre")
        if block.count() == 0:
            return None
        return json.loads(block.inner_text())

    def history_calls(self) -> list[dict[str, str]]:
        """The rows of the history's calls table (newest first), by column title."""
        return self._table(0)

    def history_attempts(self) -> list[dict[str, str]]:
        """The rows of the history's attempts table (open the "attempts" panel first)."""
        return self._table(1)

    def _table(self, index: int) -> list[dict[str, str]]:
        table = self.history.locator("table").nth(index)
        if table.count() == 0:
            return []
        rows: list[dict[str, str]] = table.evaluate(TABLE_JS)
        return rows

    # -- what the suite measures -------------------------------------------------------------

    def contrast(self, locator: Locator) -> dict[str, Any]:
        """The contrast ratio of an element's text against the background behind it."""
        found: dict[str, Any] = locator.evaluate(CONTRAST_JS)
        return found

    def horizontal_overflow(self) -> int:
        """How many pixels the page (or Lab's notebook) scrolls sideways (0: none)."""
        return max(self.page.evaluate(OVERFLOW_JS) or [0])

    def bottom_of(self, locator: Locator) -> float:
        """The bottom edge of an element in the window, in pixels."""
        box = locator.bounding_box()
        assert box is not None, "the element is not shown"
        return float(box["y"] + box["height"])

    def shot(self, name: str, *, always: bool = False) -> Path | None:
        """Save a screenshot of the window as `<prefix>-<size>-<test>-NN-<name>.png`.

        In the host × theme × size matrix only the pane states are kept (`always`), or every
        shot with TOOLCALLER_ALL_SHOTS=1: eight copies of each step are too many to look at.
        """
        if self.artifacts is None:
            return None
        if self.size and not always and os.environ.get("TOOLCALLER_ALL_SHOTS") != "1":
            return None
        self._shots += 1
        parts = [self.prefix, self.size, self.test, f"{self._shots:02d}", name]
        path = self.artifacts / ("-".join(p for p in parts if p) + ".png")
        if self.host == "lab" or self.size:
            self.page.screenshot(path=path)  # the window, as the person sees it
        else:
            save_page(self.page, path)
        return path


def save_page(page: Page, path: Path) -> None:
    """Screenshot the whole page, however long.

    Voilà scrolls `#rendered_cells`, not the document, so `full_page` would see no more than
    the viewport: the viewport is stretched to the content's height for the shot instead.
    """
    size = page.viewport_size or {"width": 1280, "height": 900}
    height = page.evaluate(SCROLL_HEIGHT_JS)
    page.set_viewport_size({"width": size["width"],
                            "height": min(max(size["height"], height), MAX_SHOT_HEIGHT)})
    try:
        page.screenshot(path=path)
    finally:
        page.set_viewport_size(size)


@contextmanager
def explorer_context(browser: Browser, artifacts: Path | None,
                     name: str) -> Iterator[Page]:
    """A fresh browser context and page; on leaving, save the console log and check it."""
    log = ConsoleLog()
    context: BrowserContext = browser.new_context(viewport={"width": 1400, "height": 900},
                                                  timezone_id="Europe/Paris")
    # The page's template links CDN stylesheets (its icons are bundled too): refuse every
    # request that is not to the local server, so that nothing depends on the network.
    context.route(NOT_LOCAL, lambda route: route.abort())
    context.grant_permissions(["clipboard-read", "clipboard-write"])  # the copy buttons
    try:
        page = context.new_page()
        log.follow(page)
        yield page
    finally:
        if artifacts is not None:
            log.save(artifacts / f"{name}-console.log")
        context.close()
    log.assert_clean()


@contextmanager
def open_explorer(browser: Browser, url: str, artifacts: Path | None,
                  name: str) -> Iterator[ExplorerPage]:
    """Open the Voilà explorer in a fresh context (see `explorer_context`)."""
    with explorer_context(browser, artifacts, name) as page:
        explorer = ExplorerPage(page, artifacts=artifacts, prefix=name)
        explorer.open_voila(url)
        yield explorer


SHOWCASE_PARAMS = {"title": "Hello browser", "count": 7, "color": "blue",
                   "address": {"street": "1 Main St"}}
"""What `call_showcase` types into demo.showcase's form, as the params the tool should get."""


def call_showcase(explorer: ExplorerPage) -> str:
    """Fill demo.showcase's form as a person does, click Call; return the outcome's status line.

    A text field, a number, a dropdown and a field of a nested object, as in `SHOWCASE_PARAMS`.
    """
    explorer.select_tool("demo.showcase")
    explorer.fill("Title *", SHOWCASE_PARAMS["title"])  # text, with a pattern
    explorer.fill("count", str(SHOWCASE_PARAMS["count"]))  # integer: editing ticks "include"
    explorer.choose("color *", SHOWCASE_PARAMS["color"])  # enum dropdown
    explorer.include_tick("address").check()  # optional nested object: switch it on...
    explorer.fill("street *", SHOWCASE_PARAMS["address"]["street"])  # ...fill its field
    explorer.shot("showcase-filled")
    explorer.call()
    status = explorer.wait_for_outcome()
    explorer.shot("showcase-result")
    return status


def assert_showcase_succeeded(explorer: ExplorerPage, status: str) -> None:
    """The result view shows success, and the tool received exactly `SHOWCASE_PARAMS`."""
    assert "✓ success" in status, f"status: {status!r}; message: {explorer.message.inner_text()!r}"
    assert "demo.showcase" in status
    assert explorer.result_value() == {"received": SHOWCASE_PARAMS}
