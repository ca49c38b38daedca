"""One operation's parameters and request body as a params schema, and where each param goes.

- path, query and header parameters are params (cookies are left out); a header that clashes
  with a parameter of the same name elsewhere is `header_<name>`; OpenAPI 3 ignores header
  parameters named Accept, Content-Type and Authorization, as its specification says;
- query parameters keep their `style`/`explode` (Swagger 2.0's `collectionFormat`) for objects
  and arrays, so that the HTTP adapter writes them as the API expects;
- the request body: JSON when the operation offers it, else a form
  (`application/x-www-form-urlencoded`, Swagger's `formData`), multipart (`multipart/form-data`,
  or a `file` parameter) or the first media type given. An object body whose property names
  clash with no parameter is merged (its properties are top-level params); any other body is
  the single param `body` (`requestBody` if `body` is taken).
"""

from __future__ import annotations

import re
from typing import Any

from toolcaller._types import JSONObject
from toolcaller.sources._openapi_schema import Refs

__all__ = ["FORM", "MULTIPART", "QUERY_METHODS", "Params"]

QUERY_METHODS = frozenset({"GET", "DELETE", "HEAD", "OPTIONS"})
"""Methods whose leftover params the HTTP adapter sends as the query string."""
FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
_SWAGGER_PARAM_KEYS = ("type", "format", "items", "enum", "default", "minimum", "maximum",
                       "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
                       "pattern", "minItems", "maxItems", "uniqueItems", "multipleOf")
_COLLECTION_FORMATS = {"csv": ("form", False), "ssv": ("spaceDelimited", False),
                       "tsv": ("form", False), "pipes": ("pipeDelimited", False),
                       "multi": ("form", True)}


class Params:
    """Collects one operation's params into a schema and tells where each one goes."""

    def __init__(self, refs: Refs, *, openapi3: bool = True,
                 consumes: list[str] | None = None) -> None:
        self.refs = refs
        self.openapi3 = openapi3
        self.consumes = consumes or []
        self._where: dict[str, str] = {}  # param name -> its `in`
        self._body: tuple[Any, bool] = (None, False)
        self.media_type = ""
        """The request body's media type in the document."""
        self.properties: JSONObject = {}
        self.required: list[str] = []
        self.query: list[str] = []
        self.headers: dict[str, str] = {}
        self.styles: dict[str, JSONObject] = {}
        """`{param: {"style", "explode"}}` of query params and form fields (the adapter's)."""
        self.body_param = ""
        self._form: JSONObject = {"type": "object", "properties": {}}
        self._has_file = False

    def add_parameter(self, param: Any) -> None:
        """Add one parameter object (path, query, header; body and formData in Swagger)."""
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
            self.styles.pop(name, None)
        self._where[name] = where
        self.properties[name] = schema = self._param_schema(param)
        if where == "path" or param.get("required") is True:
            self.required.append(name)
        if where == "query":
            self.query.append(name)
            self._query_style(name, param, schema)
        if where == "header":
            self.headers[name] = header

    def _query_style(self, name: str, param: JSONObject, schema: JSONObject) -> None:
        """Keep how an object or array query param is written (OpenAPI: form, exploded)."""
        if "style" not in param and "collectionFormat" not in param and schema.get(
                "type") not in ("object", "array"):
            return  # a scalar: written the same in every style
        style, explode = param.get("style"), param.get("explode")
        if not self.openapi3 and "style" not in param:
            style, explode = _COLLECTION_FORMATS.get(str(param.get("collectionFormat", "csv")),
                                                     ("form", False))
        style = style if style in ("form", "spaceDelimited", "pipeDelimited",
                                   "deepObject") else "form"
        entry: JSONObject = {"style": style}
        if isinstance(explode, bool):
            entry["explode"] = explode
        self.styles[name] = entry

    def _add_swagger_body(self, param: JSONObject) -> None:
        if param.get("in") == "body":
            self._body = (param.get("schema", {}), param.get("required") is True)
            return
        if param.get("type") == "file":
            self._has_file = True
        self._form["properties"][param["name"]] = self._param_schema(param)
        if param.get("collectionFormat") in _COLLECTION_FORMATS:
            style, explode = _COLLECTION_FORMATS[param["collectionFormat"]]
            self.styles[param["name"]] = {"style": style, "explode": explode}
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
        """Add the request body: merged into the params, or the single `body` param."""
        body_schema, required = self._body
        self.media_type = "application/json" if body_schema is not None else ""
        request_body = self.refs.deref(op.get("requestBody"))
        if isinstance(request_body, dict):
            self.media_type, body_schema, encoding = _pick_content(request_body.get("content"))
            required = request_body.get("required") is True
            self._encoding_styles(encoding)
        if body_schema is None and self._form["properties"]:
            body_schema, required = self._form, bool(self._form.get("required"))
            multipart = self._has_file or (MULTIPART in self.consumes
                                           and FORM not in self.consumes)
            self.media_type = MULTIPART if multipart else FORM
        if body_schema is None:
            return
        self._merge_or_wrap(self.refs.schema(body_schema), required, verb)

    def _encoding_styles(self, encoding: Any) -> None:
        if not isinstance(encoding, dict):
            return
        for field, spec in encoding.items():
            if isinstance(spec, dict) and ("style" in spec or "explode" in spec):
                entry: JSONObject = {"style": spec.get("style", "form")}
                if isinstance(spec.get("explode"), bool):
                    entry["explode"] = spec["explode"]
                self.styles[str(field)] = entry

    def _merge_or_wrap(self, schema: Any, required: bool, verb: str) -> None:
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
        """Return the params schema (with the `$defs` its recursive refs need)."""
        schema: JSONObject = {"type": "object", "properties": self.properties}
        if self.required:
            schema["required"] = list(dict.fromkeys(self.required))
        defs = self.refs.take_defs()
        if defs:
            schema["$defs"] = defs
        return schema


def _pick_content(content: Any) -> tuple[str, Any, Any]:
    """Return a request body's media type, schema and encoding: JSON, a form, multipart, any."""
    if not isinstance(content, dict):
        return "", None, None
    media_types = [m for m, spec in content.items() if isinstance(spec, dict)]

    def rank(media: str) -> int:
        base = media.split(";")[0].strip().lower()
        if base == "application/json" or base.endswith("+json"):
            return 0
        return {FORM: 1, MULTIPART: 2}.get(base, 3)

    for media in sorted(media_types, key=rank):
        spec = content[media]
        if rank(media) < 3 or "schema" in spec:
            return media, spec.get("schema", {}), spec.get("encoding")
    return "", None, None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
