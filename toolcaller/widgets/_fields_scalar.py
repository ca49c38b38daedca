"""One-widget fields and their builders: secret, enum/const, boolean, numbers, strings."""

from __future__ import annotations

import copy
import datetime as dt
import math
from typing import Any

import ipywidgets as W

from toolcaller.widgets._field import (
    Field,
    FieldContext,
    FieldMismatch,
    JSONValue,
    help_text,
    is_json_equal,
    short_json,
)

INT_LIMIT = 2**53 - 1  # the largest integer a browser's number holds exactly
FLOAT_LIMIT = 1e308
MULTILINE_LENGTH = 200


class ScalarField(Field):
    """A field shown by one control whose `value` trait holds the value, perhaps converted.

    The last value set from Python is kept with what the control showed for it, so that a value
    the control shows unchanged reads back exactly (`1.0` in an integer box, a date-time string).
    A user's edit forgets it: what the user enters reads back as `to_json` makes it.
    """

    def __init__(self, ctx: FieldContext, control: W.Widget) -> None:
        super().__init__(ctx)
        self.control = control
        self.widget = ctx.state.make(W.VBox, layout="box", children=(control,))
        self._kept: tuple[JSONValue, Any] | None = None
        control.observe(self._on_control, names="value")

    def _on_control(self, change: Any) -> None:
        if not self.ctx.state.is_quiet:
            self._kept = None
        self._changed()

    def value(self) -> JSONValue:
        """Return the control's value as JSON."""
        shown = self.control.value
        if self._kept is not None and _same(self._kept[1], shown):
            return copy.deepcopy(self._kept[0])
        return self.to_json(shown)

    def set_value(self, value: JSONValue) -> None:
        """Show `value` in the control."""
        self.control.value = self.to_widget(value)
        self._kept = (copy.deepcopy(value), self.control.value)

    def to_json(self, shown: Any) -> JSONValue:
        """Convert the control's value to JSON."""
        return shown

    def to_widget(self, value: JSONValue) -> Any:
        """Convert a JSON value to the control's value; raise `FieldMismatch` if it cannot."""
        return value


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and bool(a == b)


class TextField(ScalarField):
    """A string in a Text, Textarea or Password control."""

    def to_widget(self, value: JSONValue) -> Any:
        """Accept strings only."""
        if not isinstance(value, str):
            raise FieldMismatch(value)
        return value


class DateField(ScalarField):
    """A `format: date` string in a DatePicker (RFC 3339 full-date round-trips exactly)."""

    def to_json(self, shown: Any) -> JSONValue:
        """Return the ISO date, or "" when no date is picked."""
        return shown.isoformat() if shown else ""

    def to_widget(self, value: JSONValue) -> Any:
        """Parse an ISO date; other strings do not fit a picker."""
        if value == "":
            return None
        try:
            day = dt.date.fromisoformat(value)
        except (TypeError, ValueError) as exc:
            raise FieldMismatch(value) from exc
        if day.isoformat() != value:
            raise FieldMismatch(value)
        return day


class DateTimeField(ScalarField):
    """A `format: date-time` string in a DatetimePicker; the string set is read back as is."""

    def to_json(self, shown: Any) -> JSONValue:
        """Return RFC 3339 text, UTC written as `Z`, or "" when nothing is picked."""
        if not shown:
            return ""
        text = shown.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text

    def to_widget(self, value: JSONValue) -> Any:
        """Parse an RFC 3339 date-time with an offset (the picker needs one)."""
        if value == "":
            return None
        try:
            moment = dt.datetime.fromisoformat(value)
        except (TypeError, ValueError) as exc:
            raise FieldMismatch(value) from exc
        if moment.tzinfo is None:
            raise FieldMismatch(value)
        return moment


class IntField(ScalarField):
    """An integer in an IntText, or a BoundedIntText when the schema has bounds."""

    def to_json(self, shown: Any) -> JSONValue:
        """Return an `int`."""
        return int(shown)

    def to_widget(self, value: JSONValue) -> Any:
        """Accept integers (and integral floats, which JSON Schema counts as integers)."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise FieldMismatch(value)
        if isinstance(value, float) and not value.is_integer():
            raise FieldMismatch(value)
        _widen(self.control, int(value))
        return int(value)


class FloatField(ScalarField):
    """A number in a FloatText, or a BoundedFloatText when the schema has bounds."""

    def to_json(self, shown: Any) -> JSONValue:
        """Return an `int` for a whole number (what the user typed), else a `float`.

        A `FloatText` holds a typed `2` as `2.0`; JSON has one number type, so `2` is sent. Past
        2**53 a float is no exact integer and stays a float. A value set from Python reads back
        as it was set (see `ScalarField`).
        """
        number = float(shown)
        return int(number) if number.is_integer() and abs(number) <= INT_LIMIT else number

    def to_widget(self, value: JSONValue) -> Any:
        """Accept finite numbers."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise FieldMismatch(value)
        try:
            number = float(value)
        except OverflowError as exc:
            raise FieldMismatch(value) from exc
        if not math.isfinite(number):
            raise FieldMismatch(value)
        _widen(self.control, number)
        return number


