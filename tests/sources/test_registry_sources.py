"""Registry files' lazy sources and entry switches: `openapi`, `output`, `redactResult`, and
what the registry knows of its sources before listing them."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from toolcaller import Tool, ToolCaller
from toolcaller.core.registry import Registry, may_match_prefix
from toolcaller.errors import RegistryError

DOC = {
    "openapi": "3.0.3",
    "servers": [{"url": "http://127.0.0.1:9/v1"}],
    "components": {"securitySchemes": {
        "api_key": {"type": "apiKey", "in": "header", "name": "X-Key"},
        "basicAuth": {"type": "http", "scheme": "basic"}}},
    "security": [{"api_key": []}],
    "paths": {
        "/pets": {"get": {"operationId": "listPets", "tags": ["pets"]},
                  "post": {"operationId": "createPet", "tags": ["pets"],
                           "security": [{"basicAuth": []}, {}],
                           "requestBody": {"content": {
                               "application/x-www-form-urlencoded": {"schema": {
                                   "type": "object",
                                   "properties": {"name": {"type": "string"}}}}}}}},
        "/stores": {"get": {"operationId": "listStores", "tags": ["stores"],
                            "security": []}},
    },
}


def registry_with(tmp_path: Path, data: dict[str, Any]) -> Path:
    (tmp_path / "specs").mkdir(exist_ok=True)
    (tmp_path / "specs" / "pets.json").write_text(json.dumps(DOC))
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(data))
    return path


class TestOpenApiSource:
    def test_operations_are_tools_named_by_the_key(self, tmp_path: Path) -> None:
        """The key is the prefix; the document is relative to the registry's folder."""
        path = registry_with(tmp_path, {"openapi": {"pets": {
            "document": "specs/pets.json", "options": {"timeout": 9000},
            "redactResult": True}}})
        with ToolCaller.from_file(path) as caller:
            names = [t["name"] for t in caller.discover().result["tools"]]
            assert names == ["pets.listPets", "pets.createPet", "pets.listStores"]
            tool = caller.registry.get("pets.createPet")
            assert tool is not None
        assert tool.options == {"timeout": 9000}
        assert tool.redact_result is True
        assert tool.target["url"] == "http://127.0.0.1:9/v1/pets"  # the document's server
        assert tool.target["contentType"] == "application/x-www-form-urlencoded"
        assert tool.metadata["annotations"] == {"readOnlyHint": False, "idempotentHint": False}
        assert tool.idempotent is False

    def test_security_schemes_read_named_variables(self, tmp_path: Path) -> None:
        """Schemes become credentials read from ${SOURCE_SCHEME} variables, described."""
        path = registry_with(tmp_path, {"openapi": {"pets": {"document": "specs/pets.json"}}})
        with ToolCaller.from_file(path) as caller:
            listing = caller.registry.get("pets.listPets")
            creating = caller.registry.get("pets.createPet")
            stores = caller.registry.get("pets.listStores")
        assert listing is not None
        assert creating is not None
        assert stores is not None
        assert listing.target["auth"] == [[{"type": "apiKey", "in": "header", "name": "X-Key",
                                            "value": "${PETS_API_KEY}"}]]
        assert creating.target["auth"] == [[{"type": "basic",
                                             "username": "${PETS_BASIC_AUTH_USERNAME}",
                                             "password": "${PETS_BASIC_AUTH_PASSWORD}"}]]
        assert "${PETS_API_KEY}" in listing.description
        assert "auth" not in stores.target  # `security: []`: anonymous

    def test_settings_rename_and_add_schemes(self, tmp_path: Path) -> None:
        """`security` renames a scheme's variables, or adds one for the tools it includes."""
        path = registry_with(tmp_path, {"openapi": {"pets": {
            "document": "specs/pets.json", "include": "tag:pets",
            "security": {"api_key": {"value": "${MY_KEY}"},
                         "extra": {"type": "bearer", "token": "${TOK}",
                                   "include": "name:*create*"}}}}})
        with ToolCaller.from_file(path) as caller:
            tools = {t.name: t for s in caller.registry.sources for t in s.list_tools()}
        assert set(tools) == {"pets.listPets", "pets.createPet"}
        assert tools["pets.listPets"].target["auth"][0][0]["value"] == "${MY_KEY}"
        assert tools["pets.createPet"].target["auth"][-1] == [{"type": "bearer",
                                                               "token": "${TOK}"}]
        assert len(tools["pets.listPets"].target["auth"]) == 1

    def test_bad_default_options_refuse_the_file(self, tmp_path: Path) -> None:
        """A source's options are checked at load: the error names the pointer."""
        path = registry_with(tmp_path, {"openapi": {"pets": {
            "document": "specs/pets.json", "options": {"timeout": -1}}}})
        with pytest.raises(RegistryError, match="/openapi/pets/options"):
            ToolCaller.from_file(path)

    def test_a_missing_document_is_a_discovery_problem(self, tmp_path: Path) -> None:
        """A document that cannot be read is a problem of its source; the rest works."""
        path = registry_with(tmp_path, {"openapi": {"gone": {"document": "specs/none.json"}}})
        with ToolCaller.from_file(path) as caller:
            problems = caller.discover().result["problems"]
            assert problems[0]["source"] == "openapi:gone"
            envelope = caller.handle({"toolName": "gone.anything"})
        assert envelope["error"]["code"] == "EXECUTION_ERROR"

    def test_background_connect_reads_documents_without_waiting(self, tmp_path: Path) -> None:
        """connect='background' reads the document in a thread; a name filter lists nothing."""
        path = registry_with(tmp_path, {"openapi": {"pets": {"document": "specs/pets.json"}}})
        with ToolCaller.from_file(path, connect="background") as caller:
            (source,) = caller.registry.sources
            deadline = time.monotonic() + 10
            while not source.cached_tools() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(source.cached_tools()) == 3


