"""Browser suite fixtures: a Voilà server of the explorer page, headless Chromium, one page a test.

Needs the `browser` extra (Voilà, Playwright) and Debian's chromium at /usr/bin/chromium (or
$TOOLCALLER_CHROMIUM): `.ci/run_browser.sh` installs both. Without them every test here is
skipped with the reason. Playwright's own browser download is not used: it needs a network.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

    from tests.browser.explorer_page import ExplorerPage
    from toolcaller.ui import ExplorerServer

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts" / "browser"
CHROMIUM = os.environ.get("TOOLCALLER_CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags Chromium dials out at start, and a closed network
# refuses it; --headless is also Playwright's default, listed to be plain about it.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
INSTALL_HINT = ("run .ci/run_browser.sh, or pip install -e '.[notebook,browser]' and "
                "apt-get install chromium")


def _missing(*modules: str) -> str:
    absent = [name for name in modules if importlib.util.find_spec(name) is None]
    return f"{', '.join(absent)} not installed ({INSTALL_HINT})" if absent else ""


def _skip(reason: str) -> None:
    """Skip, or fail where the suite must run (TOOLCALLER_REQUIRE_BROWSER=1, as in CI)."""
    if os.environ.get("TOOLCALLER_REQUIRE_BROWSER") == "1":
        pytest.fail(f"the browser suite cannot run: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def need_voila() -> None:
    """Skip unless Voilà (and the notebook extra it runs) are installed."""
    reason = _missing("voila", "ipywidgets", "ipykernel")
    if reason:
        _skip(reason)


@pytest.fixture(scope="session")
def playwright(need_voila: None) -> Iterator[Playwright]:
    """The Playwright driver; skips without Playwright or without a Chromium to drive."""
    reason = _missing("playwright") or (
        "" if os.access(CHROMIUM, os.X_OK) else f"no Chromium at {CHROMIUM} ({INSTALL_HINT})")
    if reason:
        _skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """Headless Debian Chromium, with a fresh profile of its own (Playwright's temp dir)."""
    launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield launched
    launched.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots and console logs go (gitignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def registry_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary registry: the demo registry's Python tools, so its size tells it apart."""
    demo = json.loads((ROOT / "toolcaller" / "demo" / "registry.json").read_text("utf-8"))
    demo["tools"] = [tool for tool in demo["tools"] if "python" in tool]
    demo.pop("mcpServers", None)
    path = tmp_path_factory.mktemp("registry") / "tools.json"
    path.write_text(json.dumps(demo, indent=1), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def page_registry_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page registry (`page_registry.py`): demo tools, form tools, badges and bulk tools."""
    from tests.browser.page_registry import write_registry

    return write_registry(tmp_path_factory.mktemp("page") / "tools.json")


@pytest.fixture(scope="session")
def page_server(need_voila: None, page_registry_file: Path, artifacts: Path,
                ) -> Iterator[ExplorerServer]:
    """`toolcaller ui --registry <page registry>`."""
    from toolcaller.ui import serve

    with serve(page_registry_file, log_path=artifacts / "voila-page.log") as server:
        yield server


@pytest.fixture
def page_explorer(browser: Browser, page_server: ExplorerServer, artifacts: Path,
                  request: pytest.FixtureRequest) -> Iterator[ExplorerPage]:
    """A fresh explorer page of the page registry."""
    from tests.browser.explorer_page import open_explorer

    with open_explorer(browser, page_server.url, artifacts, request.node.name) as page:
        yield page


@pytest.fixture
def dark_explorer(browser: Browser, page_server: ExplorerServer, artifacts: Path,
                  request: pytest.FixtureRequest) -> Iterator[ExplorerPage]:
    """A fresh explorer page of the page registry in Voilà's dark theme."""
    from tests.browser.explorer_page import open_explorer

    with open_explorer(browser, page_server.url + "&theme=dark", artifacts,
                       request.node.name) as page:
        yield page


@pytest.fixture(scope="session")
def ui_server(need_voila: None, registry_file: Path, artifacts: Path,
              ) -> Iterator[ExplorerServer]:
    """`toolcaller ui --registry <temp registry>` on a free port, with a temporary token."""
    from toolcaller.ui import serve

    with serve(registry_file, log_path=artifacts / "voila.log") as server:
        yield server


@pytest.fixture(scope="session")
def demo_server(need_voila: None, artifacts: Path) -> Iterator[ExplorerServer]:
    """Plain `toolcaller ui`: the embedded demo registry."""
    from toolcaller.ui import serve

    with serve(log_path=artifacts / "voila-demo.log") as server:
        yield server


@pytest.fixture
def explorer(browser: Browser, ui_server: ExplorerServer, artifacts: Path,
             request: pytest.FixtureRequest) -> Iterator[ExplorerPage]:
    """A fresh explorer page (a new kernel, an empty history); console errors fail the test."""
    from tests.browser.explorer_page import open_explorer

    with open_explorer(browser, ui_server.url, artifacts, request.node.name) as page:
        yield page


@pytest.fixture
def demo_explorer(browser: Browser, demo_server: ExplorerServer, artifacts: Path,
                  request: pytest.FixtureRequest) -> Iterator[ExplorerPage]:
    """A fresh explorer page of the embedded demo registry."""
    from tests.browser.explorer_page import open_explorer

    with open_explorer(browser, demo_server.url, artifacts, request.node.name) as page:
        yield page
