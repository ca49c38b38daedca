"""`${VAR}` expansion shared by the script and HTTP adapters."""

from __future__ import annotations

import pytest

from toolcaller.adapters._env import expand_vars
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
