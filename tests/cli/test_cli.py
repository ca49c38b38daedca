"""The command line: discover, call, handle; exit status 0/1/2; never a traceback."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import check_envelope, code_of

pytestmark = pytest.mark.integration

TOOLS_PY = '''
def double(x: int) -> dict:
    return {"double": 2 * x}
'''
GOOD_REGISTRY = {"tools": [{
    "name": "local.double", "description": "Double a number.",
    "paramsSchema": {"type": "object", "properties": {"x": {"type": "integer"}},
                     "required": ["x"]},
    "python": "tools.py:double",
}]}


def run(*args: str, stdin: str | None = None,
        command: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the CLI; assert that no line of its output shows a Python traceback."""
    done = subprocess.run(
        [*(command or [sys.executable, "-m", "toolcaller"]), *args],
        input=stdin if stdin is not None else "", capture_output=True, text=True,
        timeout=60, check=False,
    )
    for line in (done.stdout + done.stderr).splitlines():
        assert "Traceback" not in line, done.stdout + done.stderr
    return done


def envelopes(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """Parse one envelope per stdout line (compact output)."""
    return [check_envelope(json.loads(line)) for line in done.stdout.splitlines()]


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(GOOD_REGISTRY), encoding="utf-8")
    return path


@pytest.fixture
def bad_registry(tmp_path: Path) -> Path:
    path = tmp_path / "broken-registry.json"
    path.write_text(json.dumps({"tools": [{"name": "x", "python": "m:f"}]}), encoding="utf-8")
    return path


class TestDiscover:
    def test_filter_option(self) -> None:
        """`discover --filter math` prints a discovery envelope of the math tools, exit 0."""
        done = run("discover", "--filter", "math")
        assert done.returncode == 0
        data = check_envelope(json.loads(done.stdout))
        assert {t["name"] for t in data["result"]["tools"]} == {"math.add", "math.divide"}

    def test_positional_filter(self) -> None:
        """`discover tag:text` takes the filter as a positional argument too."""
        data = json.loads(run("discover", "tag:text").stdout)
        tools = data["result"]["tools"]
        assert {"text.echo", "text.wordcount"} <= {t["name"] for t in tools}
        assert all("text" in t["metadata"]["tags"] for t in tools)

    def test_names_only(self) -> None:
        """`discover --names` prints one name a line."""
        done = run("discover", "--names", "--filter", "math")
        assert done.stdout.split() == ["math.add", "math.divide"]


class TestCall:
    def test_params_inline(self) -> None:
        """`call math.add --params '{"a":1,"b":2}'` prints the success envelope, exit 0."""
        done = run("call", "math.add", "--params", '{"a":1,"b":2}')
        assert done.returncode == 0
        data = check_envelope(json.loads(done.stdout))
        assert data["result"] == {"sum": 3}

    def test_params_from_file(self, tmp_path: Path) -> None:
        """`--params @FILE` reads the params from a file."""
        path = tmp_path / "params.json"
        path.write_text('{"a": 20, "b": 22}', encoding="utf-8")
        done = run("call", "math.add", "--params", f"@{path}")
        assert json.loads(done.stdout)["result"] == {"sum": 42}

    def test_params_from_stdin(self) -> None:
        """`--params -` reads the params from stdin."""
        done = run("call", "math.add", "--params", "-", stdin='{"a": 2, "b": 3}')
        assert json.loads(done.stdout)["result"] == {"sum": 5}

    def test_failed_call_exits_1(self) -> None:
        """A call that fails prints its failure envelope and exits 1."""
        done = run("call", "demo.not_found", "--params", '{"item": "x"}')
        assert done.returncode == 1
        assert code_of(check_envelope(json.loads(done.stdout))) == "EXECUTION_ERROR"

    def test_option_flags(self) -> None:
        """`--timeout` and `--retries` set the call's options."""
        done = run("call", "demo.slow", "--params", '{"seconds": 5}', "--timeout", "50",
                   "--retries", "0")
        data = json.loads(done.stdout)
        assert done.returncode == 1
        assert code_of(data) == "TIMEOUT"
        assert data["metadata"]["attempts"] == 1

    def test_params_not_an_object(self) -> None:
        """JSON params that are not an object give an INVALID_PARAMS envelope, exit 1."""
        done = run("call", "math.add", "--params", "[1, 2]")
        assert done.returncode == 1
        assert code_of(json.loads(done.stdout)) == "INVALID_PARAMS"

    @pytest.mark.parametrize("params", ["{a:1}", "{", "", "nope"],
                             ids=["unquoted", "unclosed", "empty", "word"])
    def test_bad_params_json_exits_2(self, params: str) -> None:
        """`--params` that is not JSON exits 2 with a message naming --params."""
        done = run("call", "math.add", "--params", params)
        assert done.returncode == 2
        assert done.stdout == ""
        assert "--params" in done.stderr
        assert "not valid JSON" in done.stderr

    def test_missing_params_file_exits_2(self, tmp_path: Path) -> None:
        """`--params @missing` exits 2 naming the file."""
        done = run("call", "math.add", "--params", f"@{tmp_path / 'missing.json'}")
        assert done.returncode == 2
        assert "missing.json" in done.stderr


