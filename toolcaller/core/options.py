"""Resolves a call's options: the contract's defaults, then the tool's, then the request's."""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import ValidationError

from toolcaller.core.tool import Tool
from toolcaller.envelope import Options
from toolcaller.errors import InvalidParamsError

__all__ = ["describe_validation_error", "option_key", "options_for", "resolve_options"]

_ALIASES = {name: (field.alias or name) for name, field in Options.model_fields.items()}
_KEYS = sorted(set(_ALIASES.values()))


def option_key(name: str) -> str:
    """Return the request key (camelCase) of an option given in either spelling."""
    return _ALIASES.get(name, name)


def resolve_options(defaults: dict[str, Any], given: Any, where: str = "options") -> Options:
    """Merge `given` over a tool's `defaults`; `InvalidParamsError` says what is wrong."""
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise InvalidParamsError(
            f"{where} must be an object, got {_type_name(given)}",
        )
    merged = {**defaults, **{option_key(k): v for k, v in given.items()}}
    try:
        return Options.model_validate(merged)
    except ValidationError as exc:
        raise InvalidParamsError(
            describe_validation_error(exc, where, _KEYS),
            details={"violations": _violations(exc, where)},
        ) from None


def describe_validation_error(exc: ValidationError, where: str, known: list[str]) -> str:
    """Return one readable sentence per pydantic error, with did-you-mean for unknown keys."""
    parts = []
    for error in exc.errors()[:5]:
        loc = ".".join(str(p) for p in error["loc"])
        if error["type"] == "extra_forbidden":
            hint = difflib.get_close_matches(str(error["loc"][-1]), known, n=1)
            tip = f"; did you mean {hint[0]!r}?" if hint else f"; known: {', '.join(known)}"
            parts.append(f"{where}.{loc} is not a known option{tip}")
        else:
            parts.append(f"{where}.{loc}: {error['msg']} (got {_short(error.get('input'))})")
    return "; ".join(parts)


def _violations(exc: ValidationError, where: str) -> list[dict[str, str]]:
    return [
        {"pointer": f"/{where}/" + "/".join(str(p) for p in e["loc"]), "message": e["msg"]}
        for e in exc.errors()
    ]


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _type_name(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def options_for(tool: Tool, options: Any, kwargs: dict[str, Any]) -> Options:
    """Resolve a call's options for `tool`; the common cases are cached on the tool."""
    if options is None and not kwargs:
        opts = tool.cache.get("options")
        if opts is None:
            opts = tool.cache["options"] = resolve_options(tool.options, None)
        return opts
    if options is None:
        try:
            key = tuple(kwargs.items())
            by_key = tool.cache.setdefault("options_by_key", {})
            opts = by_key.get(key)
        except TypeError:  # unhashable option values: resolve (and fail) below
            key, by_key, opts = None, None, None
        if opts is None:
            opts = resolve_options(tool.options, kwargs)
            if by_key is not None and len(by_key) < 256:
                by_key[key] = opts
        return opts
    if kwargs and isinstance(options, dict):
        options = {**options, **kwargs}
    return resolve_options(tool.options, options)
