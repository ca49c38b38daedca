"""The public surface: a sorted, complete __all__ and a light `import toolcaller`."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

import toolcaller


class TestPublicApi:
    def test_all_is_sorted_and_complete(self) -> None:
        """`__all__` is sorted and lists exactly the public names the package exports."""
        assert toolcaller.__all__ == sorted(toolcaller.__all__)
        for name in toolcaller.__all__:
            getattr(toolcaller, name)  # each loads on first use
        public = {
            name for name, value in vars(toolcaller).items()
            if not name.startswith("_") and not isinstance(value, types.ModuleType)
            and name not in ("annotations", "importlib", "TYPE_CHECKING", "Any")
        }
        assert public == set(toolcaller.__all__)
        assert set(toolcaller.__all__) <= set(dir(toolcaller))

    def test_an_unknown_name_is_an_attribute_error(self) -> None:
        """A name the package does not export is an AttributeError, as for any module."""
        with pytest.raises(AttributeError, match="no attribute 'Nope'"):
            _ = toolcaller.Nope  # type: ignore[attr-defined]

    def test_import_loads_neither_asyncio_nor_pydantic(self) -> None:
        """`import toolcaller` is a few milliseconds: the public names load on first use."""
        code = ("import sys, json, toolcaller\n"
                "print(json.dumps([m for m in ('asyncio', 'pydantic', 'toolcaller.caller')"
                " if m in sys.modules]))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)
        assert json.loads(out.stdout) == []

    def test_import_is_light(self) -> None:
        """`import toolcaller` loads no heavy library: no pandas, jsonschema(-rs), httpx…"""
        code = (
            "import sys, json, toolcaller\n"
            "print(json.dumps([m for m in ('pandas', 'ipywidgets', 'jsonschema', 'httpx', 'mcp',"
            " 'jsonschema_rs', 'referencing') if m in sys.modules]))"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)
        assert json.loads(out.stdout) == []

    def test_discover_does_not_import_heavy_modules(self) -> None:
        """Discovery on the demo registry needs no pandas, jsonschema, referencing or httpx."""
        code = (
            "import sys, json\n"
            "from toolcaller import ToolCaller\n"
            "ToolCaller().discover('math')\n"
            "print(json.dumps([m for m in ('pandas', 'ipywidgets', 'httpx', 'jsonschema',"
            " 'referencing') if m in sys.modules]))"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)
        assert json.loads(out.stdout) == []
