"""Masks secrets (SPEC rule 8) in params, messages, details, logs and history.

A value is secret when its key looks secret (password, token, api key, authorization, cookie,
credential, private key…), when its schema property is `writeOnly` or `format: password`, when
an adapter declared it (a resolved `${VAR}`, an authorization header), or when the string
itself is shaped like a well-known token (OpenAI/Anthropic/GitHub/AWS/Slack/Google keys, JWTs,
bearer credentials, PEM private keys).

Masks cover whole values and whole tokens, never a part of a word, a name or a file name: a
password `passwd` masks `passwd` in `user=passwd` or `/basic-auth/user/passwd` (a whole
path segment), not in the tool name `get_basic_auth_user_passwd` nor in `passwd.txt`.
Results are not redacted (a tool that echoes a password returns it), unless the tool says so
(`Tool.redact_result`, `"redactResult": true` in its entry).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable
from functools import lru_cache
from typing import Any

from toolcaller.errors import InvalidParamsError

__all__ = [
    "MASK",
    "collect_secrets",
    "is_secret_name",
    "mask_text",
    "redact_params",
    "redact_params_safely",
    "redact_value",
    "secret_names_in_schema",
]

MASK = "***"
MIN_SECRET_LENGTH = 4  # shorter "secrets" would mask ordinary text everywhere

_SECRET_NAME = re.compile(
    r"pass(word|wd|phrase)?$|^pwd$|secret|token|api_?key|apikey|access_?key|authori[sz]ation|"
    r"^auth$|cookie|credential|private_?key|session_?id|bearer|signature"
)

_TOKEN_PATTERNS = [
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
    r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}",
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",
    r"\bgithub_pat_[A-Za-z0-9_]{30,}",
    r"\bglpat-[A-Za-z0-9_\-]{20,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    r"\bAIza[0-9A-Za-z_\-]{35}",
    r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    # A bearer credential: after the word Bearer (not a path's `/bearer`), with a digit or a
    # symbol in it, or long, so that ordinary words after "bearer" stay.
    r"(?<=(?<![\w/.\-])[Bb]earer )(?=[A-Za-z0-9._~+/\-]*[0-9._~+/\-]|[A-Za-z]{20})"
    r"[A-Za-z0-9._~+/\-]{8,}=*",
]
_TOKENS = re.compile("|".join(f"(?:{p})" for p in _TOKEN_PATTERNS), re.DOTALL)
_BASIC = re.compile(r"(?<![\w/.\-])([Bb]asic )([A-Za-z0-9+/]{8,}=*)")
"""Basic credentials: masked when they are base64 of `user:password` (not "Basic setup")."""
_WORD_BEFORE = r"(?<![\w\-])(?<!\w\.)"
_WORD_AFTER = r"(?![\w\-])(?!\.\w)"


@lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Say whether a key, header or variable name looks like it holds a secret."""
    normalized = re.sub(r"[\s\-.]+", "_", name.strip().lower())
    return bool(_SECRET_NAME.search(normalized))


def secret_names_in_schema(schema: Any) -> frozenset[str]:
    """Return the property names marked `writeOnly: true` or `format: password` anywhere."""
    found: set[str] = set()
    _walk_schema(schema, found, depth=0)
    return frozenset(found)


def _walk_schema(schema: Any, found: set[str], depth: int) -> None:
    if depth > 64:
        return
    if isinstance(schema, list):
        for item in schema:
            _walk_schema(item, found, depth + 1)
        return
    if not isinstance(schema, dict):
        return
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            if isinstance(sub, dict) and (
                sub.get("writeOnly") is True or sub.get("format") == "password"
            ):
                found.add(name)
    for value in schema.values():
        if isinstance(value, dict | list):
            _walk_schema(value, found, depth + 1)


def _is_secret_key(key: str, extra: Collection[str]) -> bool:
    return key in extra or is_secret_name(key)


_PLAIN = (int, float, bool, type(None))


