r"""Params validation on jsonschema-rs: violations with JSON pointers; why a schema is unusable.

Choices (figures: `python benchmarks/schema_suite.py PATH`, the JSON-Schema-Test-Suite):

- Dialects: `$schema` picks the draft (4, 6, 7, 2019-09, 2020-12); none means 2020-12.
- Formats are asserted: a tool that declares `format: email` means it. jsonschema-rs checks
  date, date-time, time, duration, email, idn-email, hostname, idn-hostname, ipv4, ipv6, uri,
  uri-reference, iri, iri-reference, uri-template, uuid, json-pointer, relative-json-pointer and
  regex; other names (`password`, OpenAPI's `int32`, `binary`…) stay annotations.
- Regexes are ECMA-262, as JSON Schema says: `\d` and `\w` are ASCII, `\p{L}` works, `$` does
  not match before a final newline. (jsonschema uses Python's `re`, where all three differ.)
- Numbers are compared exactly, big integers included: `10**400` is an integer above any
  `maximum: 1e308`, and a multiple of `0.5`, where jsonschema raises OverflowError.
- References: jsonschema-rs resolves every `$ref` itself (JSON pointers, percent-encoding, `$id`
  scopes, anchors, `urn:` ids, `$dynamicRef`) and never fetches anything. The meta-schema of the
  schema's own draft is built in; a `$ref` to another draft's meta-schema is served from the
  standard ones that `referencing`'s registry (jsonschema-specifications, the one jsonschema
  uses) bundles. When a reference still fails, `referencing` walks the schema as jsonschema
  does to name that `$ref` as written and where it is. One resolver decides (the one that
  validates), the other only explains, and only on that failure path, so its import cost
  (~50 ms) is never paid by a usable schema.
- Compiled validators are cached by canonical JSON: tools sharing a schema share a validator.
  `check_schema` compiles only what `_quick_check` (one Rust call) cannot vouch for, so every
  schema of a 10,000-tool registry is checked at load within its time budget.
- Params are JSON data: a tuple is an array; NaN and Infinity (which jsonschema-rs would read
  as null) never get here, the engine refuses them first; a date or bytes is a violation.
  Params nested deeper than `MAX_DEPTH` against a recursive schema are a violation too (a
  Rust stack cannot be grown like Python's recursion limit).

JSON-Schema-Test-Suite (commit 44401e0c; `benchmarks/schema_suite.py`), tests this module gets
wrong, and all by choice: draft 7, 25 of 1,721 (remote `$ref`s); 2020-12, 73 of 2,225 (54 remote
`$ref`s or meta-schemas, 19 formats asserted where the suite expects annotations). jsonschema
4.26 (FORMAT_CHECKER, the format packages installed here) gets 224 and 278 wrong: most formats,
ECMA regexes, and 2020-12's optional `dependencies` compatibility, which jsonschema-rs keeps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from toolcaller._types import Schema
from toolcaller.core._quick_check import DRAFT7, DRAFT2020, is_quickly_usable
from toolcaller.core._violations import violations_of
from toolcaller.errors import ExecutionError

__all__ = ["MAX_DEPTH", "MAX_VIOLATIONS", "ParamsValidator", "check_schema"]

MAX_VIOLATIONS = 50
"""At most this many violations are listed for one call."""
MAX_DEPTH = 255
"""Params nested deeper (objects and arrays) are refused by a recursive schema."""
CACHED_VALIDATORS = 1024
"""Distinct schemas whose compiled validators are kept."""
COMPILED_OUTRIGHT = 64
"""`check_schema` compiles this many schemas before it builds its quick check."""

_compile_outright = COMPILED_OUTRIGHT
_TOO_DEEP = {"pointer": "", "message": "the params are nested too deeply to check"}
_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")


class ParamsValidator:
    """Validates params against one schema; reusable from any thread.

    Building one never raises. For a schema that cannot be used, `problem` says why, and
    `is_valid`/`violations` raise a permanent `ExecutionError` saying it: callers that show
    a form (or list tools) read `problem` first; the engine lets the error end the call.
    """

    __slots__ = ("_recursive", "_validator", "problem", "schema")

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        compiled = _compiled(schema)
        self._validator: Any = compiled.validator
        self._recursive = compiled.recursive
        self.problem: str | None = compiled.problem
        """Why the schema cannot be used (as `check_schema` says), or None."""

    def is_valid(self, params: Any) -> bool:
        """Say whether params satisfy the schema (stops at the first violation)."""
        validator = self._usable()
        if self._recursive and _deeper_than(params, MAX_DEPTH):
            return False
        try:
            return bool(validator.is_valid(params))
        except ValueError:  # not JSON data, or too deep to convert: violations() says which
            return False
        except BaseException as exc:
            if not _is_panic(exc):
                raise
            return False

    def violations(self, params: Any, *, limit: int = MAX_VIOLATIONS) -> list[dict[str, str]]:
        """Return every violation as `{"pointer", "message"}`, sorted by pointer; `[]` if valid.

        At most `limit` (a form may want them all). A missing required property points at its
        own pointer, an unexpected one at each extra property.
        """
        validator = self._usable()
        if self._recursive and _deeper_than(params, MAX_DEPTH):
            return [dict(_TOO_DEEP)]
        try:
            if validator.is_valid(params):
                return []
            return violations_of(validator.iter_errors(params), limit, self.schema)
        except ValueError as exc:
            return [_not_json(exc)]
        except BaseException as exc:
            if not _is_panic(exc):
                raise
            return [dict(_TOO_DEEP)]

    def _usable(self) -> Any:
        if self.problem is not None:
            raise ExecutionError(f"the tool's paramsSchema cannot be used: {self.problem}",
                                 permanent=True)
        return self._validator


def check_schema(schema: Any) -> str | None:
    """Return why `schema` cannot validate params (naming a failing `$ref`), or None if it can.

    The first `COMPILED_OUTRIGHT` schemas of the process are compiled (the validators are kept
    for the tools' calls); after that, most are settled by one meta-schema check
    (`_quick_check`, which takes ~7 ms to build) and only the others are compiled. Both ways
    give the same answer.
    """
    global _compile_outright
    if schema is True or schema is False:
        return None
    if _compile_outright > 0:  # a small registry: the quick check would cost more to build
        _compile_outright -= 1
    elif isinstance(schema, dict) and is_quickly_usable(schema):
        return None
    return _compiled(schema).problem


@dataclass(frozen=True, slots=True)
class _Compiled:
    validator: Any
    problem: str | None
    recursive: bool = False


class _Key:
    """A schema keyed by its canonical JSON, so that equal schemas share one compilation."""

    __slots__ = ("schema", "text")

    def __init__(self, schema: Any, text: str) -> None:
        self.schema, self.text = schema, text

    def __hash__(self) -> int:
        return hash(self.text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and other.text == self.text


def _compiled(schema: Any) -> _Compiled:
    if not isinstance(schema, dict | bool):
        return _Compiled(None, f"a schema is an object or a boolean, not {_kind(schema)}")
    try:
        text = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except RecursionError:
        return _Compiled(None, "the schema is nested too deeply")
    except (TypeError, ValueError) as exc:
        return _Compiled(None, f"the schema is not JSON data: {exc}")
    return _compile(_Key(schema, text))


@lru_cache(maxsize=CACHED_VALIDATORS)
def _compile(key: _Key) -> _Compiled:
    import jsonschema_rs

    schema, text = key.schema, key.text
    recursive = any(f'"{word}":' in text for word in _REFERENCES)
    try:
        return _Compiled(_validator_for(schema), None, recursive)
    except jsonschema_rs.ValidationError as exc:
        if type(exc.kind).__name__ != "Referencing":
            return _Compiled(None, _schema_problem(exc))
        first = exc.message
    except jsonschema_rs.ReferencingError as exc:
        first = str(exc)
    except ValueError as exc:  # a ValueError from converting the schema into Rust
        return _Compiled(None, _conversion_problem(exc, "schema"))
    except Exception as exc:  # noqa: BLE001 - building a validator never raises (see the class)
        return _Compiled(None, f"the schema cannot be compiled: {type(exc).__name__}: {exc}")
    except BaseException as exc:
        if not _is_panic(exc):
            raise
        return _Compiled(None, "the schema is nested too deeply")
    return _with_meta_schemas(schema, first, recursive)


def _validator_for(schema: Any, registry: Any = None) -> Any:
    import jsonschema_rs

    return jsonschema_rs.validator_for(schema, validate_formats=True, offline=True,
                                       registry=registry)


def _with_meta_schemas(schema: Any, first: str, recursive: bool) -> _Compiled:
    """Compile again with the standard meta-schemas at hand; else name the failing `$ref`."""
    from toolcaller.core._references import unresolvable_reference

    if "Unknown meta-schema" in first:
        return _Compiled(None, f"unknown $schema {schema.get('$schema')!r}: use "
                               f"{DRAFT2020!r} or {DRAFT7!r}")
    try:
        return _Compiled(_validator_for(schema, _meta_registry()), None, recursive)
    except Exception:  # noqa: BLE001 - whatever fails now, the reference explains it
        found = unresolvable_reference(schema)
    return _Compiled(None, found or f"a reference cannot be followed: {first.splitlines()[0]}")


@lru_cache(maxsize=1)
def _meta_registry() -> Any:
    import jsonschema_rs

    from toolcaller.core._references import meta_schemas

    return jsonschema_rs.Registry(meta_schemas())


def _schema_problem(error: Any) -> str:
    """Describe a meta-schema violation: what is wrong, and where in the schema."""
    from toolcaller.core._violations import describe

    pointer, message = describe(error)[0]
    return f"{message} (at {pointer or '/'})"


def _deeper_than(value: Any, limit: int) -> bool:
    """Say whether objects and arrays nest more than `limit` levels (checked level by level)."""
    level = [value]
    for _ in range(limit + 1):
        below: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                below.extend(v for v in item.values() if isinstance(v, dict | list | tuple))
            elif isinstance(item, list | tuple):
                below.extend(v for v in item if isinstance(v, dict | list | tuple))
        if not below:
            return False
        level = below
    return True


def _not_json(exc: ValueError) -> dict[str, str]:
    if "Recursion limit" in str(exc):
        return dict(_TOO_DEEP)
    return {"pointer": "", "message": f"the params are not JSON data: {exc}"}


def _conversion_problem(exc: ValueError, what: str) -> str:
    if "Recursion limit" in str(exc):
        return f"the {what} is nested too deeply"
    return f"the {what} is not JSON data: {exc}"


def _is_panic(exc: BaseException) -> bool:
    # A Rust panic reaches Python as pyo3's PanicException, a BaseException: it is this
    # check's failure, not the caller's. Anything else (Ctrl-C, SystemExit) goes on.
    return type(exc).__name__ == "PanicException"


def _kind(value: Any) -> str:
    names = {str: "a string", int: "a number", float: "a number", list: "an array",
             type(None): "null"}
    return names.get(type(value), type(value).__name__)

