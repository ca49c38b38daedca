"""The public surface: a sorted, complete __all__ and a light `import toolcaller`."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import toolcaller


class TestPublicApi:
    def test_all_is_sorted_and_complete(self) -> None:
        """`__all__` is sorted and lists exactly the public names the package exports."""
        assert toolcaller.__all__ == sorted(toolcaller.__all__)
        public = {
            name for name, value in vars(toolcaller).items()
            if not name.startswith("_") and not isinstance(value, types.ModuleType)
        }
        assert public == set(toolcaller.__all__)

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
