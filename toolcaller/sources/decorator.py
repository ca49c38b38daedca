"""The `@tool` decorator: a Python function becomes a `Tool`, its schema from type hints."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, overload

from toolcaller.core.schema import describe_function, schema_from_function
from toolcaller.core.tool import Tool
from toolcaller.errors import UsageError

__all__ = ["from_function", "tool"]


def from_function(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    tags: list[str] | tuple[str, ...] = (),
    metadata: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    isolation: Literal["thread", "process"] | None = None,
    idempotent: bool = False,
    params_schema: dict[str, Any] | None = None,
    permanent_errors: tuple[type[BaseException], ...] | None = None,
) -> Tool:
    """Build a `Tool` from a function: name, description and schema from the function itself."""
    if isinstance(fn, Tool):
        return fn
    if not callable(fn):
        raise UsageError(f"@tool needs a function, got {type(fn).__name__}")
    summary, _ = describe_function(fn)
    try:
        schema, model = schema_from_function(fn)
    except Exception as exc:
        raise UsageError(
            f"cannot build a schema for {getattr(fn, '__qualname__', fn)!r}: {exc}"
        ) from exc
    meta = dict(metadata or {})
    if tags:
        meta["tags"] = list(tags)
    return Tool(
        name=name or str(getattr(fn, "__name__", "tool")),
        description=description if description is not None else summary,
        params_schema=params_schema if params_schema is not None else schema,
        kind="python",
        target=fn,
        metadata=meta,
        options=dict(options or {}),
        isolation=isolation,
        idempotent=idempotent,
        params_model=model if _needs_coercion(model) else None,
        permanent_errors=permanent_errors,
    )


def _needs_coercion(model: Any) -> bool:
    # Plain JSON types arrive as they must be; only richer annotations need pydantic's help.
    plain = {str, int, float, bool, list, dict, Any, type(None)}
    return any(field.annotation not in plain for field in model.model_fields.values())


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    tags: list[str] | tuple[str, ...] = (),
    metadata: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    isolation: Literal["thread", "process"] | None = None,
    idempotent: bool = False,
    permanent_errors: tuple[type[BaseException], ...] | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(fn: Callable[..., Any] | None = None, /, **settings: Any) -> Any:
    """Turn a function into a `Tool` (use as `@tool` or `@tool(name=..., tags=[...])`).

    The tool's params schema comes from the type hints (pydantic), its description from the
    docstring's first paragraph, and each param's description from the `Args:` section.
    The decorated object stays callable like the function. `permanent_errors` names the
    exceptions that are not retried (default: programming errors such as `TypeError`).
    """
    if fn is not None:
        return from_function(fn, **settings)
    return lambda f: from_function(f, **settings)
