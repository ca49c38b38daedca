"""nbval settings for the notebooks: the sanitize file is found from any working directory."""

from __future__ import annotations

from pathlib import Path

import pytest

SANITIZE = Path(__file__).resolve().parent / "sanitize.cfg"


def pytest_configure(config: pytest.Config) -> None:
    """Resolve a relative `--nbval-sanitize-with` (pyproject's addopts) against the rootdir."""
    given = getattr(config.option, "nbval_sanitize_with", None)
    if given and not Path(given).is_absolute() and not Path(given).exists():
        config.option.nbval_sanitize_with = str(config.rootpath / given)
    elif given is None and hasattr(config.option, "nbval_sanitize_with"):
        config.option.nbval_sanitize_with = str(SANITIZE)
