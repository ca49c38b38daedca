"""Credentials of an HTTP tool (`"auth"`): read from the environment, sent as the API wants.

`"auth"` lists alternatives (as OpenAPI's `security` does); each is one credential or a list of
credentials sent together:

    {"type": "basic",  "username": "${API_USER}", "password": "${API_PASSWORD}"}
    {"type": "bearer", "token": "${API_TOKEN}"}
    {"type": "apiKey", "in": "header" | "query" | "cookie", "name": "X-Api-Key",
     "value": "${API_KEY}"}

The first alternative whose `${VAR}`s are all set (and not empty) is sent; when none is, the
request goes without credentials (an API may answer anonymous calls), and a 401 or 403 says
which variables to set. Every value read is a secret: masked in messages, details and logs.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolcaller.core.templates import expand_vars, variables_in
from toolcaller.errors import ExecutionError

__all__ = ["Applied", "Credential", "choose_credentials"]


class Credential(BaseModel):
    """One credential: HTTP basic, a bearer token, or an API key in a header, query or cookie."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    type: Literal["basic", "bearer", "apiKey"]
    username: str = Field("", description="basic: the user name; may read ${VAR}.")
    password: str = Field("", description="basic: the password; may read ${VAR}.")
    token: str = Field("", description="bearer: the token; may read ${VAR}.")
    name: str = Field("", description="apiKey: the header, query or cookie name.")
    in_: Literal["header", "query", "cookie"] = Field("header", alias="in")
    value: str = Field("", description="apiKey: the key; may read ${VAR}.")

    def templates(self) -> tuple[str, ...]:
        """The values this credential reads (templates), by its type."""
        if self.type == "basic":
            return (self.username, self.password)
        return (self.token,) if self.type == "bearer" else (self.value,)

    def describe(self) -> str:
        """Say what this credential is, for messages and tool descriptions."""
        names = [v for t in self.templates() for v in variables_in(t)]
        where = {"basic": "HTTP basic auth", "bearer": "a bearer token",
                 "apiKey": f"an API key in {self.in_} {self.name!r}"}[self.type]
        return where + (f" from ${{{'}, ${'.join(names)}}}" if names else "")


@dataclass(slots=True)
class Applied:
    """What the chosen credentials add to a request."""

    headers: dict[str, str] = field(default_factory=dict)
    query: list[tuple[str, str]] = field(default_factory=list)
    cookies: list[str] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)
    wanted: str = ""
    """When nothing was sent: which variables would have been (for a 401's hint)."""


def choose_credentials(alternatives: list[list[Credential]], *, tool_name: str,
                       environ: Mapping[str, str] | None = None) -> Applied:
    """Return what the first alternative whose variables are all set adds to the request."""
    env = os.environ if environ is None else environ
    for alternative in alternatives:
        values = _expanded(alternative, env, tool_name)
        if values is not None:
            return _apply(alternative, values)
    wanted = " or ".join(" and ".join(c.describe() for c in alt) for alt in alternatives)
    return Applied(wanted=wanted)


def _expanded(alternative: list[Credential], env: Mapping[str, str],
              tool_name: str) -> list[tuple[str, ...]] | None:
    values = []
    for credential in alternative:
        expanded = []
        for template in credential.templates():
            try:
                text, _ = expand_vars(template, env, where=f"the credentials of {tool_name!r}")
            except ExecutionError:
                return None  # a variable is not set: try the next alternative
            if not text:
                return None
            expanded.append(text)
        values.append(tuple(expanded))
    return values


def _apply(alternative: list[Credential], values: list[tuple[str, ...]]) -> Applied:
    applied = Applied()
    for credential, parts in zip(alternative, values, strict=True):
        # A user name is not secret (and would mask ordinary words such as "user").
        applied.secrets.update(parts[1:] if credential.type == "basic" else parts)
        if credential.type == "basic":
            pair = base64.b64encode(f"{parts[0]}:{parts[1]}".encode()).decode("ascii")
            applied.headers["Authorization"] = f"Basic {pair}"
            applied.secrets.update((pair, f"Basic {pair}"))
        elif credential.type == "bearer":
            applied.headers["Authorization"] = f"Bearer {parts[0]}"
        elif credential.in_ == "header":
            applied.headers[credential.name] = parts[0]
        elif credential.in_ == "query":
            applied.query.append((credential.name, parts[0]))
        else:
            applied.cookies.append(f"{credential.name}={parts[0]}")
    return applied
