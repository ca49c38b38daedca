"""JSON Schemas from functions (type hints and docstrings); params validation is re-exported."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, Literal

from toolcaller.core.validation import MAX_VIOLATIONS, ParamsValidator, check_schema

__all__ = [
    "MAX_VIOLATIONS",
    "ParamsValidator",
    "check_schema",
    "describe_function",
    "schema_from_function",
]


def describe_function(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """Return a function's summary and its per-argument descriptions from a Google docstring."""
    doc = inspect.getdoc(fn) or ""
    parts = re.split(r"\n\s*(?:Args|Arguments|Parameters|Returns|Raises|Yields|Examples?):\s*\n",
                     doc, maxsplit=1)
    summary = parts[0].strip()
    args: dict[str, str] = {}
    match = re.search(r"(?:Args|Arguments|Parameters):\s*\n(.*?)(?:\n\s*\n|\n\S|\Z)", doc,
                      re.DOTALL)
    if match:
        current = None
        for line in match.group(1).splitlines():
            head = re.match(r"\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)", line)
            if head:
                current = head.group(1).lstrip("*")
                args[current] = head.group(2).strip()
            elif current and line.strip():
                args[current] = f"{args[current]} {line.strip()}".strip()
    return summary, args


def schema_from_function(fn: Callable[..., Any]) -> tuple[dict[str, Any], Any]:
    """Return the params schema of a function (from type hints and docstring) and its model.

    The model (a pydantic class) converts validated JSON params to the annotated types
    (datetimes, enums, models) before the call.
    """
    from pydantic import ConfigDict, Field, create_model

    _, arg_docs = describe_function(fn)
    fields: dict[str, Any] = {}
    extra: Literal["allow", "forbid"] = "forbid"
    try:  # postponed annotations (`from __future__ import annotations`) are strings
        signature = inspect.signature(fn, eval_str=True)
    except (NameError, TypeError, SyntaxError):
        signature = inspect.signature(fn)
    for name, param in signature.parameters.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            extra = "allow"
            continue
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):
            continue
        annotation = Any if param.annotation is inspect.Parameter.empty else param.annotation
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (annotation, Field(default, description=arg_docs.get(name)))
    model = create_model(
        f"{getattr(fn, '__name__', 'tool')}_params",
        __config__=ConfigDict(extra=extra, arbitrary_types_allowed=True),
        **fields,
    )
    schema = model.model_json_schema()
    _drop_generated_titles(schema)
    return schema, model


def _drop_generated_titles(schema: Any) -> None:
    """Remove the titles pydantic derives from names: they repeat the name and add noise."""
    if isinstance(schema, dict):
        schema.pop("title", None)
        for key in ("properties", "$defs"):
            for sub in (schema.get(key) or {}).values():
                _drop_generated_titles(sub)
        for key in ("items", "additionalProperties"):
            _drop_generated_titles(schema.get(key))
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            for sub in schema.get(key) or []:
                _drop_generated_titles(sub)