class TestHandle:
    def test_one_request(self) -> None:
        """`handle` answers one request with one envelope line."""
        done = run("handle", stdin=json.dumps({"toolName": "math.add",
                                               "params": {"a": 1, "b": 2}}))
        assert done.returncode == 0
        assert [e["result"] for e in envelopes(done)] == [{"sum": 3}]

    def test_pretty_printed_request(self) -> None:
        """A multi-line, pretty-printed request is one request."""
        text = json.dumps({"toolName": "math.add", "params": {"a": 1, "b": 2}}, indent=4)
        assert text.count("\n") > 3
        done = run("handle", stdin=text + "\n")
        assert [e["result"] for e in envelopes(done)] == [{"sum": 3}]

    def test_json_lines_in_order(self) -> None:
        """JSON Lines give one envelope per line, in order."""
        lines = [json.dumps({"toolName": "math.add", "params": {"a": i, "b": 0}})
                 for i in range(5)]
        done = run("handle", stdin="\n".join(lines) + "\n")
        assert done.returncode == 0
        assert [e["result"]["sum"] for e in envelopes(done)] == [0, 1, 2, 3, 4]

    def test_broken_line_in_the_middle(self) -> None:
        """A broken line gets an INVALID_PARAMS envelope; the lines around it are answered."""
        text = "\n".join([
            json.dumps({"toolName": "math.add", "params": {"a": 1, "b": 1}}),
            '{"toolName": "math.add", "params": {"a": ',
            json.dumps({"toolName": "text.echo", "params": {"text": "hi"}}),
        ]) + "\n"
        done = run("handle", stdin=text)
        answers = envelopes(done)
        assert [code_of(e) for e in answers] == [None, "INVALID_PARAMS", None]
        assert answers[0]["result"] == {"sum": 2}
        assert answers[2]["result"]["text"] == "hi"
        assert done.returncode == 1

    def test_mixed_outcomes_exit_1(self) -> None:
        """If any request fails, `handle` exits 1 (all are still answered)."""
        text = "\n".join(json.dumps(r) for r in (
            {"toolName": "math.add", "params": {"a": 1, "b": 1}}, {"toolName": "nope"}))
        done = run("handle", stdin=text)
        assert [code_of(e) for e in envelopes(done)] == [None, "TOOL_NOT_FOUND"]
        assert done.returncode == 1

    def test_discover_request(self) -> None:
        """A discover request through `handle` lists tools."""
        done = run("handle", stdin='{"action": "discover", "options": {"filter": "tag:math"}}')
        assert envelopes(done)[0]["metadata"]["total"] == 2

    @pytest.mark.parametrize("value", ["42", '"math.add"', "null", "[]"],
                             ids=["number", "string", "null", "list"])
    def test_json_that_is_not_a_request(self, value: str) -> None:
        """Valid JSON that is not an object gets an INVALID_PARAMS envelope, exit 1."""
        done = run("handle", stdin=value)
        assert [code_of(e) for e in envelopes(done)] == ["INVALID_PARAMS"]
        assert done.returncode == 1

    @pytest.mark.parametrize("stdin", ["", "\n\n", "   \n"], ids=["empty", "newlines", "blank"])
    def test_empty_stdin_exits_2(self, stdin: str) -> None:
        """No request on stdin exits 2 with a message on stderr."""
        done = run("handle", stdin=stdin)
        assert done.returncode == 2
        assert done.stdout == ""
        assert "no request" in done.stderr

    def test_truncated_input(self) -> None:
        """Input that ends inside a JSON value gets an INVALID_PARAMS envelope."""
        done = run("handle", stdin='{"toolName": "math.add", "params": {')
        assert [code_of(e) for e in envelopes(done)] == ["INVALID_PARAMS"]


