"""The command line: `discover`, `call` and `handle` (JSON in, JSON out); exit 0, 1 or 2."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
MAX_PENDING_CHARS = 10_000_000  # a request that never closes is cut here


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """A parser whose unknown arguments are reported with the usage of their subcommand."""

    commands: dict[str, argparse.ArgumentParser]

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        """Parse argv; an unknown argument is an error of the subcommand it was given to."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            command = getattr(self, "commands", {}).get(getattr(parsed, "command", None), self)
            command.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed


def _option_groups(defaults: bool) -> dict[str, argparse.ArgumentParser]:
    """The shared options, a parent parser each: before the command's name, the top level's.

    Sub-commands must not reset what was given before the command: their defaults are
    SUPPRESS, and only the top-level parser sets real ones.
    """
    default: dict[str, Any] = {} if defaults else {"default": argparse.SUPPRESS}
    registry = argparse.ArgumentParser(add_help=False)
    registry.add_argument("--registry", metavar="FILE",
                          help="registry file (default: the embedded demo registry)",
                          **({"default": None} if defaults else default))
    plugins = argparse.ArgumentParser(add_help=False)
    plugins.add_argument("--plugins", action="store_true",
                         help="also load tools from installed plugins (toolcaller.tools)",
                         **default)
    indent = argparse.ArgumentParser(add_help=False)
    indent.add_argument("--indent", type=int, metavar="N",
                        help="indent the JSON output by N spaces (default: 2 for discover "
                             "and call, one line per envelope for handle)",
                        **({"default": None} if defaults else default))
    return {"registry": registry, "plugins": plugins, "indent": indent}


HANDLE_HELP = """\
Read requests on stdin and write one envelope per request on stdout, in order.

Input: one JSON request, or JSON Lines (one request per line; a request spread over
several lines is read once it is complete). A request is
  {"toolName": "math.add", "params": {"a": 1}, "options": {"timeout": 5000}}
or {"action": "discover", "options": {"filter": "tag:math"}}; an optional "id" (string,
number or null) comes back as metadata.requestId. A line that is not JSON is answered
with an INVALID_PARAMS envelope, and reading goes on.
"""
EXIT_HELP = "Exit status: 0 success, 1 a call failed, 2 bad usage."


def _call_options(call: argparse.ArgumentParser) -> None:
    from toolcaller import envelope as contract  # the defaults of the options

    call.add_argument("tool", help="tool name, e.g. math.add")
    call.add_argument("--params", default="{}", metavar="JSON",
                      help="params as JSON, @FILE to read a file, or - for stdin (default {})")
    for flag, kind, metavar, text in (
        ("--timeout", float, "MS", f"time limit of one attempt, in milliseconds (default "
                                   f"{contract.DEFAULT_TIMEOUT_MS}, or the tool's own)"),
        ("--retries", int, "N", f"attempts after the first (default {contract.DEFAULT_RETRIES}); "
                                "only TIMEOUT and EXECUTION_ERROR are retried"),
        ("--retry-delay", float, "MS", "wait before the first retry, in milliseconds (default "
                                       f"{contract.DEFAULT_RETRY_DELAY_MS})"),
        ("--deadline", float, "MS", "budget of the whole call, retries and server starts "
                                    f"included, in milliseconds (default "
                                    f"{contract.DEFAULT_DEADLINE_MS})"),
        ("--backoff", float, "FACTOR", "each wait is the previous one times FACTOR (default 1, "
                                       "at most 10)"),
        ("--jitter", float, "MS", "add a random wait of up to MS milliseconds (default 0)"),
    ):
        call.add_argument(flag, type=kind, default=None, metavar=metavar, help=text)
    call.add_argument("--format", choices=["json", "raw"], default=None,
                      help="json (default) parses output that promises JSON; raw returns it "
                           "untouched (bytes as {mediaType, base64})")
    call.add_argument("--isolation", choices=["thread", "process"], default=None,
                      help="how a sync Python tool runs: a worker thread (default) or a child "
                           "process, killed on timeout")


