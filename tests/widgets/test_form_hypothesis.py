"""Generated schemas: a form is built for any of them, and generated valid values round-trip.

hypothesis-jsonschema does not run with this Hypothesis, so a small strategy draws a schema
together with a strategy of values valid for it.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, TypeAlias

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcaller.widgets import ParamForm

Pair: TypeAlias = tuple[Any, st.SearchStrategy[Any]]
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

NAMES = st.text(alphabet=st.sampled_from("ab/~ é名🎉_0"), max_size=4)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-10, 10)
    | st.floats(-1e6, 1e6, allow_nan=False)
    | st.text(max_size=3)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def _string(draw: st.DrawFn) -> Pair:
    fmt = draw(st.sampled_from([None, "date", "date-time", "password", "textarea"]))
    if fmt == "date":
        return {"type": "string", "format": fmt}, st.dates().map(dt.date.isoformat)
    if fmt == "date-time":
        moments = st.datetimes(
            timezones=st.just(dt.UTC) | st.just(dt.timezone(dt.timedelta(hours=5, minutes=30)))
        )
        return {"type": "string", "format": fmt}, moments.map(lambda m: m.isoformat())
    low = draw(st.integers(0, 3))
    high = low + draw(st.integers(0, 300))
    schema: dict[str, Any] = {"type": "string", "minLength": low, "maxLength": high}
    if fmt:
        schema["format"] = fmt
    return schema, st.text(min_size=low, max_size=min(high, low + 8))


@st.composite
def _number(draw: st.DrawFn) -> Pair:
    kind = draw(st.sampled_from(["integer", "number"]))
    low = draw(st.none() | st.integers(-100, 100))
    high = draw(st.none() | st.integers(0, 200).map(lambda d: (low or 0) + d))
    exclusive = draw(st.booleans())
    schema: dict[str, Any] = {"type": kind}
    if low is not None:
        schema["exclusiveMinimum" if exclusive else "minimum"] = low
    if high is not None:
        schema["exclusiveMaximum" if exclusive else "maximum"] = high + (2 if exclusive else 0)
    lo = None if low is None else low + (1 if exclusive else 0)
    hi = None if high is None else high + (1 if exclusive else 0)
    if kind == "integer":
        return schema, st.integers(lo, hi)
    floats = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    return schema, floats | st.integers(lo, hi)


@st.composite
def _enum(draw: st.DrawFn) -> Pair:
    options = draw(
        st.lists(SCALARS, min_size=1, max_size=6, unique_by=lambda v: json.dumps(v, sort_keys=True))
    )
    if len(options) == 1 and draw(st.booleans()):
        return {"const": options[0]}, st.just(options[0])
    return {"enum": options}, st.sampled_from(options)


LEAVES: st.SearchStrategy[Pair] = st.one_of(
    _string(),
    _number(),
    _enum(),
    st.just(({"type": "boolean"}, st.booleans())),
    st.just(({"type": "null"}, st.none())),
    st.just(({}, JSON)),
    st.just((True, JSON)),
)


@st.composite
def _object(draw: st.DrawFn, children: st.SearchStrategy[Pair]) -> Pair:
    properties = draw(st.dictionaries(NAMES, children, max_size=4))
    required = [name for name in properties if draw(st.booleans())]
    closed = draw(st.booleans())
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: sub for name, (sub, _) in properties.items()},
        "required": required,
    }
    if closed:
        schema["additionalProperties"] = False
    values = st.fixed_dictionaries(
        {name: properties[name][1] for name in required},
        optional={name: pair[1] for name, pair in properties.items() if name not in required},
    )
    return schema, values


@st.composite
def _array(draw: st.DrawFn, children: st.SearchStrategy[Pair]) -> Pair:
    items, values = draw(children)
    return {"type": "array", "items": items}, st.lists(values, max_size=3)


@st.composite
def _union(draw: st.DrawFn, children: st.SearchStrategy[Pair]) -> Pair:
    variants = draw(st.lists(children, min_size=1, max_size=3))
    if draw(st.booleans()):
        variants.append(({"type": "null"}, st.none()))
    return (
        {"anyOf": [schema for schema, _ in variants]},
        st.one_of([values for _, values in variants]),
    )


@st.composite
def _all_of(draw: st.DrawFn, children: st.SearchStrategy[Pair]) -> Pair:
    schema, values = draw(children)
    return {"allOf": [schema]}, values


def _extend(children: st.SearchStrategy[Pair]) -> st.SearchStrategy[Pair]:
    return st.one_of(_object(children), _array(children), _union(children), _all_of(children))


@st.composite
def schemas_with_values(draw: st.DrawFn) -> Pair:
    """Draw a schema (sometimes behind a root `$ref`) and a strategy of its valid values."""
    schema, values = draw(st.recursive(LEAVES, _extend, max_leaves=10))
    if draw(st.booleans()):
        schema = {"$defs": {"root": schema}, "$ref": "#/$defs/root"}
    return schema, values


KEYWORDS = [
    "type",
    "properties",
    "items",
    "required",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
    "$defs",
    "format",
    "minimum",
    "maximum",
    "default",
    "prefixItems",
    "additionalProperties",
    "pattern",
    "not",
    "title",
    "writeOnly",
    "$schema",
]
JUNK = st.recursive(
    st.dictionaries(st.sampled_from(KEYWORDS), JSON, max_size=4),
    lambda inner: (
        st.dictionaries(st.sampled_from(KEYWORDS), inner | JSON | st.lists(inner), max_size=4)
        | st.dictionaries(NAMES, inner, max_size=3)
    ),
    max_leaves=8,
)


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


class TestGeneratedSchemas:
    @SETTINGS
    @given(st.one_of(schemas_with_values().map(lambda pair: pair[0]), JUNK, JSON))
    def test_any_schema_gets_a_form(self, schema: Any) -> None:
        """Building, reading, checking and raw mode never raise, for sane or junk schemas."""
        form = ParamForm(schema)
        assert isinstance(form.errors, list)
        form.raw_toggle.value = True
        form.raw_toggle.value = False
        json.dumps(form.value)

    @SETTINGS
    @given(st.data())
    def test_valid_values_round_trip(self, data: st.DataObject) -> None:
        """For a generated valid value: set then read gives it back, and no error is shown."""
        schema, values = data.draw(schemas_with_values())
        form = ParamForm(schema)
        for _ in range(2):
            value = data.draw(values)
            form.value = value
            assert _same(form.value, value)
            assert form.errors == []
        if value is not None:
            assert _same(ParamForm(schema, value=value).value, value)

    @SETTINGS
    @given(st.data())
    def test_any_json_value_round_trips(self, data: st.DataObject) -> None:
        """Even a value that is not valid is shown (by stand-in fields) and read back."""
        schema, _ = data.draw(schemas_with_values())
        value = data.draw(JSON)
        form = ParamForm(schema)
        form.value = value
        assert _same(form.value, value)
