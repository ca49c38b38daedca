"""The registry the browser suite's pages list: the demo's Python tools, form tools, and bulk.

`build_registry()` returns it as JSON data. Besides the demo registry's Python tools it holds:

- `form.signup`: every field kind the issue's complaints name (formats the engine checks, a
  pattern, bounded numbers, an array of enum strings, an optional boolean, a `oneOf` with two
  object variants, a nested array whose items have a `minimum`, a local date-time);
- `form.slow`: sleeps the seconds given (a re-run that takes a while);
- tools whose badges come from annotations (registry `annotations`) and HTTP methods;
- `bulk.tool_NNN`: enough tools that the catalogue has more rows than it lists at once.

Every tool is a Python tool of the demo module (`showcase` returns its params), so a call needs
nothing but the kernel; the HTTP tools are listed, never called.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "toolcaller" / "demo" / "registry.json"
BULK_TOOLS = 480
ECHO = "toolcaller.demo.tools:showcase"

SIGNUP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Your name, capitalised", "pattern": "^[A-Z]"},
        "email": {"type": "string", "format": "email", "description": "Where we write to"},
        "homepage": {"type": "string", "format": "uri"},
        "count": {"type": "integer", "minimum": 1, "maximum": 100,
                  "description": "How many seats"},
        "plan": {"enum": ["free", "team", "enterprise"], "description": "Which plan"},
        "newsletter": {"type": "boolean", "description": "Send the monthly letter"},
        "topics": {"type": "array", "items": {"enum": ["python", "rust", "go"]},
                   "description": "What you like to read about"},
        "meeting": {"type": "string", "format": "date-time", "description": "First call"},
        "payment": {"oneOf": [
            {"title": "card", "type": "object",
             "properties": {"method": {"const": "card"},
                            "number": {"type": "string", "pattern": "^[0-9]{16}$"}},
             "required": ["method", "number"]},
            {"title": "bank", "type": "object",
             "properties": {"method": {"const": "bank"}, "iban": {"type": "string"}},
             "required": ["method", "iban"]},
        ]},
        "items": {"type": "array", "items": {
            "type": "object",
            "properties": {"sku": {"type": "string"},
                           "quantity": {"type": "integer", "minimum": 1}},
            "required": ["sku", "quantity"]}},
    },
    "required": ["name", "email", "count", "plan"],
    "additionalProperties": False,
}


def build_registry() -> dict[str, Any]:
    """Return the page registry as JSON data (see the module docstring)."""
    demo = json.loads(DEMO.read_text("utf-8"))
    tools = [tool for tool in demo["tools"] if "python" in tool]
    tools += [
        {"name": "form.signup", "description": "Sign up: a form with every kind of field the "
         "explorer draws, checked by the engine's own validator.",
         "paramsSchema": copy.deepcopy(SIGNUP_SCHEMA), "metadata": {"tags": ["forms"]},
         "python": ECHO},
        {"name": "form.slow", "description": "Sleep the seconds given, then answer.",
         "paramsSchema": {"type": "object", "properties": {
             "seconds": {"type": "number", "minimum": 0, "maximum": 60}},
             "required": ["seconds"], "additionalProperties": False},
         "metadata": {"tags": ["forms", "timeout"]}, "options": {"timeout": 20000,
                                                               "deadline": 20000, "retries": 0},
         "python": "toolcaller.demo.tools:slow"},
        {"name": "notes.read", "description": "Read a note (registry annotations).",
         "paramsSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
         "metadata": {"tags": ["badges"], "annotations": {
             "readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}},
         "python": ECHO},
        {"name": "notes.delete", "description": "Delete a note (registry annotations).",
         "paramsSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
         "metadata": {"tags": ["badges"], "annotations": {
             "destructiveHint": True, "idempotentHint": True, "openWorldHint": True}},
         "python": ECHO},
        {"name": "web.get", "description": "An HTTP GET (listed, never called).",
         "paramsSchema": {"type": "object", "properties": {}},
         "metadata": {"tags": ["badges", "http"]},
         "http": {"method": "GET", "url": "http://127.0.0.1:9/get"}},
        {"name": "web.post", "description": "An HTTP POST (listed, never called).",
         "paramsSchema": {"type": "object", "properties": {}},
         "metadata": {"tags": ["badges", "http"]},
         "http": {"method": "POST", "url": "http://127.0.0.1:9/post"}},
    ]
    long_text = ("A bulk tool with a long description that goes on to say what it does in "
                 "more words than a catalogue row can hold, so that the row is cut and the "
                 "whole text must be readable somewhere else: here it ends with THE-END.")
    tools += [
        {"name": f"bulk.tool_{n:03d}", "description": long_text if n == 0 else f"Bulk tool {n}.",
         "paramsSchema": {"type": "object", "properties": {}},
         "metadata": {"tags": ["bulk"]}, "python": ECHO}
        for n in range(BULK_TOOLS)
    ]
    demo["tools"] = tools
    demo.pop("mcpServers", None)
    return demo


def write_registry(path: Path) -> Path:
    """Write the page registry to `path` and return it."""
    path.write_text(json.dumps(build_registry(), indent=1), encoding="utf-8")
    return path
