#!/usr/bin/env bash
# CI: the explorer in headless Chromium (tests/browser), as a Voilà page and as a notebook run
# in JupyterLab, light and dark, at 1400x900 and 1024x700. Installs what it needs itself:
# Debian's chromium (Playwright's own browser download needs a network CI does not have), a
# virtual environment of its own, .venv-browser (Playwright needs greenlet >= 3, which the test
# extra's httpbin forbids on Python < 3.12, so the two cannot share .venv-ci) with JupyterLab,
# and the widgets' HTML renderer from npm (.venv-browser/node), with which the notebooks are
# drawn from their saved widget state, as nbviewer does.
# Screenshots, console logs and the timings land in tests/artifacts/browser/.
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM="${TOOLCALLER_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM" ]; then
    echo "== install chromium (apt)"
    apt-get update -qq && apt-get install -y -qq chromium chromium-driver
fi
"$CHROMIUM" --version 2>/dev/null || true

echo "== virtual environment with the browser extra (.venv-browser)"
[ -x .venv-browser/bin/python ] || python3 -m venv .venv-browser
# shellcheck disable=SC1091
. .venv-browser/bin/activate
python -m pip install --quiet --upgrade pip
# The pytest plugins are those pyproject's [tool.pytest.ini_options] needs (nbval's options in
# addopts, pytest-timeout's `timeout`, pytest-asyncio's `asyncio_mode`), as in the test extra.
python -m pip install --quiet -e ".[notebook,browser]" \
    "pytest>=8" "pytest-timeout>=2.3" "pytest-asyncio>=0.24" "nbval>=0.11"
python -m pip list 2>/dev/null \
    | grep -iE '^(playwright|voila|jupyterlab|jupyter[-_]server|ipywidgets|ipykernel) '

python -c "import playwright.sync_api, voila, jupyterlab"  # fail here, not as skipped tests

echo "== the widgets' HTML renderer (npm), for notebooks drawn without a kernel"
mkdir -p .venv-browser/node
[ -d .venv-browser/node/node_modules/@jupyter-widgets/html-manager ] \
    || npm install --silent --no-audit --no-fund --prefix .venv-browser/node \
        @jupyter-widgets/html-manager@1.0.15 requirejs@2.3.7

echo "== browser suite"
# Required: a missing piece fails the tests instead of skipping them.
export TOOLCALLER_CHROMIUM="$CHROMIUM" TOOLCALLER_REQUIRE_BROWSER=1
python -m pytest tests/browser -m browser -p no:cacheprovider
