"""`${VAR}` expansion from the caller's environment, for the script and HTTP adapters.

Syntax: `${NAME}` is the value of the environment variable `NAME` (an error if it is not set),
`${NAME:-fallback}` falls back to the literal text when `NAME` is unset or empty, and `$${`
writes a literal `${`. Every value read from the
environment this way is returned apart: adapters add it to `AttemptContext.secrets`, so that it
is masked in every message, detail and history row (`toolcaller.core.redact`). Reference secrets
with `${VAR}` and write plain settings literally.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from toolcaller.errors import ExecutionError

__all__ = ["expand_vars"]

_VAR = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_vars(text: str, environ: Mapping[str, str], *, where: str) -> tuple[str, list[str]]:
    """Expand `${VAR}` references in `text` and return it with the values read from `environ`.

    Args:
        text: the template, e.g. `"Bearer ${API_TOKEN}"`.
        environ: the caller's environment (`os.environ`).
        where: what the text belongs to, for the error message (`"header 'Authorization'"`).

    Raises:
        ExecutionError: permanent, naming the variable (never a value) when one is not set.
    """
    if "$" not in text:
        return text, []
    revealed: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        name, fallback = match.group(1), match.group(2)
        if name is None:  # `$${` escapes a literal `${`
            return "${"
        value = environ.get(name)
        if value is None or (value == "" and fallback is not None):
            if fallback is not None:
                return fallback
            raise ExecutionError(
                f"environment variable {name!r} is not set (read by {where}); "
                "set it in the caller's environment or give a fallback with ${NAME:-value}",
                details={"variable": name},
                permanent=True,
            )
        if value:
            revealed.append(value)
        return value

    return _VAR.sub(substitute, text), revealed
