"""Imports point one way: interfaces -> caller -> adapters/sources -> core -> contract."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "toolcaller"

# layer -> the toolcaller modules it must never import (at any depth, lazily or not)
FORBIDDEN = {
    "core": ("toolcaller.caller", "toolcaller.cli", "toolcaller.widgets", "toolcaller.sources",
             "toolcaller.adapters.python", "toolcaller.adapters.script",
             "toolcaller.adapters.http", "toolcaller.adapters.mcp"),
    "adapters": ("toolcaller.caller", "toolcaller.cli", "toolcaller.widgets"),
    "sources": ("toolcaller.cli", "toolcaller.widgets"),
    "errors.py": ("toolcaller.",),
    "_types.py": ("toolcaller.",),
    "envelope.py": ("toolcaller.caller", "toolcaller.core", "toolcaller.adapters",
                    "toolcaller.sources", "toolcaller.widgets", "toolcaller.cli"),
}
# third-party modules a layer may not import at module level (they are heavy or optional)
HEAVY = ("pandas", "ipywidgets", "jsonschema", "jsonschema_rs", "referencing",
         "jsonschema_specifications", "mcp", "httpx", "dask")


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _layer(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0]


def _imports(path: Path) -> list[tuple[str, bool]]:
    """Every imported module name and whether the import is at module level."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, id(node) in top))
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_one_way(path: Path) -> None:
    """No module imports a layer above its own."""
    banned = FORBIDDEN.get(_layer(path), ())
    bad = [name for name, _ in _imports(path) if name.startswith(banned)] if banned else []
    assert not bad, f"{path.name} imports {bad} against the layering"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_heavy_dependencies_are_imported_lazily(path: Path) -> None:
    """Heavy or optional libraries are imported inside functions, except by their own layer."""
    layer = _layer(path)
    allowed = {"widgets": ("ipywidgets", "pandas"), "adapters": ("httpx",)}.get(layer, ())
    if path.name in {"http.py", "openapi.py"}:
        allowed = (*allowed, "httpx")
    eager = [
        name for name, at_top in _imports(path)
        if at_top and name.split(".")[0] in HEAVY and name.split(".")[0] not in allowed
    ]
    assert not eager, f"{path.name} imports {eager} at module level"
