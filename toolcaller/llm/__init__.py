"""The model side: run a response's tool calls, answer in the provider's own messages.

```python
replies = caller.run_tool_calls(response)          # or: await caller.arun_tool_calls(response)
messages += replies.messages                       # the provider's reply shape, one per call
replies.envelopes                                  # one Envelope per call, in call order
tools = toolcaller.llm.import_functions(definitions)   # OpenAI/Anthropic/Gemini/MCP/BFCL defs
```

`calls` reads responses, `replies` writes the answers, `run` runs the calls through the
engine, `strict` writes strict-mode schemas (`toolcaller.export.to_openai(tools, strict=True)`);
`import_functions` lives with the other sources (`toolcaller.sources.functions`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolcaller.llm.calls import PROVIDERS, Provider, ToolCall, read_tool_calls
    from toolcaller.llm.replies import ToolReplies
    from toolcaller.llm.run import RunSettings, arun_tool_calls, run_tool_calls
    from toolcaller.llm.strict import drop_absent_nulls, strict_schema
    from toolcaller.sources.functions import import_functions

__all__ = [
    "PROVIDERS",
    "Provider",
    "RunSettings",
    "ToolCall",
    "ToolReplies",
    "arun_tool_calls",
    "drop_absent_nulls",
    "import_functions",
    "read_tool_calls",
    "run_tool_calls",
    "strict_schema",
]

# Imported on first use: `toolcaller.export` imports `toolcaller.llm.strict`, and this package
# must not pull the runner (which imports `toolcaller.export`) in with it.
_HOMES = {
    "PROVIDERS": "toolcaller.llm.calls",
    "Provider": "toolcaller.llm.calls",
    "ToolCall": "toolcaller.llm.calls",
    "read_tool_calls": "toolcaller.llm.calls",
    "ToolReplies": "toolcaller.llm.replies",
    "RunSettings": "toolcaller.llm.run",
    "arun_tool_calls": "toolcaller.llm.run",
    "run_tool_calls": "toolcaller.llm.run",
    "drop_absent_nulls": "toolcaller.llm.strict",
    "strict_schema": "toolcaller.llm.strict",
    "import_functions": "toolcaller.sources.functions",
}


def __getattr__(name: str) -> Any:
    """Import a public name from its home module on first use (see `_HOMES`)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'toolcaller.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
