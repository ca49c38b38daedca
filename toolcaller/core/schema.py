"""JSON Schemas: params validation (fast path + detailed violations) and schemas from functions."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, Literal

from toolcaller._types import Schema
from toolcaller.core.checker import compile_checker
from toolcaller.errors import ExecutionError

__all__ = [
    "ParamsValidator",
    "check_schema",
    "describe_function",
    "schema_from_function",
]

MAX_VIOLATIONS = 50


class ParamsValidator:
    """Validates params against one schema: a compiled fast path, jsonschema for the details."""

    __slots__ = ("_check", "_full", "schema")

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self._check: Callable[[object], bool] | None = compile_checker(schema)
        self._full: Any = None

    def violations(self, params: Any) -> list[dict[str, str]]:
        """Return every violation as `{"pointer", "message"}`; an empty list when valid."""
        check = self._check
        try:
            if check is not None and check(params):
                return []
            validator = self._full
            if validator is None:
                validator = self._full = _build_validator(self.schema)
            found = []
            for error in validator.iter_errors(params):
                found.extend(_describe(error))
                if len(found) >= MAX_VIOLATIONS:
                    break
        except RecursionError:
            return [{"pointer": "", "message": "the params are nested too deeply to check"}]
        except ExecutionError:
            raise
        except Exception as exc:
            raise ExecutionError(
                f"the tool's paramsSchema cannot be used: {type(exc).__name__}: {exc}",
                permanent=True) from exc
        except BaseException as exc:
            # A RecursionError met inside jsonschema's Rust helpers (rpds, a `$ref` cycle
            # under `not`) comes out as pyo3's PanicException, a BaseException.
            if type(exc).__name__ != "PanicException":
                raise
            return [{"pointer": "", "message": "the params are nested too deeply to check"}]
        found.sort(key=lambda v: v["pointer"])
        return found


def _build_validator(schema: Schema) -> Any:
    from jsonschema.validators import Draft202012Validator, validator_for

    problem = check_schema(schema)
    if problem is not None:
        raise ExecutionError(f"the tool's paramsSchema is not a valid JSON Schema: {problem}",
                             permanent=True)
    cls = validator_for(schema, default=Draft202012Validator)
    return cls(schema)


def check_schema(schema: Any) -> str | None:
    """Return why `schema` is not a valid JSON Schema, or `None` if it is."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    if not isinstance(schema, dict | bool):
        return f"a schema is an object or a boolean, not {type(schema).__name__}"
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        where = _pointer(exc.absolute_path)
        return f"{exc.message} (at {where or '/'})"
    return unresolved_ref(schema)


def unresolved_ref(schema: Any) -> str | None:
    """Return why a `$ref` in the schema cannot be followed (remote, or pointing nowhere)."""
    for ref, where in _refs(schema, ""):
        if not isinstance(ref, str) or not ref.startswith("#"):
            return f"$ref {ref!r} at {where or '/'}: only local references (#/...) are followed"
        if _follow(schema, ref[1:]) is _MISSING:
            return f"$ref {ref!r} at {where or '/'} points to nothing in the schema"
    return None


_MISSING = object()


def _refs(node: Any, where: str, depth: int = 0) -> list[tuple[Any, str]]:
    if depth > 64:
        return []
    found: list[tuple[Any, str]] = []
    if isinstance(node, dict):
        if "$ref" in node:
            found.append((node["$ref"], where))
        for key, value in node.items():
            if key not in ("enum", "const", "default", "examples"):
                found += _refs(value, f"{where}/{key}", depth + 1)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _refs(value, f"{where}/{index}", depth + 1)
    return found


def _follow(schema: Any, pointer: str) -> Any:
    node = schema
    for part in pointer.split("/")[1:] if pointer else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def _pointer(path: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _describe(error: Any) -> list[dict[str, str]]:
    """Turn one jsonschema error into violations, pointing at the field a user must fix."""
    base = _pointer(error.absolute_path)
    instance = error.instance
    if error.validator == "required" and isinstance(instance, dict):
        missing = [n for n in error.validator_value if isinstance(n, str) and n not in instance]
        name = _quoted_name(error.message)
        if name in missing:
            return [{"pointer": _pointer([*error.absolute_path, name]),
                     "message": f"{name!r} is required"}]
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        schema = error.schema if isinstance(error.schema, dict) else {}
        allowed = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        extras = [
            k for k in instance
            if k not in allowed and not any(re.search(p, k) for p in patterns)
        ]
        if extras:
            return [{"pointer": _pointer([*error.absolute_path, k]),
                     "message": f"{k!r} is not an allowed property"} for k in extras]
    return [{"pointer": base, "message": _short(error.message)}]


def _quoted_name(message: str) -> str | None:
    match = re.match(r"^'(.*)' is a required property$", message, re.DOTALL)
    return match.group(1) if match else None


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[:limit] + "…"


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
