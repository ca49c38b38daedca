"""`toolcaller.core.templates`: `${VAR}` and `{name}` in URLs, one rule each."""

from __future__ import annotations

import pytest

from toolcaller.core.templates import expand_vars, url_params
from toolcaller.errors import ExecutionError

ENV = {"TOKEN": "abc123", "EMPTY": "", "HOST": "example.org"}


class TestExpandVars:
    @pytest.mark.parametrize(
        ("text", "expanded", "revealed"),
        [
            ("plain text", "plain text", []),
            ("Bearer ${TOKEN}", "Bearer abc123", ["abc123"]),
            ("${HOST}:${TOKEN}", "example.org:abc123", ["example.org", "abc123"]),
            ("${MISSING:-fallback}", "fallback", []),
            ("${EMPTY:-fallback}", "fallback", []),
            ("${EMPTY}", "", []),
            ("$${TOKEN} costs $5", "${TOKEN} costs $5", []),
            ("{id} and $HOME stay", "{id} and $HOME stay", []),
        ],
        ids=["plain", "one", "two", "fallback", "empty-fallback", "empty", "escape", "other-$"],
    )
    def test_expansion(self, text: str, expanded: str, revealed: list[str]) -> None:
        """`${VAR}` reads the environment; the values read are returned to be masked."""
        assert expand_vars(text, ENV, where="test") == (expanded, revealed)

    def test_missing_variable_is_permanent_and_named(self) -> None:
        """An unset variable is a permanent EXECUTION_ERROR naming it and where it was read."""
        with pytest.raises(ExecutionError) as info:
            expand_vars("Bearer ${NOPE}", ENV, where="header 'Authorization'")
        assert not info.value.retryable
        assert "'NOPE' is not set (read by header 'Authorization')" in info.value.message
        assert info.value.details == {"variable": "NOPE"}


class TestOneRuleEverywhere:
    """The registry's `${VAR}` means the same in scripts, HTTP tools and `mcpServers`."""

    @pytest.mark.parametrize(("template", "expected"), [
        ("${EMPTY:-x}", "x"), ("${MISSING:-x}", "x"), ("$${TOKEN}", "${TOKEN}"),
        ("${TOKEN}", "abc123"),
    ], ids=["empty-fallback", "unset-fallback", "escape", "plain"])
    def test_mcp_server_entries_agree(self, template: str, expected: str) -> None:
        """An `mcpServers` entry expands `${VAR}` exactly as script and HTTP entries do."""
        from toolcaller.sources.mcp import parse_server_config

        spec = parse_server_config("s", {"url": "http://h/mcp", "headers": {"X": template}},
                                   environ=ENV)
        assert spec.headers["X"] == expected == expand_vars(template, ENV, where="t")[0]


class TestUrlParams:
    @pytest.mark.parametrize(("url", "names"), [
        ("http://h/items/{id}", ["id"]),
        ("http://h/items/{item-id}/{item_id}/{a.b}", ["item-id", "item_id", "a.b"]),
        ("http://h/{id}/{id}", ["id"]),
        ("${BASE}/items", []),
        ("http://h/{1bad}", []),
    ], ids=["one", "dashes-underscores-dots", "repeated", "env-var", "not-a-name"])
    def test_names(self, url: str, names: list[str]) -> None:
        """`{name}` templates are found once each; `${VAR}` is not one."""
        assert url_params(url) == names

    @pytest.mark.parametrize("name", ["item_id", "item-id"])
    def test_a_missing_url_param_fails_before_any_attempt(self, name: str) -> None:
        """`{item-id}` and `{item_id}` alike are required params: INVALID_PARAMS, attempts 0."""
        import json

        from toolcaller import ToolCaller
        from toolcaller.sources.registry_file import tools_from_data

        entry = {"name": "api.item", "description": "an item", "paramsSchema": {
            "type": "object", "properties": {name: {"type": "string"}}},
                 "http": {"url": f"http://127.0.0.1:9/items/{{{name}}}"}}
        with ToolCaller(tools=tools_from_data(json.loads(json.dumps({"tools": [entry]})))) as c:
            envelope = c.call("api.item", {})
        assert envelope.code == "INVALID_PARAMS"
        assert envelope.metadata.attempts == 0
        assert name in envelope.error.message