def _widen(control: W.Widget, number: float) -> None:
    # A bounded control clamps; widen it so that a value out of range stays visible (and is
    # then reported by validation) instead of silently changing.
    if hasattr(control, "min") and number < control.min:
        control.min = number
    if hasattr(control, "max") and number > control.max:
        control.max = number


class BoolField(ScalarField):
    """A boolean in a Checkbox."""

    def to_widget(self, value: JSONValue) -> Any:
        """Accept `true` and `false` only."""
        if not isinstance(value, bool):
            raise FieldMismatch(value)
        return value


class EnumField(ScalarField):
    """One of `enum` in a Dropdown whose values are indexes, so `1`, `1.0`, `true` stay apart."""

    def __init__(self, ctx: FieldContext, control: W.Widget, options: list[JSONValue]) -> None:
        super().__init__(ctx, control)
        self.options = options

    def to_json(self, shown: Any) -> JSONValue:
        """Return the option at the selected index."""
        return copy.deepcopy(self.options[shown])

    def to_widget(self, value: JSONValue) -> Any:
        """Return the index of the option equal to `value` (the same type first)."""
        for index, option in enumerate(self.options):
            if _same(option, value) and is_json_equal(option, value):
                return index
        for index, option in enumerate(self.options):
            if is_json_equal(option, value):
                return index
        raise FieldMismatch(value)


class ConstField(ScalarField):
    """A `const` (or `type: null`) shown read-only; its value is always the constant."""

    def __init__(self, ctx: FieldContext, control: W.Widget, constant: JSONValue) -> None:
        super().__init__(ctx, control)
        self.constant = constant

    def value(self) -> JSONValue:
        """Return the constant (or the equal value set, as it was written)."""
        return copy.deepcopy(self._kept[0] if self._kept else self.constant)

    def to_widget(self, value: JSONValue) -> Any:
        """Accept only the constant."""
        if not is_json_equal(value, self.constant):
            raise FieldMismatch(value)
        return self.control.value


# --- builders: each returns a Field, or None to let the next builder try -------------------


def _caption_kwargs(schema: dict[str, Any], ctx: FieldContext) -> dict[str, Any]:
    return {"description": ctx.caption, "tooltip": help_text(schema) or None}


