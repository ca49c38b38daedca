"""OpenAPI import: hand-written documents, and httpbin's own served spec called for real."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from toolcaller.adapters.base import TextOutput
from toolcaller.core.tool import Tool
from toolcaller.errors import ExecutionError, UsageError
from toolcaller.sources.openapi import load_openapi, tools_from_openapi
from toolcaller.testing import invoke

BASE = "http://127.0.0.1:9/v1"

PETSTORE = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1"},
    "servers": [{"url": "https://api.example.com/v1"}],
    "paths": {
        "/pets": {
            "get": {
                "operationId": "listPets",
                "summary": "List pets",
                "tags": ["pets"],
                "parameters": [
                    {"name": "limit", "in": "query", "description": "At most this many",
                     "schema": {"type": "integer", "minimum": 1, "maximum": 100,
                                "exclusiveMaximum": True}},
                    {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}},
                    {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                ],
            },
            "post": {
                "operationId": "pets.create!",
                "parameters": [{"name": "dryRun", "in": "query", "schema": {"type": "boolean"}}],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/NewPet"}}},
                },
            },
        },
        "/pets/{petId}": {
            "parameters": [{"$ref": "#/components/parameters/PetId"}],
            "get": {"operationId": "showPet", "description": "Show one pet"},
            "put": {"requestBody": {"content": {"application/json": {"schema": {
                "type": "array", "items": {"$ref": "#/components/schemas/Tag"}}}}}},
            "delete": {"deprecated": True},
        },
        "/trees": {"post": {"operationId": "plantTree", "requestBody": {"content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}},
        "/again": {"get": {"operationId": "listPets"}},
    },
    "components": {
        "parameters": {"PetId": {"name": "petId", "in": "path", "required": True,
                                 "schema": {"type": "integer", "format": "int64"}}},
        "schemas": {
            "NewPet": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "example": "Rex"},
                "tag": {"type": "string", "nullable": True},
                "nullable": {"type": "boolean"},
                "example": {"type": "string"},
            }},
            "Tag": {"type": "object", "properties": {"label": {"type": "string"}}},
            "Node": {"type": "object", "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
            }},
        },
    },
}

SWAGGER = {
    "swagger": "2.0",
    "host": "public.example.com",
    "basePath": "/api",
    "paths": {
        "/items/{id}": {
            "get": {"summary": "Get item", "parameters": [
                {"name": "id", "in": "path", "type": "int", "required": True}]},
            "post": {"parameters": [{"name": "item", "in": "body", "required": True,
                                     "schema": {"$ref": "#/definitions/Item"}}]},
        },
        "/upload": {"post": {"parameters": [
            {"name": "file", "in": "formData", "type": "file"},
            {"name": "note", "in": "formData", "type": "string", "required": True},
        ]}},
        "/status/{codes}": {"get": {"parameters": [{"in": "path", "name": "codes"}]}},
    },
    "definitions": {"Item": {"type": "object", "properties": {
        "id": {"type": "int"},
        "price": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
    }}},
}


def by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {t.name: t for t in tools}


@pytest.fixture
def pets() -> dict[str, Tool]:
    return by_name(tools_from_openapi(PETSTORE, base_url=BASE + "/", prefix="pets",
                                      headers={"Authorization": "Bearer ${PETS_TOKEN}"}))


class TestOpenApi3:
    def test_one_tool_per_operation_named_by_operation_id_or_method_path(self, pets):
        assert list(pets) == [
            "pets.listPets", "pets.pets.create", "pets.showPet", "pets.put_pets_petId",
            "pets.delete_pets_petId", "pets.plantTree", "pets.listPets_2",
        ]

    def test_every_schema_is_valid_json_schema(self, pets):
        for tool in pets.values():
            Draft202012Validator.check_schema(tool.params_schema)
            assert tool.kind == "http"

    def test_query_and_header_params_of_a_get(self, pets):
        tool = pets["pets.listPets"]
        assert tool.params_schema == {"type": "object", "properties": {
            "limit": {"type": "integer", "minimum": 1, "exclusiveMaximum": 100,
                      "description": "At most this many"},
            "X-Request-Id": {"type": "string"},
        }}
        assert tool.target == {
            "method": "GET", "url": BASE + "/pets",
            "headers": {"Authorization": "Bearer ${PETS_TOKEN}"},
            "headerParams": {"X-Request-Id": "X-Request-Id"},
        }
        assert tool.description == "List pets"
        assert tool.metadata["tags"] == ["openapi", "pets"]
        assert tool.metadata["openapi"] == {"method": "GET", "path": "/pets",
                                            "operationId": "listPets"}
        assert tool.idempotent is True

    def test_an_object_body_is_merged_and_query_params_are_named(self, pets):
        """Body properties become params; property names like `nullable` stay untouched."""
        tool = pets["pets.pets.create"]
        props = tool.params_schema["properties"]
        assert list(props) == ["dryRun", "name", "tag", "nullable", "example"]
        assert props["tag"] == {"type": ["string", "null"]}
        assert props["name"] == {"type": "string", "examples": ["Rex"]}
        assert tool.params_schema["required"] == ["name"]
        assert tool.target["queryParams"] == ["dryRun"]
        assert "bodyParam" not in tool.target
        assert tool.idempotent is False

    def test_a_non_object_body_is_the_body_param(self, pets):
        tool = pets["pets.put_pets_petId"]
        assert tool.params_schema["properties"]["body"] == {
            "type": "array", "items": {"type": "object", "properties": {
                "label": {"type": "string"}}}}
        assert tool.params_schema["required"] == ["petId"]
        assert tool.target["bodyParam"] == "body"
        assert tool.target["url"] == BASE + "/pets/{petId}"

    def test_path_item_parameters_and_refs_are_resolved(self, pets):
        tool = pets["pets.showPet"]
        assert tool.params_schema["properties"]["petId"] == {"type": "integer", "format": "int64"}
        assert tool.description == "Show one pet"
        assert pets["pets.delete_pets_petId"].metadata["deprecated"] is True
        assert pets["pets.delete_pets_petId"].description == "DELETE /pets/{petId}"

    def test_recursive_refs_are_kept_as_defs(self, pets):
        schema = pets["pets.plantTree"].params_schema
        assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
        assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {
            "$ref": "#/$defs/Node"}
        validator = Draft202012Validator(schema)
        assert validator.is_valid({"value": 1, "children": [{"value": 2, "children": []}]})
        assert not validator.is_valid({"children": [{"children": [{"value": "x"}]}]})

    def test_the_prefix_keeps_its_own_separator(self):
        tools = tools_from_openapi(PETSTORE, base_url=BASE, prefix="api_")
        assert tools[0].name == "api_listPets"
        assert tools_from_openapi(PETSTORE, base_url=BASE)[0].name == "listPets"


class TestSwagger2:
    @pytest.fixture
    def tools(self) -> dict[str, Tool]:
        return by_name(tools_from_openapi(SWAGGER, base_url="http://127.0.0.1:9/api"))

    def test_invalid_types_are_fixed_and_the_base_url_is_the_callers(self, tools):
        tool = tools["get_items_id"]
        assert tool.params_schema["properties"]["id"] == {"type": "integer"}
        assert tool.target["url"] == "http://127.0.0.1:9/api/items/{id}"
        for each in tools.values():
            Draft202012Validator.check_schema(each.params_schema)

    def test_a_body_that_clashes_with_a_path_param_is_wrapped(self, tools):
        tool = tools["post_items_id"]
        body = tool.params_schema["properties"]["body"]
        assert body["properties"]["id"] == {"type": "integer"}
        assert body["properties"]["price"] == {"type": "number", "exclusiveMinimum": 0}
        assert tool.params_schema["required"] == ["id", "body"]
        assert tool.target["bodyParam"] == "body"

    def test_form_data_with_a_file_is_a_multipart_body(self, tools):
        tool = tools["post_upload"]
        assert tool.params_schema["properties"] == {"file": {}, "note": {"type": "string"}}
        assert tool.params_schema["required"] == ["note"]
        assert tool.metadata["openapi"]["bodyMediaType"] == "multipart/form-data"
        assert tool.target["contentType"] == "multipart/form-data"

    def test_an_untyped_path_param_is_a_string(self, tools):
        assert tools["get_status_codes"].params_schema["properties"]["codes"] == {
            "type": "string"}


HEADERS_DOC = {
    "openapi": "3.0.3",
    "paths": {
        "/items/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True,
                            "schema": {"type": "integer"}}],
            "get": {"operationId": "getItem", "parameters": [
                {"name": "id", "in": "header", "schema": {"type": "string"}},
                {"name": "Authorization", "in": "header", "schema": {"type": "string"}},
                {"name": "accept", "in": "header", "schema": {"type": "string"}},
                {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                {"name": "v", "in": "query", "schema": {"type": "integer"}},
                {"name": "v", "in": "query", "required": True, "schema": {"type": "string"}},
            ]},
            "delete": {"operationId": "deleteItem",
                       "parameters": [{"name": "force", "in": "query",
                                       "schema": {"type": "boolean"}}],
                       "requestBody": {"content": {"application/json": {"schema": {
                           "type": "object", "properties": {"reason": {"type": "string"}}}}}}},
        },
    },
}


class TestParamPlaces:
    def test_header_params_are_named_apart_and_reserved_headers_ignored(self) -> None:
        """A header clashing with a path param is `header_<name>`; OpenAPI 3 ignores
        Authorization, Accept and Content-Type header params; a later param overrides."""
        tool = by_name(tools_from_openapi(HEADERS_DOC, base_url=BASE))["getItem"]
        schema: Any = tool.params_schema
        assert tool.target["headerParams"] == {"header_id": "id", "X-Trace": "X-Trace"}
        assert list(schema["properties"]) == ["id", "v", "header_id", "X-Trace"]
        assert schema["properties"]["v"] == {"type": "string"}
        assert schema["required"] == ["id", "v"]
        assert "queryParams" not in tool.target

    def test_a_delete_body_is_the_body_param(self) -> None:
        """A DELETE's merged body would go to the query: it is the `body` param instead."""
        tool = by_name(tools_from_openapi(HEADERS_DOC, base_url=BASE))["deleteItem"]
        schema: Any = tool.params_schema
        assert tool.target["bodyParam"] == "body"
        assert list(schema["properties"]) == ["id", "force", "body"]

    def test_swagger2_keeps_an_authorization_header_param(self) -> None:
        """Swagger 2.0 has no such rule: an Authorization header param stays a param."""
        doc = {"swagger": "2.0", "paths": {"/bearer": {"get": {"parameters": [
            {"name": "Authorization", "in": "header", "type": "string"}]}}}}
        (tool,) = tools_from_openapi(doc, base_url=BASE)
        assert tool.target["headerParams"] == {"Authorization": "Authorization"}


