"""One-widget fields: the ScalarField base, booleans, enums and constants, and their builders.

Strings and dates are in `_fields_text.py`, numbers in `_fields_number.py`. A required field
with no default starts empty (no number, no option picked): it is left out of the params, so
the engine's own message ("'x' is required") is what the form shows once it shows anything.
"""

from __future__ import annotations

import copy
from typing import Any

import ipywidgets as W

from toolcaller.widgets._field import (
    UNSET,
    Field,
    FieldContext,
    FieldMismatch,
    JSONValue,
    is_json_equal,
    short_json,
)


class ScalarField(Field):
    """A field shown by one control whose `value` trait holds the value, perhaps converted.

    The last value set from Python is kept with what the control showed for it, so that a value
    the control shows unchanged reads back exactly (`1.0` in an integer box, a date-time string).
    A user's edit forgets it: what the user enters reads back as `to_json` makes it.
    """

    def __init__(self, ctx: FieldContext, control: W.Widget) -> None:
        super().__init__(ctx)
        self.control = control
        self.widget = ctx.state.make(W.VBox, layout="field", children=(control,))
        self.widget.add_class("tc-field")
        self._kept: tuple[JSONValue, Any] | None = None
        control.observe(self._on_control, names="value")

    def _on_control(self, change: Any) -> None:
        if not self.ctx.state.is_quiet:
            self._kept = None
        self._changed()

    def value(self) -> JSONValue:
        """Return the control's value as JSON (`UNSET` when the control is empty)."""
        shown = self.control.value
        if self._kept is not None and _same(self._kept[1], shown):
            return copy.deepcopy(self._kept[0])
        return self.to_json(shown)

    def set_value(self, value: JSONValue) -> None:
        """Show `value` in the control."""
        self.control.value = self.to_widget(value)
        self._kept = None if value is UNSET else (copy.deepcopy(value), self.control.value)

    def to_json(self, shown: Any) -> JSONValue:
        """Convert the control's value to JSON."""
        return shown

    def to_widget(self, value: JSONValue) -> Any:
        """Convert a JSON value to the control's value; raise `FieldMismatch` if it cannot."""
        return value


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and bool(a == b)


class BoolField(ScalarField):
    """A required boolean in a Checkbox."""

    def to_widget(self, value: JSONValue) -> Any:
        """Accept `true` and `false` only."""
        if not isinstance(value, bool):
            raise FieldMismatch(value)
        return value


class ChoiceField(ScalarField):
    """A Dropdown whose values are indexes into `options`, so `1`, `1.0`, `true` stay apart.

    No selection (index None) is `UNSET`: a required enum starts so, and an optional boolean's
    "not set" entry is one.
    """

    accepts_unset = True

    def __init__(self, ctx: FieldContext, control: W.Widget, options: list[JSONValue]) -> None:
        super().__init__(ctx, control)
        self.options = options

    def to_json(self, shown: Any) -> JSONValue:
        """Return the option at the selected index (`UNSET` for none)."""
        if shown is None or self.options[shown] is UNSET:
            return UNSET
        return copy.deepcopy(self.options[shown])

    def to_widget(self, value: JSONValue) -> Any:
        """Return the index of the option equal to `value` (the same type first)."""
        if value is UNSET:
            if UNSET in self.options:
                return self.options.index(UNSET)
            return None
        for index, option in enumerate(self.options):
            if option is not UNSET and _same(option, value) and is_json_equal(option, value):
                return index
        for index, option in enumerate(self.options):
            if option is not UNSET and is_json_equal(option, value):
                return index
        raise FieldMismatch(value)


EnumField = ChoiceField  # the name earlier versions used


class OptionalBoolField(ChoiceField):
    """An optional boolean: one Dropdown of "not set", true and false (not two checkboxes)."""


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


def caption_kwargs(ctx: FieldContext) -> dict[str, Any]:
    """Return the label of a control (the schema's description shows under the control)."""
    # A tooltip of its own: without one, some views title their label "null".
    return {"description": ctx.caption, "tooltip": ctx.caption or None}


def build_enum(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a Dropdown for `enum`, a read-only box for `const` and `type: null`."""
    if "const" in schema or schema.get("type") == "null":
        constant = schema.get("const")
        control = ctx.state.make(
            W.Text, value=short_json(constant, 200), disabled=True, **caption_kwargs(ctx)
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
        value=None,
        **caption_kwargs(ctx),
    )
    return start(ChoiceField(ctx, control, options), schema, UNSET)


def build_boolean(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a Checkbox for a required `type: boolean`, a three-way Dropdown for an optional one."""
    if schema.get("type") != "boolean":
        return None
    if not ctx.required:
        return build_optional_boolean(schema, ctx)
    control = ctx.state.make(W.Checkbox, indent=False, **caption_kwargs(ctx))
    return start(BoolField(ctx, control), schema, False)


def build_optional_boolean(schema: dict[str, Any], ctx: FieldContext) -> Field:
    """Build an optional boolean's Dropdown: "not set" (left out), true, false."""
    default = schema.get("default")
    unset = f"not set (default {short_json(default)})" if "default" in schema else "not set"
    control = ctx.state.make(
        W.Dropdown, options=[(unset, 0), ("true", 1), ("false", 2)], value=0,
        **caption_kwargs(ctx),
    )
    return OptionalBoolField(ctx, control, [UNSET, True, False])


def start(field: ScalarField, schema: dict[str, Any], empty: JSONValue) -> ScalarField:
    """Show the schema's default (when the field can hold it), else `empty`.

    A required field without a default starts empty: nothing is made up for the user.
    """
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
    "ChoiceField",
    "ConstField",
    "EnumField",
    "OptionalBoolField",
    "ScalarField",
    "build_boolean",
    "build_enum",
    "build_optional_boolean",
    "caption_kwargs",
    "start",
]