def build_secret(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a Password field for `writeOnly: true` or `format: password` strings."""
    if schema.get("type", "string") != "string":
        return None
    if schema.get("writeOnly") is not True and schema.get("format") != "password":
        return None
    control = ctx.state.make(W.Password, **_caption_kwargs(schema, ctx))
    return _start(TextField(ctx, control), schema, "")


def build_enum(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a Dropdown for `enum`, a read-only box for `const` and `type: null`."""
    if "const" in schema or schema.get("type") == "null":
        constant = schema.get("const")
        control = ctx.state.make(
            W.Text, value=short_json(constant, 200), disabled=True, **_caption_kwargs(schema, ctx)
        )
        return ConstField(ctx, control, constant)
    options = schema.get("enum")
    if not isinstance(options, list) or not options:
        return None
    quote = not all(isinstance(option, str) for option in options)
    labels = [short_json(o) if quote or not isinstance(o, str) else o for o in options]
    control = ctx.state.make(
        W.Dropdown,
        options=list(zip(labels, range(len(options)), strict=True)),
        value=0,
        **_caption_kwargs(schema, ctx),
    )
    return _start(EnumField(ctx, control, options), schema, options[0])


def build_boolean(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a Checkbox for `type: boolean`."""
    if schema.get("type") != "boolean":
        return None
    control = ctx.state.make(W.Checkbox, indent=True, **_caption_kwargs(schema, ctx))
    return _start(BoolField(ctx, control), schema, False)


def build_integer(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build an IntText, or a BoundedIntText that respects (exclusive) bounds."""
    if schema.get("type") != "integer":
        return None
    low, high = _int_bounds(schema)
    kwargs = _caption_kwargs(schema, ctx)
    if low is None and high is None:
        control = ctx.state.make(W.IntText, **kwargs)
    else:
        lo, hi = (-INT_LIMIT if low is None else low), (INT_LIMIT if high is None else high)
        control = ctx.state.make(W.BoundedIntText, min=lo, max=max(lo, hi), value=lo, **kwargs)
    if isinstance(schema.get("multipleOf"), int) and schema["multipleOf"] > 0:
        control.step = schema["multipleOf"]
    return _start(IntField(ctx, control), schema, _clamp(0, control))


def build_number(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a FloatText, or a BoundedFloatText (exclusive bounds are left to validation)."""
    if schema.get("type") != "number":
        return None
    low, high = _bounds(schema)
    kwargs = _caption_kwargs(schema, ctx)
    if low is None and high is None:
        control = ctx.state.make(W.FloatText, **kwargs)
    else:
        lo = -FLOAT_LIMIT if low is None else float(low[0])
        hi = FLOAT_LIMIT if high is None else float(high[0])
        control = ctx.state.make(W.BoundedFloatText, min=lo, max=max(lo, hi), value=lo, **kwargs)
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and not isinstance(step, bool) and step > 0:
        control.step = step
    return _start(FloatField(ctx, control), schema, _clamp(0, control))


def _clamp(number: int, control: W.Widget) -> int | float:
    low, high = getattr(control, "min", number), getattr(control, "max", number)
    return min(max(number, low), high)


def _int_bounds(schema: dict[str, Any]) -> tuple[int | None, int | None]:
    """Return the inclusive integer bounds (an exclusive bound moves one step inwards)."""
    low, high = _bounds(schema)
    lo = None if low is None else math.floor(low[0]) + 1 if low[1] else math.ceil(low[0])
    hi = None if high is None else math.ceil(high[0]) - 1 if high[1] else math.floor(high[0])
    return lo, hi


def _bounds(schema: dict[str, Any]) -> tuple[tuple[float, bool] | None, tuple[float, bool] | None]:
    """Return `(lower, upper)`, each `(bound, exclusive)` or None."""

    def pick(inclusive: str, exclusive: str, tighter: Any) -> tuple[float, bool] | None:
        found = [
            (schema[k], k == exclusive)
            for k in (inclusive, exclusive)
            if isinstance(schema.get(k), int | float) and not isinstance(schema[k], bool)
        ]
        return tighter(found, key=lambda bound: (bound[0], bound[1])) if found else None

    return pick("minimum", "exclusiveMinimum", max), pick("maximum", "exclusiveMaximum", min)


def build_string(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a Text, Textarea, DatePicker or DatetimePicker for `type: string`."""
    if schema.get("type") != "string":
        return None
    kwargs = _caption_kwargs(schema, ctx)
    fmt = schema.get("format")
    if fmt == "date":
        return _start(DateField(ctx, ctx.state.make(W.DatePicker, **kwargs)), schema, "")
    if fmt == "date-time":
        picker = ctx.state.make(W.DatetimePicker, **kwargs)
        return _start(DateTimeField(ctx, picker), schema, "")
    hint = _placeholder(schema)
    if _is_multiline(schema):
        control = ctx.state.make(W.Textarea, layout="wide", placeholder=hint, **kwargs)
    else:
        control = ctx.state.make(W.Text, placeholder=hint, **kwargs)
    return _start(TextField(ctx, control), schema, "")


def _placeholder(schema: dict[str, Any]) -> str:
    if isinstance(schema.get("pattern"), str):
        return f"pattern: {schema['pattern']}"
    if isinstance(schema.get("format"), str):
        return str(schema["format"])
    examples = schema.get("examples")
    if isinstance(examples, list) and examples and isinstance(examples[0], str):
        return f"e.g. {examples[0]}"
    return ""


def _is_multiline(schema: dict[str, Any]) -> bool:
    max_length = schema.get("maxLength")
    if isinstance(max_length, int) and max_length > MULTILINE_LENGTH:
        return True
    media = schema.get("contentMediaType")
    if schema.get("format") == "textarea" or (isinstance(media, str) and media.startswith("text/")):
        return True
    words = str(schema.get("description", "")).lower()
    return "multi-line" in words or "multiline" in words


def _start(field: ScalarField, schema: dict[str, Any], empty: JSONValue) -> ScalarField:
    """Show the schema's default (when the field can hold it), else `empty`."""
    with field.ctx.state.quiet():
        for candidate in (schema.get("default", empty), empty):
            try:
                field.set_value(candidate)
            except (FieldMismatch, ValueError, TypeError):
                continue
            else:
                break
    return field


__all__ = [
    "BoolField",
    "ConstField",
    "DateField",
    "DateTimeField",
    "EnumField",
    "FloatField",
    "IntField",
    "ScalarField",
    "TextField",
    "build_boolean",
    "build_enum",
    "build_integer",
    "build_number",
    "build_secret",
    "build_string",
]