class TestLoading:
    def test_a_json_file_a_text_and_a_dict_give_the_same_tools(self, tmp_path: Path):
        path = tmp_path / "spec.json"
        path.write_text(json.dumps(PETSTORE))
        from_file = tools_from_openapi(path, base_url=BASE)
        from_text = tools_from_openapi(json.dumps(PETSTORE), base_url=BASE)
        assert [t.info() for t in from_file] == [t.info() for t in from_text]
        assert load_openapi(str(path)) == PETSTORE

    def test_a_yaml_file(self, tmp_path: Path):
        yaml = pytest.importorskip("yaml")
        path = tmp_path / "spec.yaml"
        path.write_text(yaml.safe_dump(SWAGGER))
        assert len(tools_from_openapi(path, base_url=BASE)) == 4

    @pytest.mark.parametrize(
        ("document", "message"),
        [("/no/such/spec.json", "cannot read"), ({"openapi": "3.1.0"}, "no 'paths'"),
         ("[1, 2]", "is an object")],
        ids=["missing-file", "no-paths", "not-an-object"],
    )
    def test_unusable_documents_are_usage_errors(self, document, message, tmp_path):
        if document == "[1, 2]":
            (tmp_path / "list.json").write_text(document)
            document = tmp_path / "list.json"
        with pytest.raises(UsageError, match=message):
            tools_from_openapi(document, base_url=BASE)


