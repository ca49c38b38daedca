"""Browser suite fixtures: the explorer in Voilà and in JupyterLab, headless Chromium, timings.

Needs the `browser` extra (Voilà, Playwright), JupyterLab, and Debian's chromium at
/usr/bin/chromium (or $TOOLCALLER_CHROMIUM): `.ci/run_browser.sh` installs them. Without them
every test here is skipped with the reason (or fails, with TOOLCALLER_REQUIRE_BROWSER=1).
Playwright's own browser download is not used: it needs a network.

The issue-13 tests take `ui`: one explorer per host (a Voilà page; a notebook run in Lab) and
theme (light, dark), shared by the tests of that pair, at each window size (1400×900,
1024×700). Timings — page ready, pick a tool → its form, click → result — are printed at the
end of the run (`pytest_terminal_summary`), never asserted.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

    from tests.browser.explorer_page import ExplorerPage
    from tests.browser.hosts import LabServer
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
INSTALL_HINT = ("run .ci/run_browser.sh, or pip install -e '.[notebook,browser]' jupyterlab "
                "and apt-get install chromium")
SIZES = {"1400x900": (1400, 900), "1024x700": (1024, 700)}
HOSTS = [(host, theme) for host in ("voila", "lab") for theme in ("light", "dark")]
TIMINGS: list[tuple[str, str, float, str]] = []
"""(what, where, value, unit) measured by the suite, printed at the end."""
PLUGIN_POINTS = {"toolcaller.tools": "steps = tests.browser.progress_plugin:TOOLS",
                 "toolcaller.adapters": "steps = tests.browser.progress_plugin:StepsAdapter"}


def record_timing(what: str, where: str, seconds: float, unit: str = "s") -> None:
    """Keep a measured time (or another figure in `unit`) for the summary; print it too."""
    TIMINGS.append((what, where, seconds, unit))
    print(f"measured: {what} [{where}] {seconds:.2f} {unit}")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the timings the suite measured (min / median / max per measure and host)."""
    if not TIMINGS:
        return
    terminalreporter.section("explorer timings (printed, not asserted)")
    groups: dict[tuple[str, str, str], list[float]] = {}
    for what, where, value, unit in TIMINGS:
        groups.setdefault((what, where.split("-")[0], unit), []).append(value)
    lines = []
    for (what, host, unit), values in sorted(groups.items()):
        values.sort()
        line = (f"{what:<28} {host:<6} n={len(values):<3} min {values[0]:.2f} {unit}  "
                f"median {values[len(values) // 2]:.2f} {unit}  max {values[-1]:.2f} {unit}")
        lines.append(line)
        terminalreporter.write_line(line)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "timings.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


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
def page_env(tmp_path_factory: pytest.TempPathFactory, page_registry_file: Path,
             ) -> Iterator[dict[str, str]]:
    """What the page kernels run with: the page registry, and the progress plugin installed.

    The plugin is a fake dist-info on PYTHONPATH (as tests/sources/test_plugins.py makes one);
    the kernels inherit the environment of the servers started with it.
    """
    site = tmp_path_factory.mktemp("plugin-site")
    info = site / "tcbrowser-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tcbrowser\nVersion: 0.1\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "".join(f"[{group}]\n{line}\n" for group, line in PLUGIN_POINTS.items()), "utf-8")
    paths = [str(ROOT), str(site), os.environ.get("PYTHONPATH", "")]
    env = {"PYTHONPATH": os.pathsep.join(p for p in paths if p),
           "TOOLCALLER_REGISTRY": str(page_registry_file), "TOOLCALLER_PLUGINS": "1"}
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)  # serve() hands its own environment to Voilà
    yield env
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def page_server(need_voila: None, page_env: dict[str, str], page_registry_file: Path,
                artifacts: Path) -> Iterator[ExplorerServer]:
    """`toolcaller ui --registry <page registry> --plugins`."""
    from toolcaller.ui import serve

    with serve(page_registry_file, plugins=True,
               log_path=artifacts / "voila-page.log") as server:
        yield server


@pytest.fixture(scope="session")
def lab_server(need_voila: None, page_env: dict[str, str], artifacts: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab serving a folder with one explorer notebook per theme."""
    if importlib.util.find_spec("jupyterlab") is None:
        _skip(f"jupyterlab not installed ({INSTALL_HINT})")
    from tests.browser.hosts import LabServer, lab_notebook

    root = tmp_path_factory.mktemp("lab") / "notebooks"
    root.mkdir()
    for theme in ("light", "dark"):
        lab_notebook(root / f"explorer-{theme}.ipynb")
    server = LabServer(root, {**os.environ, **page_env}, artifacts / "lab.log")
    yield server
    server.stop()


@pytest.fixture(scope="session", params=HOSTS, ids=[f"{h}-{t}" for h, t in HOSTS])
def ui_session(request: pytest.FixtureRequest, browser: Browser, artifacts: Path,
               ) -> Iterator[ExplorerPage]:
    """One explorer per host and theme, shared by the tests of that pair."""
    from tests.browser.explorer_page import ExplorerPage, explorer_context

    host, theme = request.param
    where = f"{host}-{theme}"
    with explorer_context(browser, artifacts, where) as page:
        ui = ExplorerPage(page, artifacts=artifacts, prefix=where, host=host, theme=theme)
        if host == "voila":
            server = request.getfixturevalue("page_server")
            ui.open_voila(server.url + ("&theme=dark" if theme == "dark" else ""))
        else:
            lab = request.getfixturevalue("lab_server")
            ui.open_lab(lab.url(f"explorer-{theme}.ipynb"))
        record_timing("page ready", where, ui.ready_s)
        yield ui


@pytest.fixture(params=list(SIZES))
def ui(ui_session: ExplorerPage, request: pytest.FixtureRequest) -> Iterator[ExplorerPage]:
    """The host/theme's explorer at one window size, reset for the test (see `reset`)."""
    width, height = SIZES[request.param]
    ui_session.size = request.param
    ui_session.page.set_viewport_size({"width": width, "height": height})
    ui_session.test = request.node.name.split("[")[0].removeprefix("test_")
    ui_session.reset()
    yield ui_session
    ui_session.reset()


@pytest.fixture
def explorer(browser: Browser, ui_server: ExplorerServer, artifacts: Path,
             request: pytest.FixtureRequest) -> Iterator[ExplorerPage]:
    """A fresh explorer page (a new kernel, an empty history); console errors fail the test."""
    from tests.browser.explorer_page import open_explorer

    with open_explorer(browser, ui_server.url, artifacts, request.node.name) as page:
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
def demo_explorer(browser: Browser, demo_server: ExplorerServer, artifacts: Path,
                  request: pytest.FixtureRequest) -> Iterator[ExplorerPage]:
    """A fresh explorer page of the embedded demo registry."""
    from tests.browser.explorer_page import open_explorer

    with open_explorer(browser, demo_server.url, artifacts, request.node.name) as page:
        yield page
