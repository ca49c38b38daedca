"""The notebooks are stored executed and check themselves; nbval and Binder are set up to run them.

nbval itself runs the notebooks (`testpaths` includes `notebooks/`); these tests pin what nbval
cannot see: a cell stored unrun is never compared, a sanitize pattern that stopped matching
hides nothing, and a Binder pin that no longer satisfies `pyproject.toml` breaks mybinder only.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import nbformat
import pytest
from nbval.plugin import get_sanitize_patterns  # type: ignore[import-untyped]
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
EXPECTED = ["01-quickstart.ipynb", "02-acceptance.ipynb", "03-debugging-failures.ipynb",
            "04-model-tool-calls.ipynb"]
CHECK = "# NBVAL_CHECK_OUTPUT"
MAX_BYTES = 600_000  # with the widget state GitHub and nbviewer need, no images
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_read = cast(Callable[..., Any], nbformat.read)  # nbformat is untyped
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _code_cells(path: Path) -> list[Any]:
    notebook = _read(path, as_version=4)
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def _ids(path: Path) -> str:
    return path.name


class TestNotebooks:
    def test_the_notebooks_are_there(self) -> None:
        """Quick start, acceptance, debugging and model-side notebooks live in notebooks/."""
        assert [p.name for p in NOTEBOOKS] == EXPECTED

    @pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
    def test_is_valid_and_small(self, path: Path) -> None:
        """Each notebook is valid nbformat 4 with the python3 kernel, and not too big."""
        notebook = _read(path, as_version=4)
        nbformat.validate(notebook)
        assert notebook.metadata.kernelspec.name == "python3"
        assert path.stat().st_size < MAX_BYTES

    @pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
    def test_widgets_render_without_a_kernel(self, path: Path) -> None:
        """Every widget shown has its state saved (nbviewer renders it), and a static snapshot
        for renderers that run no widgets (GitHub), not `Explorer(children=(…`."""
        notebook = _read(path, as_version=4)
        state = notebook.metadata.widgets[WIDGET_STATE]["state"]
        shown = [output.data for cell in _code_cells(path) for output in cell.outputs
                 if WIDGET_VIEW in output.get("data", {})]
        assert shown
        for data in shown:
            assert data[WIDGET_VIEW]["model_id"] in state
            assert "text/html" in data
            assert "children=" not in data["text/plain"]

    @pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
    def test_every_code_cell_was_run_once_in_order(self, path: Path) -> None:
        """Stored outputs come from one clean top-to-bottom run (nbval skips unrun cells)."""
        counts = [cell.execution_count for cell in _code_cells(path)]
        assert counts == list(range(1, len(counts) + 1))

    @pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
    def test_no_error_or_warning_is_stored(self, path: Path) -> None:
        """No stored output is an error or a stderr stream."""
        for cell in _code_cells(path):
            for output in cell.outputs:
                assert output.output_type != "error", cell.source
                assert output.get("name") != "stderr", (cell.source, output.get("text"))

    @pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
    def test_every_cell_that_shows_something_asserts_it(self, path: Path) -> None:
        """A code cell with output (or marked for nbval) holds an assert on what it shows."""
        for cell in _code_cells(path):
            if cell.outputs or CHECK in cell.source:
                assert re.search(r"^\s*assert\b", cell.source, re.MULTILINE), cell.source

    @pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
    def test_checked_cells_print_something(self, path: Path) -> None:
        """Cells marked `# NBVAL_CHECK_OUTPUT` have stored output for nbval to compare."""
        checked = [cell for cell in _code_cells(path) if cell.source.startswith(CHECK)]
        assert checked
        for cell in checked:
            assert cell.outputs, cell.source

    def test_acceptance_notebook_runs_every_seed_case(self) -> None:
        """TC-01 … TC-10 each have a checked cell; the last cell checks all six codes."""
        cells = _code_cells(NOTEBOOKS_DIR / "02-acceptance.ipynb")
        for number in range(1, 11):
            case = f"TC-{number:02d}"
            assert any(case in c.source and c.source.startswith(CHECK) for c in cells), case
        assert "ErrorCode" in cells[-1].source
        assert "codes produced: EXECUTION_ERROR, INVALID_PARAMS, PARSE_ERROR, RETRY_EXHAUSTED, " \
               "TIMEOUT, TOOL_NOT_FOUND" in cells[-1].outputs[0].text


SAMPLES = [
    ('"timestamp": "2026-11-30T12:00:00.123Z"', '"timestamp": "TIMESTAMP"'),
    ("2026-11-30 03:04:10.673918962+00:00", "TIMESTAMP"),
    ("started 12:34:56…", "started TIME…"),
    ('"duration": 1.234, "wait": 0.0', '"duration": DURATION, "wait": DURATION'),
    ("{'duration_ms': 12.5}", "{'duration_ms': DURATION}"),
    ("1: TIMEOUT 100.5 ms → wait 1,000.0 ms", "1: TIMEOUT DURATION ms → wait DURATION ms"),
    ('"callId": "1f3a9c2e-12"', '"callId": "CALL-ID"'),
    ("key '29644fd0-b176-48bc-b8f6-195877dc3bd2'", "key 'UUID'"),
    ('{"model_id": "cb29482e7e3a4475b5404e9ecf370c8f"}', '{"model_id": "MODEL-ID"}'),
    ("children=IPY_MODEL_cb29482e7e3a4475b5404e9ecf370c8f", "children=IPY_MODEL_ID"),
    ("#T_1a2b3_row0_col0 {color: red}", "#T_STYLER_row0_col0 {color: red}"),
    ("registry: /tmp/tmpxo2qo_mz/tools.json", "registry: TEMPDIR/tools.json"),
    ("at 0x7f3a2b1c4d50>", "at 0xADDRESS>"),
    ("no result within 100 ms", "no result within 100 ms"),  # a whole-number setting stays
    ("{'sum': 3} in 1 attempt", "{'sum': 3} in 1 attempt"),
]


@pytest.fixture(scope="module")
def patterns() -> list[tuple[str, str]]:
    text = (NOTEBOOKS_DIR / "sanitize.cfg").read_text(encoding="utf-8")
    return list(get_sanitize_patterns(text))


@pytest.fixture(scope="module")
def pins() -> dict[str, Requirement]:
    lines = (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    found = [Requirement(line) for line in (x.split("#")[0].strip() for x in lines) if line]
    return {canonicalize_name(r.name): r for r in found}


class TestSanitize:
    @pytest.mark.parametrize(("raw", "masked"), SAMPLES, ids=[s[0][:30] for s in SAMPLES])
    def test_what_varies_is_masked_and_nothing_else(
        self, patterns: list[tuple[str, str]], raw: str, masked: str
    ) -> None:
        """Timestamps, durations, ids, temp paths and Styler ids are masked; results are not."""
        text = raw
        for regex, replace in patterns:  # as nbval applies them, in order
            text = re.sub(regex, replace, text)
        assert text == masked


class TestConfiguration:
    def test_pytest_runs_the_notebooks_with_nbval(self) -> None:
        """`python -m pytest` collects notebooks/ in lax mode, current env, with the sanitizer."""
        options = PYPROJECT["tool"]["pytest"]["ini_options"]
        assert "notebooks" in options["testpaths"]
        assert {"--nbval-lax", "--nbval-current-env"} <= set(options["addopts"])
        assert "--nbval-sanitize-with=notebooks/sanitize.cfg" in options["addopts"]
        assert (ROOT / "notebooks" / "sanitize.cfg").is_file()

    def test_test_extra_brings_nbval_and_a_kernel(self) -> None:
        """The test extra has nbval; the notebook extra (in it) has ipykernel."""
        extras = PYPROJECT["project"]["optional-dependencies"]
        names = {canonicalize_name(Requirement(r).name) for r in extras["test"]}
        assert "nbval" in names
        assert "ipykernel" in {canonicalize_name(Requirement(r).name) for r in extras["notebook"]}


class TestBinder:
    def test_runtime_is_python_3_11(self) -> None:
        """mybinder builds Python 3.11."""
        runtime = (ROOT / "binder" / "runtime.txt").read_text(encoding="utf-8")
        assert runtime.strip() == "python-3.11"

    def test_every_requirement_is_pinned(self, pins: dict[str, Requirement]) -> None:
        """Each line pins one exact version."""
        for requirement in pins.values():
            assert re.fullmatch(r"==[\w.]+", str(requirement.specifier)), requirement

    def test_pins_satisfy_the_package_and_its_notebook_extra(
        self, pins: dict[str, Requirement]
    ) -> None:
        """postBuild installs with --no-deps: every dependency and notebook need is pinned here."""
        project = PYPROJECT["project"]
        needed = [Requirement(r) for r in
                  [*project["dependencies"], *project["optional-dependencies"]["notebook"]]]
        for requirement in needed:
            pin = pins.get(canonicalize_name(requirement.name))
            assert pin is not None, f"{requirement.name} is missing from binder/requirements.txt"
            version = str(pin.specifier).removeprefix("==")
            assert requirement.specifier.contains(version), (str(requirement), version)

    def test_post_build_installs_the_package(self) -> None:
        """postBuild is executable and pip-installs this repository without touching the pins."""
        post_build = ROOT / "binder" / "postBuild"
        assert os.access(post_build, os.X_OK)
        text = post_build.read_text(encoding="utf-8")
        assert text.startswith("#!/usr/bin/env bash")
        assert re.search(r"pip install --no-deps .*\"\.\[notebook\]\"", text)

    def test_the_binder_check_is_executable(self) -> None:
        """.ci/check_binder.sh builds the Binder environment and runs the notebooks in it."""
        script = ROOT / ".ci" / "check_binder.sh"
        assert os.access(script, os.X_OK)
        text = script.read_text(encoding="utf-8")
        assert "binder/requirements.txt" in text
        assert "binder/postBuild" in text
        assert "pytest notebooks" in text