# --- httpbin, for real -------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def httpbin_url() -> Iterator[str]:
    pytest.importorskip("httpbin")
    gunicorn = shutil.which("gunicorn") or str(Path(sys.executable).with_name("gunicorn"))
    if not Path(gunicorn).exists():
        pytest.skip("gunicorn is not installed")
    port = free_port()
    help_text = subprocess.run([gunicorn, "--help"], capture_output=True, text=True).stdout
    extra = ["--no-control-socket"] if "--no-control-socket" in help_text else []
    proc = subprocess.Popen(
        [gunicorn, "--bind", f"127.0.0.1:{port}", "--workers", "2", "--worker-class", "gthread",
         "--threads", "8", *extra, "httpbin:app"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("httpbin did not start")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def httpbin_tools(httpbin_url: str) -> dict[str, Tool]:
    return by_name(tools_from_openapi(f"{httpbin_url}/spec.json", base_url=httpbin_url,
                                      prefix="httpbin"))


@pytest.mark.integration
class TestHttpbin:
    def test_its_invalid_spec_imports_with_valid_schemas(self, httpbin_tools, httpbin_url):
        """No operationIds, `"type": "int"`, a public host: every operation still imports."""
        tools = httpbin_tools
        assert len(tools) > 70
        assert "httpbin.get_anything_anything" in tools
        assert tools["httpbin.get_bytes_n"].params_schema["properties"]["n"] == {
            "type": "integer"}
        for tool in tools.values():
            Draft202012Validator.check_schema(tool.params_schema)
            assert tool.target["url"].startswith(httpbin_url + "/")

    def test_an_operation_is_called_through_the_http_adapter(self, httpbin_tools):
        tools = httpbin_tools
        http = pytest.importorskip("toolcaller.adapters.http")

        async def run() -> None:
            adapter = http.HttpAdapter()
            try:
                out = await invoke(adapter, tools["httpbin.get_anything_anything"],
                                   {"anything": "a b", "q": 1}, timeout=10_000)
                assert isinstance(out, TextOutput)
                echo = json.loads(out.data)
                assert echo["method"] == "GET"
                assert echo["url"].endswith("/anything/a%20b?q=1")
                assert echo["args"] == {"q": "1"}
                out = await invoke(adapter, tools["httpbin.post_anything"],
                                   {"name": "Rex", "n": 2})
                assert json.loads(out.data)["json"] == {"name": "Rex", "n": 2}
                with pytest.raises(ExecutionError) as caught:
                    await invoke(adapter, tools["httpbin.get_status_codes"], {"codes": "418"})
                assert caught.value.retryable is False
                assert caught.value.details["status"] == 418
            finally:
                await adapter.aclose()

        asyncio.run(run())


ANYTHING_DOC = {
    "openapi": "3.0.3",
    "paths": {
        "/anything/orders": {"post": {
            "operationId": "createOrder",
            "parameters": [{"name": "dryRun", "in": "query", "schema": {"type": "boolean"}},
                           {"name": "X-Trace-Id", "in": "header", "schema": {"type": "string"}}],
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["item"],
                "properties": {"item": {"type": "string"}, "qty": {"type": "integer"}}}}}},
        }},
        "/anything/orders/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True,
                            "schema": {"type": "integer"}}],
            "put": {"operationId": "tagOrder", "requestBody": {"content": {"application/json": {
                "schema": {"type": "array", "items": {"type": "string"}}}}}},
            "delete": {"operationId": "cancelOrder",
                       "parameters": [{"name": "X-Api-Key", "in": "header",
                                       "schema": {"type": "string"}}],
                       "requestBody": {"content": {"application/json": {"schema": {
                           "type": "object", "properties": {"reason": {"type": "string"}}}}}}},
        },
    },
}


