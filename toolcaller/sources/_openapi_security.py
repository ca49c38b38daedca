"""An OpenAPI document's security schemes as credentials read from the environment.

Each scheme of `components.securitySchemes` (Swagger 2.0: `securityDefinitions`) becomes a
credential of the HTTP adapter (`"auth"`), whose values are `${VAR}`s named after the source
and the scheme, upper snake case: for the scheme `api_key` of the source `petstore`,

| scheme                                  | credential | read from                          |
|-----------------------------------------|------------|------------------------------------|
| apiKey (header, query or cookie)        | apiKey     | `${PETSTORE_API_KEY}`              |
| http basic (Swagger: basic)             | basic      | `${…_USERNAME}`, `${…_PASSWORD}`   |
| http bearer, oauth2, openIdConnect      | bearer     | `${PETSTORE_<SCHEME>}` (a token)   |

Other schemes (digest, mutual TLS) are not supported: operations that need only them go without
credentials. An operation's `security` (or the document's) lists alternatives; the adapter
sends the first whose variables are set. A source's `"security"` setting renames the variables
per scheme (`{"api_key": {"value": "${MY_KEY}"}}`) or adds schemes the document does not
declare (`{"basic": {"type": "basic", "username": "${U}", "password": "${P}", "include":
"name:*basic_auth*"}}`, for the tools its discovery filter `include` matches, or all).
Each tool's description says which variables it reads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.core.registry import compile_filter
from toolcaller.core.templates import variables_in
from toolcaller.core.tool import Tool

__all__ = ["Security", "describe", "env_name"]

_FIELDS = {"basic": ("username", "password"), "bearer": ("token",), "apiKey": ("value",)}


def env_name(*parts: str) -> str:
    """Upper snake case of the parts: `("petstore", "bearerAuth")` → `PETSTORE_BEARER_AUTH`."""
    words = [re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", p) for p in parts if p]
    return re.sub(r"[^A-Za-z0-9]+", "_", "_".join(words)).strip("_").upper()


def describe(alternatives: list[list[JSONObject]]) -> str:
    """Say which credentials a tool sends and where they are read, in one sentence."""
    def one(cred: JSONObject) -> str:
        names = [v for f in _FIELDS[cred["type"]] for v in variables_in(str(cred.get(f, "")))]
        what = {"basic": "HTTP basic auth", "bearer": "a bearer token",
                "apiKey": f"an API key in {cred.get('in', 'header')} {cred.get('name')!r}"}
        read = ", ".join(f"${{{n}}}" for n in names)
        return what[cred["type"]] + (f" from {read}" if read else "")

    ways = [" and ".join(one(c) for c in alt) for alt in alternatives]
    return "Credentials: " + "; or ".join(ways) + " (read from the environment)."


class Security:
    """The credentials of one document's operations, for one source."""

    def __init__(self, doc: JSONObject, source: str,
                 settings: Mapping[str, Any] | None = None) -> None:
        settings = settings or {}
        declared = _declared(doc)
        self._credentials: dict[str, JSONObject] = {}
        for name, scheme in declared.items():
            credential = _credential(scheme, env_name(source, name))
            if credential is not None:
                overrides = settings.get(name)
                if isinstance(overrides, Mapping):
                    credential.update({k: v for k, v in overrides.items() if k != "include"})
                self._credentials[name] = credential
        self._default = doc.get("security")
        self._extras: list[tuple[JSONObject, Any]] = []
        for name, given in settings.items():
            if name not in declared and isinstance(given, Mapping) and "type" in given:
                credential = {k: v for k, v in given.items() if k != "include"}
                include = given.get("include")
                self._extras.append((credential, compile_filter(include) if include else None))

    def for_operation(self, op: JSONObject) -> list[list[JSONObject]]:
        """Return the operation's credential alternatives from the document."""
        required = op.get("security", self._default)
        alternatives: list[list[JSONObject]] = []
        for requirement in required if isinstance(required, list) else []:
            if not isinstance(requirement, dict) or not requirement:
                continue  # `{}`: anonymous calls are allowed (they are the fallback anyway)
            credentials = [self._credentials.get(str(name)) for name in requirement]
            if all(c is not None for c in credentials):
                alternatives.append([dict(c) for c in credentials if c is not None])
        return alternatives

    def extras_for(self, tool: Tool) -> list[list[JSONObject]]:
        """Return the source's own schemes that apply to this tool (their `include` matches)."""
        return [[dict(credential)] for credential, include in self._extras
                if include is None or include(tool)]


def _declared(doc: JSONObject) -> dict[str, JSONObject]:
    components = doc.get("components")
    schemes = components.get("securitySchemes") if isinstance(components, dict) else None
    if not isinstance(schemes, dict):
        schemes = doc.get("securityDefinitions")
    if not isinstance(schemes, dict):
        return {}
    return {str(k): v for k, v in schemes.items() if isinstance(v, dict)}


def _credential(scheme: JSONObject, base: str) -> JSONObject | None:
    kind = scheme.get("type")
    http_scheme = str(scheme.get("scheme", "")).lower()
    if kind == "basic" or (kind == "http" and http_scheme == "basic"):
        return {"type": "basic", "username": f"${{{base}_USERNAME}}",
                "password": f"${{{base}_PASSWORD}}"}
    if (kind == "http" and http_scheme == "bearer") or kind in ("oauth2", "openIdConnect"):
        return {"type": "bearer", "token": f"${{{base}}}"}
    if kind == "apiKey" and isinstance(scheme.get("name"), str):
        where = scheme.get("in") if scheme.get("in") in ("header", "query", "cookie") else "header"
        return {"type": "apiKey", "in": where, "name": scheme["name"], "value": f"${{{base}}}"}
    return None
