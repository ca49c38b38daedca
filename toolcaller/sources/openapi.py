"""OpenAPI 3.x and Swagger 2.0 documents as tools: one `http` tool per operation.

Each operation becomes a `Tool` named by its `operationId` (sanitised) or `method_path`, whose
params are its path, query and header parameters plus its JSON request body:

- a body that is an object schema whose property names clash with no parameter is merged:
  its properties are top-level params (what the HTTP adapter sends as the JSON body);
- any other body (an array, a scalar, a clash) is the single param `body`, and the target
  says so with `"bodyParam": "body"`.

The target is an `http` spec `{"method", "url", "headers"}` with `{name}` path templates; where
the HTTP adapter's defaults (rest → query for GET/DELETE/HEAD/OPTIONS, JSON body otherwise)
are not enough it adds `"queryParams": [names]` (query params of a body method),
`"headerParams": {param: header}` (a header parameter that clashes with a parameter of the same
name elsewhere is the param `header_<name>`) and `"bodyParam"` (above; always for a DELETE or
OPTIONS body, whose other params go to the query). Header parameters named `Accept`,
`Content-Type` or `Authorization` are ignored in OpenAPI 3, as its specification says; cookie
parameters are left out. The adapter sends bodies as JSON: an operation whose document says
otherwise (a form) has `metadata["openapi"]["bodyMediaType"]`; it sends an object-valued query
parameter as JSON text, not exploded into `key=value` pairs (OpenAPI's `form` style).

Local `$ref`s are inlined; recursive ones become `$defs`. Invalid documents are read as well
as they can be (`"type": "int"`, untyped parameters, path templates nobody declared). The base
URL always comes from the caller: paths are appended to it as they are, so it must include any
base path (Swagger's `basePath`, a server's `/v1`).
"""

from __future__ import annotations

import copy
import importlib
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.core.pointer import split_pointer
from toolcaller.core.tool import Tool
from toolcaller.errors import UsageError

__all__ = ["load_openapi", "tools_from_openapi"]

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
QUERY_METHODS = frozenset({"GET", "DELETE", "HEAD", "OPTIONS"})
"""Methods whose leftover params the HTTP adapter sends as the query string."""
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
_TYPE_FIXES = {"int": "integer", "long": "integer", "float": "number", "double": "number",
               "bool": "boolean", "str": "string", "dict": "object", "list": "array"}
_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
_SWAGGER_PARAM_KEYS = ("type", "format", "items", "enum", "default", "minimum", "maximum",
                       "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
                       "pattern", "minItems", "maxItems", "uniqueItems", "multipleOf")


def tools_from_openapi(
    document: Mapping[str, Any] | str | Path,
    *,
    base_url: str,
    prefix: str = "",
    headers: Mapping[str, str] | None = None,
) -> list[Tool]:
    """Build one `http` tool per operation of an OpenAPI 3.x or Swagger 2.0 document.

    Args:
        document: the document itself, a path to a JSON (or, with PyYAML, YAML) file, or an
            `http(s)://` URL fetched with httpx.
        base_url: prepended to every path (the document's `servers`/`host` are ignored).
        prefix: put before every tool name; a dot is added unless it ends with `.`, `_`, `-`.
        headers: sent with every request; values may read `${ENV_VAR}`.

    Raises:
        UsageError: the document cannot be read or has no `paths` object.
    """
    doc = load_openapi(document)
    paths = doc.get("paths")
    if not isinstance(paths, Mapping):
        raise UsageError("the OpenAPI document has no 'paths' object: nothing to import")
    if prefix and not prefix.endswith((".", "_", "-", ":", "/")):
        prefix += "."
    refs = _Refs(doc)
    names: dict[str, int] = {}
    tools = []
    for path, method, item, op in _operations(paths, refs):
        name = _unique(prefix + _op_name(op, method, path), names)
        tools.append(_tool(name, path, method, item, op, refs, base_url, headers or {}, doc))
    return tools


