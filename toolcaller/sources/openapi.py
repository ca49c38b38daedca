"""OpenAPI 3.x and Swagger 2.0 documents as tools: one `http` tool per operation.

Each operation becomes a `Tool` named by its `operationId` (sanitised) or `method_path`, whose
params are its path, query and header parameters plus its request body (`_openapi_params`:
JSON, form or multipart; merged when it is an object, else the param `body`). Its target is an
`http` entry (`toolcaller.adapters.http`) with `{name}` path templates and, where the adapter's
defaults are not enough, `queryParams`, `headerParams`, `bodyParam`, `contentType`, `styles`
(query `style`/`explode`) and `auth` (the operation's security schemes as credentials read from
the environment: `_openapi_security`). `metadata["annotations"]` carries MCP-style
`readOnlyHint`/`idempotentHint` from the method: the tool is idempotent for GET, HEAD, OPTIONS,
TRACE, PUT and DELETE, or an operation with `x-idempotent: true`, and only an idempotent tool is
retried after a failure whose effect is unknown (a POST's 5xx or timeout).

Local `$ref`s are inlined; recursive ones become `$defs` (`_openapi_schema`). Invalid documents
are read as well as they can be (`"type": "int"`, untyped parameters, path templates nobody
declared). Paths are appended to the base URL as they are, so it must include any base path
(Swagger's `basePath`, a server's `/v1`); without one, the document's first server is used.

In a registry file, the `openapi` key names sources (`OpenApiSource`), each read at its first
listing (discovery, or a call of one of its tools)::

    "openapi": {"github": {"document": "specs/github.yaml", "baseUrl": "https://api.github.com",
                           "include": "tag:repos", "headers": {"X-GitHub-Api-Version": "…"},
                           "security": {…}, "options": {"timeout": 10000}}}
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.core.registry import compile_filter
from toolcaller.core.tool import Tool
from toolcaller.errors import UsageError
from toolcaller.sources._openapi_document import load_openapi
from toolcaller.sources._openapi_params import QUERY_METHODS, Params
from toolcaller.sources._openapi_schema import Refs
from toolcaller.sources._openapi_security import Security, describe

__all__ = ["OpenApiSource", "load_openapi", "tools_from_openapi"]

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
READ_ONLY = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


def tools_from_openapi(
    document: Mapping[str, Any] | str | Path,
    *,
    base_url: str | None = None,
    prefix: str = "",
    headers: Mapping[str, str] | None = None,
    security: Mapping[str, Any] | None = None,
    include: str | None = None,
) -> list[Tool]:
    """Build one `http` tool per operation of an OpenAPI 3.x or Swagger 2.0 document.

    Args:
        document: the document itself, a path to a JSON or YAML file, or an `http(s)://` URL.
        base_url: prepended to every path (default: the document's first server, or Swagger's
            `schemes`, `host` and `basePath`).
        prefix: put before every tool name; a dot is added unless it ends with `.`, `_`, `-`.
            Its words also name the credentials' variables (`_openapi_security`).
        headers: sent with every request; values may read `${ENV_VAR}`.
        security: per scheme, variables to read instead of the default ones, or schemes the
            document does not declare (see `_openapi_security`).
        include: a discovery filter (`tag:repos`, `name:*issue*`, `-deprecated`…): only the
            operations it matches become tools.

    Raises:
        UsageError: the document cannot be read, has no `paths` object, or no base URL.
    """
    doc = load_openapi(document)
    paths = doc.get("paths")
    if not isinstance(paths, Mapping):
        raise UsageError("the OpenAPI document has no 'paths' object: nothing to import")
    base = base_url if base_url is not None else _document_base_url(doc)
    if prefix and not prefix.endswith((".", "_", "-", ":", "/")):
        prefix += "."
    refs = Refs(doc)
    secure = Security(doc, prefix.strip("._-:/"), security)
    names: dict[str, int] = {}
    tools = []
    for path, method, item, op in _operations(paths, refs):
        name = _unique(prefix + _op_name(op, method, path), names)
        tools.append(_tool(name, path, method, item, op, refs, base, headers or {}, doc, secure))
    if include:
        keep = compile_filter(include)
        tools = [t for t in tools if keep(t)]
    return tools


def _document_base_url(doc: JSONObject) -> str:
    servers = doc.get("servers")
    if isinstance(servers, list) and servers and isinstance(servers[0], dict):
        url = str(servers[0].get("url", ""))
        if re.match(r"https?://", url):
            return url
    host = doc.get("host")
    if isinstance(host, str) and host:
        schemes = doc.get("schemes") or ["https"]
        return f"{schemes[0]}://{host}{doc.get('basePath') or ''}"
    raise UsageError("the OpenAPI document names no absolute server URL: give the base URL")


def _operations(
    paths: Mapping[str, Any], refs: Refs
) -> Iterator[tuple[str, str, JSONObject, JSONObject]]:
    for path, raw_item in paths.items():
        item = refs.deref(raw_item)
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            op = item.get(method)
            if isinstance(op, dict):
                yield str(path), method, item, op


def _op_name(op: JSONObject, method: str, path: str) -> str:
    op_id = op.get("operationId")
    if isinstance(op_id, str):
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", op_id).strip("_.-")
        if name:
            return name
    words = re.sub(r"[^A-Za-z0-9]+", "_", path).strip("_")
    return f"{method}_{words}" if words else method


def _unique(name: str, seen: dict[str, int]) -> str:
    count = seen.get(name, 0) + 1
    seen[name] = count
    return name if count == 1 else f"{name}_{count}"


def _tool(name: str, path: str, method: str, item: JSONObject, op: JSONObject, refs: Refs,
          base_url: str, headers: Mapping[str, str], doc: JSONObject,
          security: Security) -> Tool:
    verb = method.upper()
    consumes = op.get("consumes", doc.get("consumes"))
    params = Params(refs, openapi3="swagger" not in doc,
                    consumes=consumes if isinstance(consumes, list) else None)
    raws = [refs.deref(p) for p in [*_list(item.get("parameters")), *_list(op.get("parameters"))]]
    for raw in sorted(raws, key=lambda p: isinstance(p, dict) and p.get("in") == "header"):
        params.add_parameter(raw)  # headers last: one that clashes is the one renamed
    params.add_path_templates(path)
    if verb not in ("GET", "HEAD"):
        params.add_body(op, verb)
    target = _target(verb, base_url.rstrip("/") + path, headers, params)
    idempotent = verb in IDEMPOTENT or op.get("x-idempotent") is True
    metadata: JSONObject = {
        "tags": ["openapi", *(t for t in _list(op.get("tags")) if isinstance(t, str))],
        "openapi": {"method": verb, "path": path}
        | ({"operationId": op["operationId"]} if isinstance(op.get("operationId"), str) else {}),
        "annotations": {"readOnlyHint": verb in READ_ONLY, "idempotentHint": idempotent},
    }
    if params.media_type:
        metadata["openapi"]["bodyMediaType"] = params.media_type
    produces = _produces(op, doc, refs)
    if produces:
        metadata["openapi"]["produces"] = produces
    if op.get("deprecated") is True:
        metadata["deprecated"] = True
    summary, details = op.get("summary"), op.get("description")
    description = summary if isinstance(summary, str) and summary else details
    tool = Tool(
        name=name,
        description=description if isinstance(description, str) else f"{verb} {path}",
        params_schema=params.schema(),
        kind="http",
        target=target,
        metadata=metadata,
        idempotent=idempotent,
    )
    auth = security.for_operation(op) + security.extras_for(tool)
    if auth:
        target["auth"] = auth
        metadata["security"] = describe(auth)
        tool.description = f"{tool.description}\n\n{describe(auth)}"
    return tool


def _produces(op: JSONObject, doc: JSONObject, refs: Refs) -> list[str]:
    """The media types a success answers with, as the document declares them."""
    declared = op.get("produces", doc.get("produces"))  # Swagger 2.0
    if isinstance(declared, list):
        return [m for m in declared if isinstance(m, str)]
    found: list[str] = []
    responses = op.get("responses")
    for status, response in (responses.items() if isinstance(responses, dict) else ()):
        answer = refs.deref(response) if str(status).startswith("2") else None
        content = answer.get("content") if isinstance(answer, dict) else None
        if isinstance(content, dict):
            found.extend(m for m in content if m not in found)
    return found


def _target(verb: str, url: str, headers: Mapping[str, str], params: Params) -> JSONObject:
    target: JSONObject = {"method": verb, "url": url, "headers": dict(headers)}
    if verb not in QUERY_METHODS and params.query:
        target["queryParams"] = params.query
    if params.headers:
        target["headerParams"] = params.headers
    if params.body_param:
        target["bodyParam"] = params.body_param
    media = params.media_type.split(";")[0].strip().lower()
    if media and media != "application/json":
        target["contentType"] = params.media_type
    if params.styles:
        target["styles"] = params.styles
    return target


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


class OpenApiSource:
    """The operations of one OpenAPI document named in a registry file (a registry `Source`).

    The document is read at the first listing (it may be big), once; a failure is raised to
    whoever lists (discovery reports it among its problems) and tried again at the next.
    """

    def __init__(self, key: str, settings: Mapping[str, Any], base_dir: Path | None) -> None:
        self.name = f"openapi:{key}"
        self.prefix = f"{key}."
        self.settings = dict(settings)
        self.base_dir = base_dir
        self.default_options: dict[str, Any] = dict(settings.get("options") or {})
        self._tools: list[Tool] | None = None
        self._lock = threading.Lock()
        self._reading_since: float | None = None

    def list_tools(self) -> list[Tool]:
        """Read the document (first time only) and return its tools."""
        tools = self._tools
        if tools is None:
            with self._lock:
                tools = self._tools
                if tools is None:
                    self._reading_since = time.monotonic()
                    try:
                        tools = self._tools = self._build()
                    finally:
                        self._reading_since = None
        return list(tools)

    def waiting_for(self) -> str | None:
        """Say what a listing now waits for (the document still being read), or None."""
        since = self._reading_since
        if since is None:
            return None
        return (f"the OpenAPI document of {self.prefix[:-1]!r} is still being read "
                f"({time.monotonic() - since:.1f} s so far); reading goes on in the "
                "background and the next call uses it")

    def cached_tools(self) -> list[Tool]:
        """Return the tools if the document was read, else nothing (reads nothing)."""
        return list(self._tools or ())

    def start_background(self) -> None:
        """Read the document in a background thread (so that the first call finds it read)."""
        threading.Thread(target=self._try_list, name=f"toolcaller-{self.name}",
                         daemon=True).start()

    def _try_list(self) -> None:
        try:
            self.list_tools()
        except Exception:  # noqa: BLE001 - the next listing raises it where someone listens
            return

    def _build(self) -> list[Tool]:
        given = self.settings
        document = str(given["document"])
        if not re.match(r"https?://", document) and self.base_dir is not None:
            document = str(self.base_dir / Path(document).expanduser())
        try:
            tools = tools_from_openapi(
                document, base_url=given.get("baseUrl"), prefix=self.prefix,
                headers=given.get("headers"), security=given.get("security"),
                include=given.get("include"))
        except UsageError as exc:
            raise UsageError(f"OpenAPI source {self.prefix[:-1]!r}: {exc}") from exc
        options, redact = dict(given.get("options") or {}), bool(given.get("redactResult"))
        for tool in tools:
            tool.options, tool.redact_result, tool.base_dir = options, redact, self.base_dir
        return tools

    def __repr__(self) -> str:
        return f"OpenApiSource({self.prefix[:-1]!r})"