def _parser() -> argparse.ArgumentParser:
    groups = _option_groups(defaults=False)
    common = argparse.ArgumentParser(add_help=False, parents=list(groups.values()))
    loading = [groups["registry"], groups["plugins"]]
    parser = _Parser(
        prog="toolcaller", parents=list(_option_groups(defaults=True).values()),
        description="Discover tools and call them: JSON in, JSON envelopes out.",
        epilog=EXIT_HELP,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                parser_class=argparse.ArgumentParser)
    discover = sub.add_parser(
        "discover", parents=[common], help="list tools (runs none)", epilog=EXIT_HELP,
        description="List the tools that match a filter, as a discovery envelope (or names). "
                    "Registry problems (a server that did not start) are listed too.")
    discover.add_argument("filter", nargs="?", help="filter (same as --filter)")
    discover.add_argument("--filter", dest="filter_opt", metavar="TEXT",
                          help="words, tag:NAME, name:GLOB, -EXCLUDED")
    discover.add_argument("--names", action="store_true",
                          help="print names only, one a line; problems go to stderr (exit 1)")
    call = sub.add_parser("call", parents=[common], help="call one tool", epilog=EXIT_HELP,
                          description="Call one tool and print its envelope.")
    _call_options(call)
    sub.add_parser("handle", parents=[common],
                   help="answer requests read on stdin (one JSON value, or JSON Lines)",
                   description=HANDLE_HELP, epilog=EXIT_HELP,
                   formatter_class=argparse.RawDescriptionHelpFormatter)
    sub.add_parser("registry-schema", help="print the JSON Schema of registry files",
                   description="Print the JSON Schema that registry files are checked against.")
    sub.add_parser("demo", parents=loading,
                   help="list the tools and call a few of them, one line per call",
                   description="List the tools, then call a few: a success and every error "
                               "code, one line per call.")
    ui = sub.add_parser("ui", parents=loading,
                        help="serve the explorer as a web page on 127.0.0.1 (Ctrl-C stops it)",
                        description="Serve the notebook explorer as a web page on 127.0.0.1 "
                                    "(needs the ui extra); Ctrl-C stops it.")
    ui.add_argument("--port", type=int, default=0, metavar="N",
                    help="port to listen on (default: a free one)")
    ui.add_argument("--no-browser", action="store_true",
                    help="print the page's address only, open no browser")
    serve = sub.add_parser("serve", parents=loading,
                           help="serve the registry as an MCP server (stdio, or HTTP on "
                                "127.0.0.1 with a fresh token)",
                           description="Serve the registry's tools as an MCP server, each call "
                                       "going through the engine's timeouts, retries and "
                                       "redaction.")
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                       help="stdio (default: what an mcpServers entry starts) or "
                            "streamable HTTP")
    serve.add_argument("--port", type=int, default=0, metavar="N",
                       help="HTTP port (default: a free one)")
    serve.add_argument("--filter", metavar="TEXT",
                       help="serve only the tools matching this discovery filter")
    serve.add_argument("--print-config", action="store_true",
                       help="print the mcpServers entry to paste into a client's config "
                            "(stdio: and exit; HTTP: once listening, token included)")
    parser.commands = dict(sub.choices)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "ui":
            from toolcaller.ui import run

            return run(registry=args.registry, port=args.port,
                       open_browser=not args.no_browser, plugins=args.plugins)
        if args.command == "serve":
            from toolcaller.serve.command import run_command

            return run_command(registry=args.registry, plugins=args.plugins,
                               transport=args.transport, port=args.port, filter=args.filter,
                               print_config=args.print_config)
        if args.command == "registry-schema":
            from toolcaller.sources.registry_file import registry_schema

            _write(sys.stdout, registry_schema(), 2)
            return EXIT_OK
        caller = _caller(args)
    except _UsageError as exc:
        print(f"toolcaller: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.command == "discover":
            return _discover(caller, args)
        if args.command == "call":
            return _call(caller, args)
        if args.command == "demo":
            return _demo(caller)
        return _handle(caller, sys.stdin, sys.stdout, args.indent)
    except _UsageError as exc:
        print(f"toolcaller: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`| head -1`): say nothing more, like other Unix tools.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    finally:
        caller.close()


def _caller(args: argparse.Namespace) -> ToolCaller:
    from toolcaller.caller import ToolCaller
    from toolcaller.errors import UsageError

    try:
        caller = ToolCaller.from_file(args.registry) if args.registry else ToolCaller()
    except UsageError as exc:
        raise _UsageError(str(exc)) from None
    if args.plugins:
        for problem in caller.add_plugins():
            print(f"toolcaller: warning: {problem}", file=sys.stderr)
    return caller


def _discover(caller: ToolCaller, args: argparse.Namespace) -> int:
    envelope = caller.discover(args.filter_opt or args.filter)
    if args.names:
        for item in envelope.result["tools"]:
            print(item["name"])
        problems = envelope.result.get("problems") or []
        for problem in problems:
            where = problem.get("tool") or problem.get("source")
            print(f"toolcaller: problem: {where}: {problem['message']}", file=sys.stderr)
        return EXIT_FAILED if problems else EXIT_OK
    _write(sys.stdout, envelope.to_dict(), args.indent if args.indent is not None else 2)
    return EXIT_OK


def _call(caller: ToolCaller, args: argparse.Namespace) -> int:
    params = _read_params(args.params)
    names = {"timeout": "timeout", "retries": "retries", "retry_delay": "retryDelay",
             "deadline": "deadline", "backoff": "backoff", "jitter": "jitter",
             "format": "format", "isolation": "isolation"}
    options = {key: getattr(args, attr) for attr, key in names.items()
               if getattr(args, attr) is not None}
    request = {"toolName": args.tool, "params": params, "options": options}
    answer = caller.handle(request)
    _write(sys.stdout, answer, args.indent if args.indent is not None else 2)
    return EXIT_OK if answer.get("success") else EXIT_FAILED


DEMO_REQUESTS: list[dict[str, Any]] = [
    {"toolName": "math.add", "params": {"a": 1, "b": 2}},
    {"toolName": "text.echo", "params": {"text": "hello", "upper": True}},
    {"toolName": "demo.flaky", "params": {"failures": 1, "key": "cli-demo"}},
    {"toolName": "demo.slow", "params": {"seconds": 5},
     "options": {"timeout": 100, "retries": 1, "retryDelay": 100}},
    {"toolName": "demo.fail", "options": {"retries": 2}},
    {"toolName": "math.ad", "params": {"a": 1, "b": 2}},
    {"toolName": "math.add", "params": {"a": "one"}},
    {"toolName": "math.divide", "params": {"a": 1, "b": 0}},
    {"toolName": "demo.not_json"},
]


def _demo(caller: ToolCaller) -> int:
    """Discover the tools, then call a few: one success and every error code."""
    tools = caller.discover().result["tools"]
    print(f"{len(tools)} tools: " + ", ".join(t["name"] for t in tools))
    for request in DEMO_REQUESTS:
        answer = caller.handle(request)
        meta = answer["metadata"]
        outcome = (json.dumps(answer["result"]) if answer["success"]
                   else f"{answer['error']['code']}: {answer['error']['message']}")
        print(f"{request['toolName']:<14} attempts={meta['attempts']} "
              f"{meta['duration']:>8.1f} ms  {outcome}")
    return EXIT_OK


def _read_params(text: str) -> Any:
    source = "--params"
    if text == "-":
        text, source = sys.stdin.read(), "stdin"
    elif text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as handle:
                text, source = handle.read(), text[1:]
        except OSError as exc:
            raise _UsageError(f"cannot read params file {text[1:]!r}: {exc.strerror}") from None
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise _UsageError(f"{source} is not valid JSON: {exc.msg} at column {exc.colno}") from None
    except ValueError as exc:
        raise _UsageError(f"{source} is not valid JSON: {exc}") from None
    except RecursionError:
        raise _UsageError(f"{source} is nested too deeply") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _handle(caller: ToolCaller, stdin: TextIO, stdout: TextIO, indent: int | None) -> int:
    answered = 0
    status = EXIT_OK
    for request in _requests(stdin):
        answer = caller.handle(request) if not isinstance(request, _Broken) else request.envelope(
            caller)
        _write(stdout, answer, indent)
        answered += 1
        if not answer.get("success"):
            status = EXIT_FAILED
    if answered == 0:
        raise _UsageError("no request on stdin: give one JSON request, or JSON Lines")
    return status


class _Broken:
    """A chunk of input that is not JSON: answered with an INVALID_PARAMS envelope."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason

    def envelope(self, caller: ToolCaller) -> dict[str, Any]:
        answer = caller.handle(None)
        answer["error"]["message"] = f"the request is not valid JSON: {self.reason}"
        answer["error"]["details"] = {"start": self.text[:200]}
        return answer


def _requests(stdin: TextIO) -> Iterator[Any]:
    """Yield each JSON value on stdin as soon as it is complete (JSON Lines or pretty JSON)."""
    decoder = json.JSONDecoder(parse_constant=_refuse_constant)
    pending: list[str] = []
    for line in stdin:
        if not pending and not line.strip():
            continue
        pending.append(line)
        text = "".join(pending)
        try:
            value, end = decoder.raw_decode(text.lstrip())
        except json.JSONDecodeError as exc:
            if _incomplete(exc, text) and len(text) < MAX_PENDING_CHARS:
                continue
            yield _Broken(pending[0], exc.msg)
            rest, pending = pending[1:], []
            yield from _requests_from_lines(rest, decoder)
            continue
        except (ValueError, RecursionError) as exc:
            yield _Broken(text, _why(exc))
            pending = []
            continue
        pending = []
        yield value
        tail = text.lstrip()[end:].strip()
        if tail:
            yield from _requests_from_lines([tail], decoder)
    if pending:
        # The input ended inside a value: the first line is broken, the others may be fine.
        yield _Broken(pending[0], "the input ended inside a JSON value")
        yield from _requests_from_lines(pending[1:], decoder)


def _requests_from_lines(lines: list[str], decoder: json.JSONDecoder) -> Iterator[Any]:
    for line in lines:
        text = line.strip()
        while text:
            try:
                value, end = decoder.raw_decode(text)
            except json.JSONDecodeError as exc:
                yield _Broken(text, exc.msg)
                break
            except (ValueError, RecursionError) as exc:
                yield _Broken(text, _why(exc))
                break
            yield value
            text = text[end:].strip()


def _why(exc: Exception) -> str:
    return "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def _incomplete(exc: json.JSONDecodeError, text: str) -> bool:
    """Say whether the JSON only lacks its end (more lines may complete it)."""
    return exc.pos >= len(text.strip())


def _write(stdout: TextIO, data: Any, indent: int | None) -> None:
    text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    try:
        stdout.write(text + "\n")
    except UnicodeEncodeError:  # a lone surrogate, or a terminal that is not UTF-8
        stdout.write(json.dumps(data, indent=indent, ensure_ascii=True, allow_nan=False) + "\n")
    stdout.flush()