class TestHostileInput:
    @pytest.mark.parametrize("command", ["handle", "call"])
    def test_lone_surrogate(self, tmp_path: Path, command: str) -> None:
        """A lone surrogate (a legal JSON escape) is echoed back as valid JSON, no crash."""
        params = '{"text": "\\ud800 x"}'
        if command == "handle":
            done = run("handle", stdin=f'{{"toolName": "text.echo", "params": {params}}}')
        else:
            done = run("call", "text.echo", "--params", params)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["result"]["text"] == "\ud800 x"

    @pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
    def test_non_json_constants_are_refused(self, constant: str) -> None:
        """NaN and Infinity are not JSON: such a request gets an INVALID_PARAMS envelope."""
        done = run("handle",
                   stdin=f'{{"toolName": "math.add", "params": {{"a": {constant}, "b": 1}}}}')
        assert [code_of(e) for e in envelopes(done)] == ["INVALID_PARAMS"]

    def test_deeply_nested_request(self) -> None:
        """A request nested too deeply to parse gets an INVALID_PARAMS envelope."""
        done = run("handle", stdin="[" * 100_000 + "]" * 100_000 + "\n")
        assert [code_of(e) for e in envelopes(done)] == ["INVALID_PARAMS"]
        assert done.returncode == 1

    def test_deeply_nested_params_file(self, tmp_path: Path) -> None:
        """`--params @FILE` nested too deeply to parse exits 2 with a message."""
        path = tmp_path / "deep.json"
        path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
        done = run("call", "math.add", "--params", f"@{path}")
        assert done.returncode == 2
        assert "deep.json" in done.stderr

    def test_reader_closing_early(self) -> None:
        """When the reader of stdout goes away (`| head -1`), the CLI stops without a traceback."""
        request = json.dumps({"toolName": "math.add", "params": {"a": 1, "b": 2}})
        with subprocess.Popen([sys.executable, "-m", "toolcaller", "handle"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) as proc:
            assert proc.stdin is not None
            assert proc.stdout is not None
            assert proc.stderr is not None
            stdin = proc.stdin

            def feed() -> None:
                try:
                    for _ in range(5000):
                        stdin.write(request + "\n")
                    stdin.close()
                except (BrokenPipeError, ValueError):
                    pass

            feeder = threading.Thread(target=feed, daemon=True)
            feeder.start()
            assert json.loads(proc.stdout.readline())["success"] is True
            proc.stdout.close()
            proc.wait(timeout=60)
            feeder.join(timeout=10)
            with contextlib.suppress(BrokenPipeError, ValueError):
                stdin.close()  # the child is gone: what the feeder buffered cannot be flushed
            errors = proc.stderr.read()
        assert "Traceback" not in errors


class TestUsage:
    @pytest.mark.parametrize("args", [["frobnicate"], [], ["call"], ["discover", "--bogus"]],
                             ids=["unknown-command", "no-command", "call-no-name", "bad-flag"])
    def test_bad_usage_exits_2(self, args: list[str]) -> None:
        """Unknown commands, missing arguments and unknown flags exit 2."""
        assert run(*args).returncode == 2

    def test_help(self) -> None:
        """`--help` describes the commands and exits 0."""
        done = run("--help")
        assert done.returncode == 0
        for command in ("discover", "call", "handle"):
            assert command in done.stdout


class TestRegistryOption:
    def test_good_registry_after_the_command(self, registry: Path) -> None:
        """`call NAME --registry FILE` calls a tool of that file (relative python path)."""
        done = run("call", "local.double", "--params", '{"x": 4}', "--registry", str(registry))
        assert done.returncode == 0
        assert json.loads(done.stdout)["result"] == {"double": 8}

    def test_good_registry_before_the_command(self, registry: Path) -> None:
        """`--registry FILE discover` lists only that file's tools."""
        done = run("--registry", str(registry), "discover", "--names")
        assert done.returncode == 0
        assert done.stdout.split() == ["local.double"]

    @pytest.mark.parametrize("where", ["before", "after"])
    def test_bad_registry_exits_2(self, bad_registry: Path, where: str) -> None:
        """A bad registry exits 2 with a message naming the file and the problem."""
        args = ["--registry", str(bad_registry)]
        done = run(*args, "discover") if where == "before" else run("discover", *args)
        assert done.returncode == 2
        assert done.stdout == ""
        assert "broken-registry.json" in done.stderr
        assert "/tools/0" in done.stderr
        assert "description" in done.stderr

    def test_missing_registry_exits_2(self, tmp_path: Path) -> None:
        """A registry file that does not exist exits 2 naming it."""
        done = run("discover", "--registry", str(tmp_path / "absent.json"))
        assert done.returncode == 2
        assert "absent.json" in done.stderr


class TestEntryPoints:
    def test_python_dash_m(self) -> None:
        """`python -m toolcaller` runs the CLI."""
        done = run("call", "math.add", "--params", '{"a": 1, "b": 1}')
        assert json.loads(done.stdout)["result"] == {"sum": 2}

    def test_console_script(self) -> None:
        """The `toolcaller` console script runs the same CLI."""
        script = shutil.which("toolcaller", path=str(Path(sys.executable).parent)) or \
            shutil.which("toolcaller")
        if script is None:
            pytest.skip("the toolcaller console script is not installed")
        done = run("handle", stdin='{"toolName": "math.add", "params": {"a": 1, "b": 2}}',
                   command=[script])
        assert done.returncode == 0
        assert envelopes(done)[0]["result"] == {"sum": 3}