def load_openapi(document: Mapping[str, Any] | str | Path) -> JSONObject:
    """Return the document as a dict: given, read from a file, parsed from text, or fetched."""
    if isinstance(document, Mapping):
        return dict(document)
    if isinstance(document, str) and document.lstrip().startswith(("{", "openapi:", "swagger:")):
        return _parse(document, "<text>")
    if isinstance(document, str) and re.match(r"https?://", document):
        import httpx

        try:
            response = httpx.get(document, timeout=30.0, follow_redirects=True)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise UsageError(f"cannot fetch the OpenAPI document {document!r}: {exc}") from exc
        return _parse(response.text, document)
    path = Path(document)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the OpenAPI document {str(path)!r}: {exc}") from exc
    return _parse(text, str(path))


def _parse(text: str, where: str) -> JSONObject:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as json_error:
        try:
            yaml: Any = importlib.import_module("yaml")
        except ImportError:
            raise UsageError(
                f"{where}: not JSON ({json_error}); install PyYAML to read YAML documents"
            ) from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise UsageError(f"{where}: neither JSON nor YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise UsageError(f"{where}: an OpenAPI document is an object, got {type(data).__name__}")
    return data


def _operations(
    paths: Mapping[str, Any], refs: _Refs
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


def _tool(
    name: str,
    path: str,
    method: str,
    item: JSONObject,
    op: JSONObject,
    refs: _Refs,
    base_url: str,
    headers: Mapping[str, str],
    doc: JSONObject,
) -> Tool:
    verb = method.upper()
    params = _Params(refs, openapi3="swagger" not in doc)
    raws = [refs.deref(p) for p in [*_list(item.get("parameters")), *_list(op.get("parameters"))]]
    for raw in sorted(raws, key=lambda p: isinstance(p, dict) and p.get("in") == "header"):
        params.add_parameter(raw)  # headers last: one that clashes is the one renamed
    params.add_path_templates(path)
    if verb not in ("GET", "HEAD"):
        params.add_body(op, verb)
    target: JSONObject = {"method": verb, "url": base_url.rstrip("/") + path,
                          "headers": dict(headers)}
    if verb not in QUERY_METHODS and params.query:
        target["queryParams"] = params.query
    if params.headers:
        target["headerParams"] = params.headers
    if params.body_param:
        target["bodyParam"] = params.body_param
    metadata: JSONObject = {
        "tags": ["openapi", *(t for t in _list(op.get("tags")) if isinstance(t, str))],
        "openapi": {"method": verb, "path": path}
        | ({"operationId": op["operationId"]} if isinstance(op.get("operationId"), str) else {}),
    }
    if params.media_type:
        metadata["openapi"]["bodyMediaType"] = params.media_type
    if op.get("deprecated") is True:
        metadata["deprecated"] = True
    summary, details = op.get("summary"), op.get("description")
    description = summary if isinstance(summary, str) and summary else details
    return Tool(
        name=name,
        description=description if isinstance(description, str) else f"{verb} {path}",
        params_schema=params.schema(),
        kind="http",
        target=target,
        metadata=metadata,
        idempotent=verb in ("GET", "HEAD", "OPTIONS", "PUT", "DELETE"),
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


class _Params:
    """Collects one operation's params into a schema and tells where each one goes."""

    def __init__(self, refs: _Refs, *, openapi3: bool = True) -> None:
        self.refs = refs
        self.openapi3 = openapi3
        self._where: dict[str, str] = {}  # param name -> its `in`
        self._body: tuple[Any, bool] = (None, False)
        self.media_type = ""
        """The request body's media type in the document (the HTTP adapter sends JSON)."""
        self.properties: JSONObject = {}
        self.required: list[str] = []
        self.query: list[str] = []
        self.headers: dict[str, str] = {}
        self.body_param = ""
        self._form: JSONObject = {"type": "object", "properties": {}}

    def add_parameter(self, param: Any) -> None:
        if not isinstance(param, dict) or not isinstance(param.get("name"), str):
            return
        name, where = param["name"], param.get("in")
        if where in ("body", "formData"):
            self._add_swagger_body(param)
            return
        if where not in ("path", "query", "header"):
            return  # cookies: the HTTP adapter sends none
        header = name
        if where == "header":
            if self.openapi3 and name.lower() in _IGNORED_HEADERS:
                return
            if self._where.get(name, "header") != "header":
                name = f"header_{name}"
        if name in self.properties:  # an operation's parameter overrides its path item's
            self.properties.pop(name)
            self.required = [n for n in self.required if n != name]
            self.query = [n for n in self.query if n != name]
        self._where[name] = where
        self.properties[name] = self._param_schema(param)
        if where == "path" or param.get("required") is True:
            self.required.append(name)
        if where == "query":
            self.query.append(name)
        if where == "header":
            self.headers[name] = header

    def _add_swagger_body(self, param: JSONObject) -> None:
        if param.get("in") == "body":
            self._body = (param.get("schema", {}), param.get("required") is True)
            return
        self._form["properties"][param["name"]] = self._param_schema(param)
        if param.get("required"):
            self._form.setdefault("required", []).append(param["name"])

    def add_path_templates(self, path: str) -> None:
        """Declare `{name}` templates that no parameter declared (httpbin has some)."""
        for name in re.findall(r"\{([^{}/]+)\}", path):
            if name not in self.properties:
                self.properties[name] = {"type": "string"}
            if name not in self.required:
                self.required.append(name)

    def add_body(self, op: JSONObject, verb: str) -> None:
        body_schema, required = self._body
        self.media_type = "application/json" if body_schema is not None else ""
        request_body = self.refs.deref(op.get("requestBody"))
        if isinstance(request_body, dict):
            self.media_type, body_schema = _pick_content(request_body.get("content"))
            required = request_body.get("required") is True
        if body_schema is None and self._form["properties"]:
            body_schema, required = self._form, bool(self._form.get("required"))
            self.media_type = "application/x-www-form-urlencoded"
        if body_schema is None:
            return
        schema = self.refs.schema(body_schema)
        props = schema.get("properties") if isinstance(schema, dict) else None
        mergeable = (
            verb not in QUERY_METHODS  # the adapter would send a DELETE's merged body as a query
            and isinstance(props, dict)
            and schema.get("type") in ("object", None)
            and not set(props) & set(self.properties)
            and not any(k in schema for k in ("oneOf", "anyOf", "allOf", "$ref"))
        )
        if mergeable:
            assert isinstance(props, dict)
            self.properties.update(props)
            if required:
                self.required.extend(_list(schema.get("required")))
            return
        self.body_param = "body" if "body" not in self.properties else "requestBody"
        self.properties[self.body_param] = schema
        if required:
            self.required.append(self.body_param)

    def _param_schema(self, param: JSONObject) -> JSONObject:
        raw = param.get("schema")
        if not isinstance(raw, dict):  # Swagger 2.0 keeps the schema on the parameter
            raw = {k: param[k] for k in _SWAGGER_PARAM_KEYS if k in param}
        schema = self.refs.schema(raw)
        if not isinstance(schema, dict):
            schema = {}
        if param.get("in") == "path" and "type" not in schema and not schema.keys() - {"title"}:
            schema["type"] = "string"
        if isinstance(param.get("description"), str) and "description" not in schema:
            schema["description"] = param["description"]
        if param.get("deprecated") is True:
            schema["deprecated"] = True
        return schema

    def schema(self) -> JSONObject:
        schema: JSONObject = {"type": "object", "properties": self.properties}
        if self.required:
            schema["required"] = list(dict.fromkeys(self.required))
        defs = self.refs.take_defs()
        if defs:
            schema["$defs"] = defs
        return schema


def _pick_content(content: Any) -> tuple[str, Any]:
    """Return the media type and schema of a request body: JSON if offered, else the first."""
    if not isinstance(content, dict):
        return "", None
    for media, spec in content.items():
        if media == "application/json" or media.endswith("+json"):
            return media, spec.get("schema", {}) if isinstance(spec, dict) else {}
    for media, spec in content.items():
        if isinstance(spec, dict) and "schema" in spec:
            return media, spec["schema"]
    return "", None


class _Refs:
    """Resolves local `$ref`s: inlined once, recursive ones kept in `$defs`."""

    def __init__(self, doc: JSONObject) -> None:
        self.doc = doc
        self._defs: dict[str, str] = {}  # $defs name -> pointer

    def deref(self, node: Any, depth: int = 0) -> Any:
        """Follow a `$ref` chain (parameters, path items, request bodies)."""
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and depth < 20:
            target = self._target(node["$ref"])
            if target is None:
                return {}
            node, depth = target, depth + 1
        return node

    def schema(self, node: Any) -> Any:
        """Return a JSON Schema 2020-12 copy of an OpenAPI schema, refs resolved."""
        return _normalise(self._inline(node, ()))

    def take_defs(self) -> JSONObject:
        """Return the `$defs` the last schemas needed (recursive refs), and forget them."""
        defs: JSONObject = {}
        while len(defs) < len(self._defs):
            for name, pointer in list(self._defs.items()):
                if name not in defs:
                    defs[name] = _normalise(self._inline(self._target(pointer), (pointer,)))
        self._defs = {}
        return defs

    def _inline(self, node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [self._inline(v, stack) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            siblings = {k: self._inline(v, stack) for k, v in node.items() if k != "$ref"}
            if not ref.startswith("#"):
                return {**siblings, "description": f"unresolved external $ref {ref!r}"}
            if ref in stack:
                return {**siblings, "$ref": f"#/$defs/{self._def_name(ref)}"}
            target = self._target(ref)
            if target is None:
                return siblings
            return {**self._inline(target, (*stack, ref)), **siblings}
        return {k: self._inline(v, stack) for k, v in node.items()}

    def _def_name(self, pointer: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", pointer.rsplit("/", 1)[-1]) or "def"
        name = base
        for count in range(2, 1000):
            if self._defs.get(name, pointer) == pointer:
                break
            name = f"{base}_{count}"
        self._defs[name] = pointer
        return name

    def _target(self, ref: str) -> Any:
        node: Any = self.doc
        for key in split_pointer(ref.lstrip("#")):
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return None
        return copy.deepcopy(node)


_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                          "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_ONE = frozenset({"items", "additionalProperties", "not", "if", "then", "else",
                         "contains", "propertyNames", "unevaluatedProperties",
                         "unevaluatedItems", "additionalItems"})


def _normalise(schema: Any) -> Any:
    """Turn OpenAPI 3.0/2.0 schema dialect into JSON Schema 2020-12, tolerantly."""
    if not isinstance(schema, dict):
        return schema
    out: JSONObject = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _normalise(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_normalise(sub) for sub in value]
        elif key in _SCHEMA_ONE:
            out[key] = _normalise(value)
        elif key not in ("nullable", "discriminator", "xml", "externalDocs", "collectionFormat"):
            out[key] = value
    _fix_dialect(out, nullable=schema.get("nullable") is True)
    return out


def _fix_dialect(out: JSONObject, *, nullable: bool) -> None:
    """Fix one schema object's own keywords: types, nullable, boolean exclusive bounds."""
    if key_type := out.get("type"):
        kinds = [key_type] if isinstance(key_type, str) else list(key_type)
        fixed = [_TYPE_FIXES.get(str(k).lower(), str(k).lower()) for k in kinds]
        fixed = [k for k in fixed if k in _JSON_TYPES]  # "file" and inventions: unconstrained
        if nullable and fixed and "null" not in fixed:
            fixed.append("null")
        if not fixed:
            del out["type"]
        else:
            out["type"] = fixed[0] if len(fixed) == 1 else fixed
    for bound, limit in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if not isinstance(out.get(bound), bool):
            continue
        exclusive = out.pop(bound)  # draft-4 style, as OpenAPI 3.0 writes it
        if exclusive and limit in out:
            out[bound] = out.pop(limit)
    if "example" in out and "examples" not in out:
        out["examples"] = [out.pop("example")]