@pytest.fixture
def caller(httpbin_url: str, httpbin_tools: dict[str, Tool]) -> Iterator[Any]:
    from toolcaller import ToolCaller
    from toolcaller.adapters.http import HttpAdapter

    tools = [*tools_from_openapi(ANYTHING_DOC, base_url=httpbin_url), *httpbin_tools.values()]
    with ToolCaller(tools=tools, adapters={"http": HttpAdapter(trust_env=False)}) as caller:
        yield caller


def echo(caller: Any, name: str, params: dict[str, Any]) -> Any:
    envelope = caller.handle({"toolName": name, "params": params, "options": {"retries": 0}})
    assert envelope["success"], envelope
    return envelope["result"]


@pytest.mark.integration
class TestOperationsCalledForReal:
    def test_query_header_and_merged_body_of_a_post(self, caller: Any) -> None:
        out = echo(caller, "createOrder",
                   {"dryRun": True, "X-Trace-Id": "t-1", "item": "tea", "qty": 2})
        assert (out["method"], out["args"], out["json"]) == (
            "POST", {"dryRun": "true"}, {"item": "tea", "qty": 2})
        assert out["headers"]["X-Trace-Id"] == "t-1"

    def test_path_and_array_body_of_a_put(self, caller: Any) -> None:
        out = echo(caller, "tagOrder", {"id": 5, "body": ["urgent", "gift"]})
        assert (out["method"], out["json"], out["args"]) == ("PUT", ["urgent", "gift"], {})
        assert out["url"].endswith("/anything/orders/5")

    def test_body_and_secret_header_of_a_delete(self, caller: Any) -> None:
        out = echo(caller, "cancelOrder",
                   {"id": 5, "X-Api-Key": "key-31415926", "body": {"reason": "late"}})
        assert (out["method"], out["json"]) == ("DELETE", {"reason": "late"})
        assert out["headers"]["X-Api-Key"] == "key-31415926"
        failed = caller.handle({"toolName": "cancelOrder", "params": {
            "id": "x", "X-Api-Key": "key-31415926"}})
        assert failed["error"]["code"] == "INVALID_PARAMS"
        assert "key-31415926" not in json.dumps(failed)

    def test_httpbin_header_and_query_params(self, caller: Any) -> None:
        """httpbin's own spec: an Authorization header param, If-None-Match, a POST query."""
        out = echo(caller, "httpbin.get_bearer", {"Authorization": "Bearer tok-2718281828"})
        assert out == {"authenticated": True, "token": "tok-2718281828"}
        failed = caller.handle({"toolName": "httpbin.get_etag_etag",
                                "params": {"etag": "abc", "If-None-Match": "abc"}})
        assert failed["error"]["code"] == "EXECUTION_ERROR"
        assert failed["error"]["details"]["status"] == 304
        assert failed["metadata"]["attempts"] == 1
        # a POST's query param: its object is exploded as the document says (style form)
        out = echo(caller, "httpbin.post_response_headers", {"freeform": {"X-Demo": "1"}})
        assert out["X-Demo"] == "1"
