"""The layers hold: every module belongs to one, imports point one way, and no import circles.

Layers, from the bottom: the contract (`errors`, `envelope`, `request`, `_types`), `core`,
then `adapters` and `sources` (sources may use an adapter's public types, never the other
way), `demo`, the composition root `caller`, and what is built on it (`batch`, `llm`,
`serve`, `widgets`, `ui`, `cli`, `export`, `testing`). Imports are read with `ast`, the ones
inside functions included; those under `if TYPE_CHECKING:` are annotations, not imports.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "toolcaller"
CONTRACT = {"toolcaller._types", "toolcaller.errors", "toolcaller.envelope", "toolcaller.request"}
TOP = {"toolcaller.caller": "caller", "toolcaller.cli": "interfaces",
       "toolcaller.export": "interfaces", "toolcaller.testing": "interfaces",
       "toolcaller.__main__": "interfaces", "toolcaller": "interfaces"}
PACKAGES = ("core", "adapters", "sources", "demo", "batch", "llm", "serve", "widgets", "ui")
BELOW_CALLER = {"contract", "core", "adapters", "sources", "demo"}
ALLOWED = {
    "contract": {"contract"},
    "core": {"contract", "core"},
    "adapters": {"contract", "core", "adapters"},
    "sources": {"contract", "core", "adapters", "sources"},
    "demo": {"contract", "core", "adapters", "sources", "demo"},
    "caller": BELOW_CALLER | {"caller", "batch", "widgets", "llm"},
    "batch": BELOW_CALLER | {"batch"},
    "llm": BELOW_CALLER | {"caller", "llm", "interfaces"},
    "serve": BELOW_CALLER | {"caller", "serve", "llm", "interfaces"},
    "widgets": {"contract", "core", "widgets"},
    "ui": BELOW_CALLER | {"caller", "widgets", "ui", "interfaces"},
    "interfaces": {"contract", "core", "adapters", "sources", "demo", "caller", "batch", "llm",
                   "serve", "widgets", "ui", "interfaces"},
}
# The caller may import these layers only inside functions (they are built on it).
LAZY_FOR_CALLER = {"batch", "widgets", "llm"}
HEAVY = ("pandas", "ipywidgets", "jsonschema", "jsonschema_rs", "referencing",
         "jsonschema_specifications", "mcp", "httpx", "dask", "tqdm", "yaml")


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> str | None:
    """The layer a module of the package belongs to, or None if it belongs to none."""
    if module in CONTRACT:
        return "contract"
    if module in TOP:
        return TOP[module]
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in PACKAGES else None


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(nodes: list[ast.stmt], top: bool, found: list[tuple[str, list[str], bool]]) -> None:
    for node in nodes:
        if isinstance(node, ast.If) and _is_type_checking(node):
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, [], top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [a.name for a in node.names], top))
        inner_top = top and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef |
                                                  ast.ClassDef | ast.Lambda)
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                _walk([b for b in block if isinstance(b, ast.stmt | ast.ExceptHandler)],
                      inner_top, found)  # type: ignore[arg-type]


@cache
def imports(module: str) -> tuple[tuple[str, list[str], bool], ...]:
    """(imported module, names, at module level) for each import of a module."""
    found: list[tuple[str, list[str], bool]] = []
    _walk(ast.parse(MODULES[module].read_text(encoding="utf-8")).body, True, found)
    return tuple(found)


def edges(module: str) -> set[tuple[str, bool]]:
    """The package modules a module imports (a `from a import b` of module `a.b` is `a.b`)."""
    out: set[tuple[str, bool]] = set()
    for target, names, top in imports(module):
        if not target.startswith("toolcaller"):
            continue
        subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
        out.update((sub, top) for sub in subs)
        if len(subs) < len(names) or not names:
            out.add((target, top))
    return out


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_belongs_to_a_layer(module: str) -> None:
    """No module lives outside the layers."""
    assert layer(module) is not None, f"{module} belongs to no layer"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_one_way(module: str) -> None:
    """A module imports only from its own layer and the layers below it."""
    own = layer(module)
    assert own is not None
    bad = [(target, layer(target)) for target, _ in edges(module)
           if layer(target) not in ALLOWED[own]]
    assert not bad, f"{module} ({own}) imports {bad} against the layering"
    if own == "caller":
        eager = [t for t, top in edges(module) if top and layer(t) in LAZY_FOR_CALLER]
        assert not eager, f"the caller imports {eager} at module level"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_name_of_another_module(module: str) -> None:
    """Nothing imports a private name of another module, or another package's private module."""
    bad = []
    for target, names, _ in imports(module):
        if not target.startswith("toolcaller"):
            continue
        bad += [f"{target}.{n}" for n in names if n.startswith("_")
                and f"{target}.{n}" not in MODULES]
        for name in [target, *(f"{target}.{n}" for n in names)]:
            parts = name.split(".")
            private = [i for i, p in enumerate(parts) if p.startswith("_") and i > 0]
            if private and name in MODULES and not module.startswith(
                    ".".join(parts[:private[0]])):
                bad.append(name)
    assert not bad, f"{module} imports private {bad}"


def test_no_import_circle() -> None:
    """No chain of imports, function-level ones included, leads back to where it started."""
    graph = {m: sorted(t for t, _ in edges(m) if t in MODULES and t != m) for m in MODULES}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        state[node] = 2
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state and (circle := visit(start)) is not None:
            pytest.fail("import circle: " + " -> ".join(circle))


@pytest.mark.parametrize("module", sorted(MODULES))
def test_heavy_dependencies_are_imported_lazily(module: str) -> None:
    """Heavy or optional libraries are imported inside functions, except by their own layer."""
    own = layer(module)
    allowed = {"widgets": ("ipywidgets", "pandas"), "adapters": ("httpx",)}.get(own or "", ())
    if module.endswith((".http", ".openapi")):
        allowed = (*allowed, "httpx")
    eager = [target for target, _, top in imports(module)
             if top and target.split(".")[0] in HEAVY and target.split(".")[0] not in allowed]
    assert not eager, f"{module} imports {eager} at module level"
