"""The suite catches a broken widget: a text field that ignores typing fails the form test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("playwright", reason="playwright not installed (run .ci/run_browser.sh)")

from playwright.sync_api import expect

from tests.browser.explorer_page import (
    SHOWCASE_PARAMS,
    ExplorerPage,
    assert_showcase_succeeded,
    call_showcase,
    open_explorer,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser

    from toolcaller.ui import ExplorerServer

pytestmark = pytest.mark.browser

# Put first in a copy of the page's notebook (Voilà hides code: the page looks the same).
BREAK_TEXT_FIELDS = '''\
# TEST ONLY: a ParamForm whose text fields no longer follow what is typed: `.value` stays
# what Python set last, as if the control's "value" observer had been lost.
from toolcaller.widgets import _fields_text

_fields_text.TextField.value = lambda self: self._kept[0] if self._kept else ""
'''


@pytest.fixture(scope="module")
def broken_server(need_voila: None, tmp_path_factory: pytest.TempPathFactory,
                  artifacts: Path) -> Iterator[ExplorerServer]:
    """The explorer page with broken text fields (on the embedded demo registry)."""
    import nbformat

    from toolcaller.ui import NOTEBOOK, serve

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    patch = nbformat.v4.new_code_cell(BREAK_TEXT_FIELDS)
    patch["id"] = "break-text-fields"
    notebook.cells.insert(0, patch)
    path = tmp_path_factory.mktemp("broken") / "explorer.ipynb"
    nbformat.write(notebook, path)
    with serve(notebook=path, log_path=artifacts / "voila-broken.log") as server:
        yield server


@pytest.fixture
def broken_explorer(browser: Browser, broken_server: ExplorerServer, artifacts: Path,
                    request: pytest.FixtureRequest) -> Iterator[ExplorerPage]:
    with open_explorer(browser, broken_server.url, artifacts, request.node.name) as page:
        yield page


def test_a_text_field_that_ignores_typing_fails_the_form_test(
        broken_explorer: ExplorerPage) -> None:
    """The form test's own steps fail: the title typed never reaches the form, which stays
    invalid, so Call stays disabled and the tool never gets the params."""
    with pytest.raises(AssertionError):
        assert_showcase_succeeded(broken_explorer, call_showcase(broken_explorer))
    # What the page shows instead: the engine's message about the title the form holds ("").
    expect(broken_explorer.call_button).to_be_disabled()
    expect(broken_explorer.why).to_contain_text('title: "" does not match the required pattern')
    assert broken_explorer.result_value() != {"received": SHOWCASE_PARAMS}
    broken_explorer.shot("broken-result")
