"""The command line explains itself: help per command with units and defaults, usage errors
in the command's own words, and registry problems on stderr."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli.test_cli import run

pytestmark = pytest.mark.integration

COMMANDS = ("discover", "call", "handle", "registry-schema", "demo", "ui", "serve")


class TestHelp:
    @pytest.mark.parametrize("command", COMMANDS)
    def test_every_command_has_a_description(self, command: str) -> None:
        """`COMMAND --help` exits 0 with a sentence saying what the command does."""
        done = run(command, "--help")
        assert done.returncode == 0
        usage, _, rest = done.stdout.partition("\n\n")
        assert usage.startswith(f"usage: toolcaller {command}")
        assert rest.split("\n\n")[0].strip().endswith(".")

    @pytest.mark.parametrize(("flag", "unit", "default"), [
        ("--timeout MS", "milliseconds", "5000"), ("--retries N", "", "3"),
        ("--retry-delay MS", "milliseconds", "1000"), ("--deadline MS", "milliseconds", "5000"),
        ("--backoff FACTOR", "", "1"), ("--jitter MS", "milliseconds", "0"),
        ("--format", "", "default"), ("--isolation", "", "default"), ("--params JSON", "", "{}"),
    ])
    def test_call_options_say_their_unit_and_default(self, flag: str, unit: str,
                                                     default: str) -> None:
        """Every option of `call` is explained with its unit and its default."""
        options = run("call", "--help").stdout.split("options:", 1)[1]
        entries = re.split(r"\n  (?=-)", options)
        entry = " ".join(next(e for e in entries if e.startswith(flag)).split())
        assert "default" in entry, entry
        assert default in entry, entry
        assert unit in entry, entry

    def test_handle_help_describes_its_input(self) -> None:
        """`handle --help` says what stdin holds: a request, or JSON Lines of them."""
        text = run("handle", "--help").stdout
        assert "JSON Lines" in text
        assert '"toolName"' in text
        assert '"action": "discover"' in text

    @pytest.mark.parametrize(("command", "absent"), [
        ("registry-schema", ("--registry", "--plugins", "--indent")),
        ("demo", ("--indent",)), ("ui", ("--indent",)), ("serve", ("--indent",)),
    ])
    def test_flags_that_do_nothing_are_not_listed(self, command: str,
                                                  absent: tuple[str, ...]) -> None:
        """A command lists only the options it uses."""
        text = run(command, "--help").stdout
        for flag in absent:
            assert flag not in text


class TestUsageErrors:
    def test_an_unknown_flag_prints_the_commands_usage(self) -> None:
        """`call x --bogus 1` exits 2 with `call`'s usage, not the top level's."""
        done = run("call", "x", "--bogus", "1")
        assert done.returncode == 2
        assert done.stderr.startswith("usage: toolcaller call")
        assert "unrecognized arguments: --bogus 1" in done.stderr


class TestDiscoverProblems:
    @pytest.fixture
    def broken(self, tmp_path: Path) -> Path:
        path = tmp_path / "tools.json"
        path.write_text(json.dumps({
            "tools": [{"name": "ok.echo", "description": "d", "python": "json:dumps"},
                      {"name": "bad.ref", "description": "d", "python": "json:dumps",
                       "paramsSchema": {"$ref": "#/$defs/missing"}}],
            "mcpServers": {"ghost": {"command": "no-such-mcp-server-xyz"}}}))
        return path

    def test_names_report_problems_on_stderr_and_exit_1(self, broken: Path) -> None:
        """`discover --names` prints the names, and each problem on stderr, exiting 1."""
        done = run("discover", "--names", "--registry", str(broken))
        assert done.returncode == 1
        assert done.stdout.split() == ["ok.echo", "bad.ref"]
        assert "mcp:ghost" in done.stderr
        assert "bad.ref" in done.stderr

    def test_names_without_problems_exit_0(self) -> None:
        """With no problem, `discover --names` exits 0 and says nothing on stderr."""
        done = run("discover", "--names", "name:math.*")
        assert done.returncode == 0
        assert done.stderr == ""
