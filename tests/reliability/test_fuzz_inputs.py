"""Bad input, generated: schemas with params, options, and registry files (raw and mutated).

Every case gets a well-formed envelope, or, for a registry file, a clear `RegistryError`;
never another exception, never a hang. Params are also checked against `jsonschema` (the
reference implementation): the engine's verdict must agree with it. (The choices where the two
differ on purpose, in `toolcaller.core.validation`'s docstring: asserted formats, ECMA
regexes, big numbers, are not generated here.)

The tests below name their counts for 10,700 cases; the suite runs them at half that, 5,350
cases (about 55 s on two cores; the whole file took 110 s at full size, too much of a suite
that must stay well under 15 minutes). `TOOLCALLER_FUZZ_EXAMPLES=N` scales every test so that
the file makes about N cases (e.g. 100000 for a long run, as `benchmarks/reliability.py` does).
"""

from __future__ import annotations

import functools
import json
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import LATE_MS, check_envelope
from toolcaller import Tool, ToolCaller
from toolcaller.errors import RegistryError

DEFAULT_TOTAL = 10_700
SCALE = int(os.environ.get("TOOLCALLER_FUZZ_EXAMPLES", DEFAULT_TOTAL // 2)) / DEFAULT_TOTAL


def examples(count: int) -> settings:
    return settings(max_examples=max(10, int(count * SCALE)), deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


# -- JSON and schemas ------------------------------------------------------------------------

SCALARS = (st.none() | st.booleans() | st.integers(-1000, 1000)
           | st.floats(allow_nan=False, allow_infinity=False, width=32)
           | st.sampled_from(["", "a", "ab1", "123", "x" * 20, "é", "\u0000"]))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(["a", "b", "c", "x", "password"]),
                                      inner, max_size=3), max_leaves=8)
NAMES = st.sampled_from(["a", "b", "c", "password", "pin", "x-y", ""])
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
KEYWORDS: dict[str, Any] = {
    "type": TYPES | st.lists(TYPES, min_size=1, max_size=3, unique=True),
    "minimum": st.integers(-5, 5), "maximum": st.integers(-5, 5),
    "exclusiveMinimum": st.integers(-5, 5), "exclusiveMaximum": st.integers(-5, 5),
    "multipleOf": st.sampled_from([1, 2, 3]),
    "minLength": st.integers(0, 4), "maxLength": st.integers(0, 6),
    "pattern": st.sampled_from(["^a", "b$", "^[0-9]+$", ".*", "^$"]),
    "enum": st.lists(SCALARS, min_size=1, max_size=4), "const": SCALARS,
    "minItems": st.integers(0, 3), "maxItems": st.integers(0, 3), "uniqueItems": st.booleans(),
    "minProperties": st.integers(0, 3), "maxProperties": st.integers(0, 3),
    "writeOnly": st.booleans(), "format": st.just("password"), "default": SCALARS,
    "title": st.text(max_size=5), "description": st.text(max_size=5),
}
LEAF = st.fixed_dictionaries({}, optional=KEYWORDS)


def _compound(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries({}, optional={
        **KEYWORDS,
        "properties": st.dictionaries(NAMES, inner, max_size=3),
        "required": st.lists(NAMES, max_size=3, unique=True),
        "additionalProperties": st.booleans() | inner,
        "items": inner, "prefixItems": st.lists(inner, max_size=2),
        "anyOf": st.lists(inner, min_size=1, max_size=2),
        "oneOf": st.lists(inner, min_size=1, max_size=2),
        "allOf": st.lists(inner, min_size=1, max_size=2), "not": inner,
        "if": inner, "then": inner, "else": inner,
        "$ref": st.just("#/$defs/thing"),
    })


SCHEMAS = st.recursive(LEAF | st.booleans(), _compound, max_leaves=6)
TOP_SCHEMAS = st.builds(
    lambda body, thing, draft: {**body, "$defs": {"thing": thing}, **draft}
    if isinstance(body, dict) else body,
    SCHEMAS, SCHEMAS,
    st.sampled_from([{}, {"$schema": "http://json-schema.org/draft-07/schema#"}]),
)
PARAMS = st.dictionaries(NAMES, JSON, max_size=4)


def reference_verdict(schema: Any, params: Any) -> bool | None:
    """jsonschema's verdict, or None when it finds the schema invalid or it uses draft-07 refs."""
    from jsonschema import exceptions, validators

    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError:
        return None
    if isinstance(schema, dict) and "draft-07" in str(schema.get("$schema", "")) and \
            "$ref" in json.dumps(schema):
        return None  # draft-07 ignores siblings of $ref: too subtle for a generated oracle
    validator_class = validators.validator_for(schema)
    try:
        return bool(validator_class(schema).is_valid(params))
    except RecursionError:  # a $ref cycle that never reaches a value: jsonschema gives up too
        return None
    except BaseException as exc:  # referencing's Rust core may panic on that recursion instead
        if type(exc).__name__ != "PanicException":
            raise
        return None


@functools.cache
def fixed_validator(name: str) -> Any:
    from jsonschema import validators

    schema = FIXED_SCHEMAS[name]
    return validators.validator_for(schema)(schema)


def echo(**params: Any) -> Any:
    return params


@pytest.fixture(scope="module")
def caller() -> Iterator[ToolCaller]:
    made = ToolCaller(tools=[], max_history=1000)
    yield made
    made.close()


FIXED_SCHEMAS = {
    "numbers": {"type": "object", "properties": {"a": {"type": "number"},
                                                 "b": {"type": "integer", "minimum": 0}},
                "required": ["a"], "additionalProperties": False},
    "strings": {"type": "object", "properties": {
        "password": {"type": "string", "minLength": 2, "writeOnly": True},
        "x-y": {"enum": ["a", "b", None]}, "c": {"type": "string", "pattern": "^[0-9]+$"}}},
    "nested": {"type": "object", "properties": {"a": {"type": "array", "items": {
        "type": "object", "properties": {"b": {"type": "boolean"}}, "required": ["b"]}}},
        "additionalProperties": {"type": ["string", "null"]}},
    "unions": {"type": "object", "properties": {"a": {"anyOf": [
        {"type": "integer"}, {"type": "string", "maxLength": 3}]},
        "b": {"oneOf": [{"type": "number"}, {"type": "integer"}]}, "c": {"not": {"type": "null"}},
        "x": {"$ref": "#/$defs/point"}}, "minProperties": 1,
        "$defs": {"point": {"type": "object", "required": ["a", "b"]}}},
    "draft-07": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                 "properties": {"a": {"type": "integer", "exclusiveMinimum": 0}},
                 "dependencies": {"a": ["b"]}},
}


@pytest.fixture(scope="module")
def fixed(caller: ToolCaller) -> ToolCaller:
    for name, schema in FIXED_SCHEMAS.items():
        caller.add(Tool(name=f"fixed.{name}", description=name, params_schema=schema,
                        kind="python", target=echo), replace=True)
    return caller


class TestSchemasAndParams:
    @examples(3000)
    @given(name=st.sampled_from(sorted(FIXED_SCHEMAS)), params=PARAMS)
    def test_params_against_fixed_schemas(self, fixed: ToolCaller, name: str,
                                          params: dict[str, Any]) -> None:
        """Params against hand-written schemas: the verdict agrees with jsonschema."""
        envelope = check_envelope(fixed.handle({"toolName": f"fixed.{name}", "params": params,
                                                "options": {"retries": 0}}))
        expected = fixed_validator(name).is_valid(params)
        assert envelope["success"] is expected, (name, params, envelope)
        if not expected:
            assert envelope["error"]["code"] == "INVALID_PARAMS"
            assert envelope["metadata"]["attempts"] == 0

    @examples(1200)
    @given(schema=TOP_SCHEMAS, params=PARAMS)
    def test_params_against_generated_schemas(self, caller: ToolCaller, schema: Any,
                                              params: dict[str, Any]) -> None:
        """Any schema with any params: an envelope; the verdict agrees with jsonschema."""
        caller.add(Tool(name="t", description="t", params_schema=schema, kind="python",
                        target=echo), replace=True)
        envelope = check_envelope(caller.handle({"toolName": "t", "params": params,
                                                 "options": {"retries": 0}}))
        expected = reference_verdict(schema, params)
        if envelope["success"]:
            assert envelope["result"] == params
            assert expected in (True, None), (schema, params)
        else:
            error = envelope["error"]
            assert error["code"] in ("INVALID_PARAMS", "EXECUTION_ERROR"), error
            if expected is not None:
                assert error["code"] == "INVALID_PARAMS", error
                assert expected is False, (schema, params, error)
                assert envelope["metadata"]["attempts"] == 0
                for violation in error["details"]["violations"]:
                    assert violation["pointer"] == "" or violation["pointer"].startswith("/")


OPTION_VALUES = (SCALARS | st.integers(-3, 60) | st.floats(0, 60, allow_nan=False)
                 | st.sampled_from([math.nan, math.inf, -0.0, 10**20, "json", "raw", "thread",
                                    "process", "5000", True]))
OPTION_KEYS = st.sampled_from(["timeout", "retries", "retryDelay", "format", "deadline",
                               "backoff", "jitter", "isolation", "retry_delay", "timout", ""])


class TestOptions:
    @examples(3500)
    @given(options=st.dictionaries(OPTION_KEYS, OPTION_VALUES, max_size=4)
           | SCALARS | st.lists(SCALARS, max_size=2))
    def test_any_options(self, caller: ToolCaller, options: Any) -> None:
        """Any options: success, INVALID_PARAMS before any attempt, or a timely TIMEOUT."""
        caller.add(Tool(name="echo", description="e", params_schema={"type": "object"},
                        kind="python", target=echo), replace=True)
        envelope = check_envelope(caller.handle({"toolName": "echo", "params": {"a": 1},
                                                 "options": options}))
        if envelope["success"]:
            assert envelope["result"] in ({"a": 1}, {"a": 1.0})
            return
        code = envelope["error"]["code"]
        assert code in ("INVALID_PARAMS", "TIMEOUT"), envelope["error"]
        if code == "INVALID_PARAMS":
            assert envelope["metadata"]["attempts"] == 0
        else:
            deadline = options.get("deadline", 5000) if isinstance(options, dict) else 5000
            assert envelope["metadata"]["duration"] <= deadline + LATE_MS


# -- registry files ---------------------------------------------------------------------------

VALID = {
    "tools": [
        {"name": "py.add", "description": "adds", "python": "tests.reliability.tools_faulty:add",
         "paramsSchema": {"type": "object", "properties": {"a": {"type": "number"},
                                                           "b": {"type": "number"}}},
         "metadata": {"tags": ["math"]}, "options": {"retries": 0}, "isolation": "thread"},
        {"name": "sh", "description": "script", "script": {
            "command": ["python3", "x.py"], "env": {"A": "${HOME}"}, "maxOutputBytes": 100}},
        {"name": "web", "description": "http", "http": {
            "method": "GET", "url": "http://127.0.0.1:9/{id}", "headers": {"X": "y"}}},
        {"name": "m.pick", "description": "mcp", "paramsSchema": {},
         "mcp": {"server": "srv", "tool": "t"}},
    ],
    "mcpServers": {"srv": {"command": "no-such-server-here", "args": ["--x"],
                           "env": {"K": "v"}}},
}
SAFE_PYTHON = {"tests.reliability.tools_faulty:add"}


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside a JSON document."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    """The valid registry after 1–3 mutations: replace, delete, add a key, duplicate."""
    doc: Any = json.loads(json.dumps(VALID))
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(doc)))
        action = draw(st.sampled_from(["replace", "delete", "add", "duplicate"]))
        if not where:
            doc = draw(JSON) if action == "replace" else doc
            continue
        parent = doc
        for step in where[:-1]:
            parent = parent[step]
        last = where[-1]
        if action == "replace":
            parent[last] = draw(JSON | SCHEMAS | st.text(max_size=8))
        elif action == "delete":
            del parent[last]
        elif action == "add" and isinstance(parent[last], dict):
            parent[last][draw(st.text(max_size=6))] = draw(JSON)
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(json.loads(json.dumps(parent[last])))
    return doc


ENTRY_KEYS = {
    "name": st.text(max_size=8) | st.sampled_from(["ok", "a.b", "x"]) | SCALARS,
    "description": st.text(max_size=8) | SCALARS,
    "paramsSchema": SCHEMAS | JSON, "metadata": JSON, "options": JSON | st.dictionaries(
        OPTION_KEYS, OPTION_VALUES, max_size=2),
    "isolation": st.sampled_from(["thread", "process", "vm"]) | SCALARS,
    "idempotent": SCALARS,
    "python": st.sampled_from(sorted(SAFE_PYTHON)) | SCALARS,
    "script": JSON | st.fixed_dictionaries({"command": st.lists(st.text(max_size=5),
                                                                max_size=2)}),
    "http": JSON | st.fixed_dictionaries({"url": st.text(max_size=10)}),
    "mcp": JSON | st.fixed_dictionaries({"server": st.text(max_size=3),
                                         "tool": st.text(max_size=3)}),
    "extra": SCALARS,
}
SHAPED = st.fixed_dictionaries({}, optional={
    "tools": st.lists(st.fixed_dictionaries({}, optional=ENTRY_KEYS), max_size=3) | JSON,
    "mcpServers": st.dictionaries(st.text(max_size=4), JSON | st.fixed_dictionaries(
        {"command": st.text(max_size=6)}), max_size=2) | JSON,
    "version": SCALARS,
})


def load(text: str | bytes, folder: Path) -> ToolCaller | None:
    """Load a registry; return the caller, or None after checking the RegistryError."""
    path = folder / "tools.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    try:
        return ToolCaller.from_file(path)
    except RegistryError as error:
        message = str(error)
    assert str(path) in message
    return None


def exercise(caller: ToolCaller) -> None:
    """Discovery and a call of each safe tool give envelopes (no server is started)."""
    try:
        if not caller.registry.sources:
            check_envelope(caller.handle({"action": "discover"}))
        for tool in caller.registry.static_tools():
            if tool.kind == "python" and tool.target in SAFE_PYTHON:
                check_envelope(caller.handle({"toolName": tool.name, "params": {"a": 1, "b": 2},
                                              "options": {"retries": 0, "timeout": 2000}}))
    finally:
        caller.close()


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as made:
        yield Path(made)


class TestRegistryFiles:
    @examples(1200)
    @given(doc=JSON | SHAPED)
    def test_any_json_document(self, folder: Path, doc: Any) -> None:
        """Any JSON document, registry-shaped or not: a caller or a RegistryError naming it."""
        caller = load(json.dumps(doc), folder)
        if caller is not None:
            exercise(caller)

    @examples(1000)
    @given(doc=mutated())
    def test_mutated_valid_registry(self, folder: Path, doc: Any) -> None:
        """The shipped shape, mutated: a caller or a RegistryError naming the file."""
        caller = load(json.dumps(doc), folder)
        if caller is not None:
            exercise(caller)

    @examples(800)
    @given(data=st.binary(max_size=64) | st.text(max_size=64))
    def test_any_bytes(self, folder: Path, data: bytes | str) -> None:
        """Bytes that are not UTF-8 or not JSON are a RegistryError."""
        caller = load(data, folder)
        if caller is not None:
            caller.close()


class TestRegistryEdges:
    @pytest.mark.parametrize("text", [
        "[" * 100_000,
        '{"tools": [{"name": "a", "description": "d", "python": "m:f", "paramsSchema": '
        + '{"items": ' * 5000 + "{}" + "}" * 5000 + "}]}",
    ], ids=["deep-array", "deep-schema"])
    def test_deeply_nested_json_is_a_registry_error(self, tmp_path: Path, text: str) -> None:
        """JSON nested past the parser's recursion limit is a RegistryError, not a crash."""
        assert load(text, tmp_path) is None

    @pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e400"])
    def test_nan_and_infinity_are_not_json(self, tmp_path: Path, constant: str) -> None:
        """NaN and Infinity (which Python's json accepts) make the file invalid JSON."""
        text = ('{"tools": [{"name": "a", "description": "d", "python": "m:f", '
                f'"paramsSchema": {{"minimum": {constant}}}}}]}}')
        assert load(text, tmp_path) is None

    def test_a_dangling_ref_is_found_at_load_time(self, tmp_path: Path) -> None:
        """A `$ref` to nowhere is found at load time: the tool is listed with the problem."""
        text = json.dumps({"tools": [{"name": "a", "description": "d", "python": "m:f",
                                      "paramsSchema": {"$ref": "#/$defs/nope"}}]})
        caller = load(text, tmp_path)
        assert caller is not None
        [problem] = caller.handle({"action": "discover"})["result"]["problems"]
        assert problem["tool"] == "a"
        assert "'#/$defs/nope'" in problem["message"]
        caller.close()

    def test_a_tool_with_a_dangling_ref_gives_an_envelope(self) -> None:
        """A tool built in code with an unusable schema: call() answers, it does not raise."""
        tool = Tool(name="a", description="d", params_schema={"$ref": "#/nope"},
                    kind="python", target=echo)
        with ToolCaller(tools=[tool]) as caller:
            envelope = check_envelope(caller.call("a", {}).to_dict())
            assert envelope["error"]["code"] in ("INVALID_PARAMS", "EXECUTION_ERROR")
            assert "nope" in envelope["error"]["message"]
            assert caller.history.total == 1