def redact_params(params: Any, secret_keys: Collection[str] = ()) -> Any:
    """Return a copy of params with secret-keyed values masked and token-shaped strings masked."""
    if type(params) is not dict:
        return _redact(params, secret_keys, (), 0, strict=True)
    out = {}
    # The flat case (scalars under plain keys) is every call's: keep it a tight loop.
    for key, value in params.items():
        if value is not None and (key in secret_keys or is_secret_name(key)):
            out[key] = MASK
        elif type(value) in _PLAIN or (type(value) is str and len(value) < 16):
            if type(value) is float and not math.isfinite(value):
                raise _non_finite(key, value)
            out[key] = value
        else:
            out[key] = _redact(value, secret_keys, (), 1, strict=True)
    return out


def redact_params_safely(params: Any, error: Exception | None = None) -> Any:
    """Mask params for the history of a call that never started (any value, never raises).

    `error` is the call's failure: the secret property names it carries (`secret_keys`, set
    by the checks before any attempt) are masked too.
    """
    keys: frozenset[str] = getattr(error, "secret_keys", frozenset())
    try:
        return redact_params(params, keys)
    except InvalidParamsError:
        return redact_value(params)


def redact_value(value: Any, secrets: Iterable[str] = ()) -> Any:
    """Return a copy of a JSON-like value with known secret values and tokens masked."""
    return _redact(value, (), tuple(_usable(secrets)), 0)


def _redact(value: Any, secret_keys: Collection[str], secrets: tuple[str, ...], depth: int,
            *, strict: bool = False) -> Any:
    if isinstance(value, str):
        return _mask(value, secrets)
    if depth > 100:
        return MASK
    if isinstance(value, float) and not math.isfinite(value):
        if strict:  # params: refuse; anything else: keep JSON strict with a readable stand-in
            raise _non_finite("…", value)
        return repr(value)
    if isinstance(value, dict):
        return {
            key: MASK
            if isinstance(key, str) and _is_secret_key(key, secret_keys) and item is not None
            else _redact(item, secret_keys, secrets, depth + 1, strict=strict)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redact(item, secret_keys, secrets, depth + 1, strict=strict) for item in value]
    return value


def _non_finite(key: Any, value: float) -> InvalidParamsError:
    return InvalidParamsError(
        f"params hold {value!r} under {str(key)!r}; JSON has no NaN or Infinity",
        details={"violations": [{"pointer": f"/{key}", "message": "not a finite number"}]},
    )


def _usable(secrets: Iterable[str]) -> list[str]:
    # Longest first, so that a secret containing another is masked whole.
    return sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)


def _mask(text: str, secrets: tuple[str, ...]) -> str:
    present = tuple(s for s in secrets if s in text)
    if present:
        text = _whole(present).sub(MASK, text)
    if _has_token_hint(text):
        text = _TOKENS.sub(MASK, text)
        if "asic " in text:
            text = _BASIC.sub(_basic_credentials, text)
    return text


@lru_cache(maxsize=256)
def _whole(secrets: tuple[str, ...]) -> re.Pattern[str]:
    """A pattern of the secrets as whole tokens (longest first: a longer one is masked whole)."""
    words = "|".join(re.escape(s) for s in secrets)
    return re.compile(f"{_WORD_BEFORE}(?:{words}){_WORD_AFTER}")


def _basic_credentials(match: re.Match[str]) -> str:
    import base64
    import binascii

    try:
        decoded = base64.b64decode(match.group(2), validate=True)
    except (binascii.Error, ValueError):
        return match.group(0)
    return match.group(1) + MASK if b":" in decoded else match.group(0)


def _has_token_hint(text: str) -> bool:
    # A cheap pre-check: the regex only runs on strings long enough to hold a token.
    return len(text) >= 16


def mask_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Mask known secret values and token-shaped strings in a message."""
    return _mask(text, tuple(_usable(secrets)))


def collect_secrets(params: Any, secret_keys: Collection[str] = (), depth: int = 0) -> set[str]:
    """Return the string values of params held under secret-looking keys (to mask them in text)."""
    found: set[str] = set()
    if depth > 100:
        return found
    if isinstance(params, dict):
        for key, item in params.items():
            if isinstance(key, str) and _is_secret_key(key, secret_keys):
                found.update(_strings(item))
            else:
                found |= collect_secrets(item, secret_keys, depth + 1)
    elif isinstance(params, list):
        for item in params:
            found |= collect_secrets(item, secret_keys, depth + 1)
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []
