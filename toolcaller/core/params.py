"""Params as the tool receives them: integral floats as ints, and a function's own types.

JSON Schema counts `2.0` as an integer, so it passes validation, but a Python tool given a
float where it declared an `int` fails (`"ab" * 2.0` is a TypeError). Integer-typed params
therefore reach every tool as ints. A `@tool` function whose annotations need more than JSON
(datetimes, enums, models) gets its params through its pydantic model first.
"""

from __future__ import annotations

from typing import Any

from toolcaller._types import JSONObject
from toolcaller.core.pointer import to_pointer
from toolcaller.errors import InvalidParamsError

__all__ = ["as_tool_params", "integral"]

MAX_DEPTH = 64


def as_tool_params(params: JSONObject, schema: Any, model: Any = None) -> JSONObject:
    """Return `params` as the tool receives them (see the module docstring).

    Raises:
        InvalidParamsError: the params do not fit the function's types (`model`).
    """
    params = integral(params, schema)
    if model is None:
        return params
    from pydantic import ValidationError

    try:
        instance = model.model_validate(params)
    except ValidationError as exc:
        violations = [{"pointer": to_pointer(e["loc"]), "message": e["msg"]}
                      for e in exc.errors()]
        raise InvalidParamsError(
            f"params do not fit the function's types: {violations[0]['message']}",
            details={"violations": violations},
        ) from None
    kwargs = {n: getattr(instance, n) for n in model.model_fields
              if n in instance.model_fields_set or n in params}
    kwargs.update(instance.model_extra or {})
    return kwargs


def integral(value: Any, schema: Any, depth: int = 0) -> Any:
    """Return `value` with integral floats turned into ints wherever `schema` wants integers.

    Follows `properties`, `additionalProperties`, `items` and `prefixItems`; values are copied
    only where something changes.
    """
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return value
    if type(value) is float and value.is_integer() and _wants_integer(schema):
        return int(value)
    if isinstance(value, dict):
        return _integral_object(value, schema, depth)
    if isinstance(value, list):
        return _integral_array(value, schema, depth)
    return value


def _wants_integer(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if isinstance(kind, list):
        return "integer" in kind and "number" not in kind
    return kind == "integer"


def _integral_object(value: dict[str, Any], schema: dict[str, Any], depth: int) -> Any:
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    if not isinstance(properties, dict) and not isinstance(extra, dict):
        return value
    out = value
    for key, item in value.items():
        sub = properties.get(key, extra) if isinstance(properties, dict) else extra
        made = integral(item, sub, depth + 1)
        if made is not item:
            if out is value:
                out = dict(value)
            out[key] = made
    return out


def _integral_array(value: list[Any], schema: dict[str, Any], depth: int) -> Any:
    prefix = schema.get("prefixItems")
    prefix = prefix if isinstance(prefix, list) else []
    items = schema.get("items")
    if not prefix and not isinstance(items, dict):
        return value
    out = value
    for index, item in enumerate(value):
        sub = prefix[index] if index < len(prefix) else items
        made = integral(item, sub, depth + 1)
        if made is not item:
            if out is value:
                out = list(value)
            out[index] = made
    return out
