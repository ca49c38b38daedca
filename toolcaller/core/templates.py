"""The two template syntaxes of registry entries: `${VAR}` from the environment, `{name}` in URLs.

`${NAME}` is the value of the environment variable `NAME` (an error if it is not set),
`${NAME:-fallback}` falls back to the literal text when `NAME` is unset or empty (as in a
POSIX shell), and `$${` writes a literal `${`. Script and HTTP entries and `mcpServers` read
secrets this way: every value read from the environment is returned apart, so that callers
add it to the values masked in messages (`toolcaller.core.redact`).

`{name}` in an HTTP tool's URL takes the param `name` (letters, digits, `_`, `-` and `.`; not
after a `$`, which starts a `${VAR}`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from toolcaller.errors import ExecutionError

__all__ = ["URL_PARAM", "expand_vars", "url_params", "variables_in"]

_VAR = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
URL_PARAM = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_.-]*)\}")
"""A `{name}` template in a URL: group 1 is the param's name."""


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


def url_params(url: str) -> list[str]:
    """Return the names of the `{name}` templates of a URL, each once, in order."""
    return list(dict.fromkeys(URL_PARAM.findall(url)))


def variables_in(text: str) -> list[str]:
    """Return the names of the `${VAR}`s a template reads, each once, in order."""
    return list(dict.fromkeys(m.group(1) for m in _VAR.finditer(text) if m.group(1)))
