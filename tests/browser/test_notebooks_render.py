"""The notebooks render their widgets without a kernel, as nbviewer shows them.

Each notebook is exported to HTML with nbconvert (what nbviewer runs) and opened in Chromium;
the page's widget renderer (`@jupyter-widgets/html-manager`, and require.js) comes from a local
npm install instead of its CDN — `.ci/run_browser.sh` makes it in `.venv-browser/node`, or
$TOOLCALLER_HTML_MANAGER names another `node_modules`. The widgets must draw from the state
saved in the notebook: the explorer with its tool, result and history.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("playwright", reason="playwright not installed (run .ci/run_browser.sh)")

from playwright.sync_api import Route, expect

from tests.browser.conftest import ROOT, _skip

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

NODE_MODULES = Path(os.environ.get("TOOLCALLER_HTML_MANAGER",
                                   ROOT / ".venv-browser" / "node" / "node_modules"))
MANAGER = re.compile(r"html-manager@[^/]*/dist/([^?]+)")
EXPECTED = {  # notebook: (a selector that must draw, a text it must show)
    "01-quickstart": (".tc-explorer", "hello widgets"),
    "02-acceptance": (".tc-explorer", "Call is disabled"),
    "03-debugging-failures": (".tc-history", "demo.flaky"),
}


def _serve_locally(route: Route) -> None:
    url = route.request.url
    found = MANAGER.search(url)
    if found:
        route.fulfill(path=str(NODE_MODULES / "@jupyter-widgets/html-manager/dist" /
                               found.group(1)))
    elif re.search(r"require(\.min)?\.js$", url):
        route.fulfill(path=str(NODE_MODULES / "requirejs" / "require.js"),
                      content_type="application/javascript")
    else:
        route.abort()  # fonts, MathJax: nothing the widgets need


@pytest.mark.parametrize("name", list(EXPECTED))
def test_the_notebook_shows_its_widgets_without_a_kernel(
        browser: Browser, artifacts: Path, tmp_path: Path, name: str) -> None:
    """nbconvert's HTML of the stored notebook draws the widgets from their saved state."""
    if not (NODE_MODULES / "@jupyter-widgets" / "html-manager").is_dir():
        _skip(f"no @jupyter-widgets/html-manager in {NODE_MODULES} (run .ci/run_browser.sh)")
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_filename(str(ROOT / "notebooks" / f"{name}.ipynb"))
    page_path = tmp_path / f"{name}.html"
    page_path.write_text(body, encoding="utf-8")
    selector, text = EXPECTED[name]
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        context.route(re.compile(r"^https?://"), _serve_locally)
        page = context.new_page()
        page.goto(page_path.as_uri())
        widget = page.locator(selector).first
        expect(widget).to_be_visible(timeout=60_000)
        expect(widget).to_contain_text(text)
        widget.scroll_into_view_if_needed()
        page.screenshot(path=artifacts / f"notebook-{name}-no-kernel.png")
    finally:
        context.close()