class TestEntrySwitches:
    SCRIPT = "import sys; sys.stdin.read(); print('plain words, password hunter22!')"

    def entry(self, **extra: Any) -> dict[str, Any]:
        return {"name": "t", "description": "d", **extra,
                "paramsSchema": {"type": "object", "properties": {"password": {}}},
                "script": {"command": [sys.executable, "-c", self.SCRIPT]}}

    def call(self, tmp_path: Path, entry: dict[str, Any]) -> dict[str, Any]:
        path = tmp_path / "tools.json"
        path.write_text(json.dumps({"tools": [entry]}))
        with ToolCaller.from_file(path) as caller:
            return caller.handle({"toolName": "t", "params": {"password": "hunter22"}})

    def test_a_script_promises_json(self, tmp_path: Path) -> None:
        """A script's stdout is parsed: prose is PARSE_ERROR (TC-09)."""
        assert self.call(tmp_path, self.entry())["error"]["code"] == "PARSE_ERROR"

    def test_output_text_makes_prose_a_string(self, tmp_path: Path) -> None:
        """`"output": "text"`: the same prose is a string and a success; not redacted."""
        envelope = self.call(tmp_path, self.entry(output="text"))
        assert envelope["result"].startswith("plain words, password hunter22")

    def test_redact_result_masks_the_calls_secrets(self, tmp_path: Path) -> None:
        """`"redactResult": true` masks the call's secrets in the result too."""
        envelope = self.call(tmp_path, self.entry(output="text", redactResult=True))
        assert envelope["result"].startswith("plain words, password ***!")


class TestWhatTheRegistryKnowsBeforeListing:
    @pytest.mark.parametrize(("filter_text", "prefix", "expected"), [
        ("name:time.*", "time.", True), ("name:time.*", "git.", False),
        ("name:*time*", "git.", True), ("name:ti*", "time.", True),
        ("name:t*", "git.", False), ("-name:time.*", "time.", True),
        ("time", "git.", True), ("tag:mcp name:git.*", "time.", False),
        ("name:clock", "clock", True), ("name:clock", "other", False),
        ('"name:time.get_current_time"', "time.", True),
    ])
    def test_a_name_filter_rules_out_sources(self, filter_text: str, prefix: str,
                                             expected: bool) -> None:
        """Only `name:` globs rule a source out, by their fixed start against its prefix."""
        assert may_match_prefix(filter_text, prefix) is expected

    def test_suggestions_come_from_listed_sources_too(self) -> None:
        """TOOL_NOT_FOUND suggestions include tools a source listed, without listing any."""
        listed = [Tool("time.get_current_time", "", {}, "python", None)]

        class Listed:
            name, prefix = "mcp:time", "time."

            def list_tools(self) -> list[Tool]:
                raise AssertionError("not listed for a suggestion")

            def cached_tools(self) -> list[Tool]:
                return listed

        registry = Registry(sources=[Listed()])
        assert registry.suggest("time.get_curent_time") == ["time.get_current_time"]

    def test_default_options_are_known_before_listing(self) -> None:
        """A source's default options are the deadline of a call that must list it first."""

        class Slow:
            name, prefix, default_options = "mcp:slow", "slow.", {"deadline": 30000}

            def list_tools(self) -> list[Tool]:
                raise AssertionError("not listed")

        registry = Registry(sources=[Slow()])
        assert registry.default_options("slow.x") == {"deadline": 30000}
        assert registry.default_options("other.x") == {}
