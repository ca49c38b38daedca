"""Resolves a call's options: the contract's defaults, then the tool's, then the request's."""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import ValidationError

from toolcaller.envelope import Options
from toolcaller.errors import InvalidParamsError
from toolcaller.request import describe_kind

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
            f"{where} must be an object, got {describe_kind(given)}",
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


def options_for(defaults: dict[str, Any], options: Any, kwargs: dict[str, Any]) -> Options:
    """Resolve a call's options: keyword options over the request's, over the tool's defaults."""
    if kwargs:
        options = {**options, **kwargs} if isinstance(options, dict) else (
            kwargs if options is None else options)
    return resolve_options(defaults, options)
