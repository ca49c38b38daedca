"""Number fields: text boxes that keep what was typed, out of range or not.

A number is typed into a plain text box, never a bounded one: a bounded box would change 500
into 100 without a word. What was typed is sent as typed — `7` as an integer, `7.0` and `1e3`
as numbers, and text that is no number as that text — so the engine's own validator (which the
form runs) says what is wrong with it. An empty box is a value left out.
"""

from __future__ import annotations

import math
import re
from typing import Any

import ipywidgets as W
import traitlets

from toolcaller.widgets._field import UNSET, Field, FieldContext, FieldMismatch, JSONValue
from toolcaller.widgets._fields_scalar import ScalarField, caption_kwargs, start

INT_LIMIT = 2**53 - 1  # the largest integer a browser's number holds exactly
_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


class _NumberText(traitlets.Unicode):  # type: ignore[type-arg]  # its str/str parameters
    """Text that code may also set with a number (`box.value = 7` shows "7")."""

    def validate(self, obj: Any, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value) if isinstance(value, int) else repr(value)
        return super().validate(obj, value)


class NumberBox(W.Text):  # type: ignore[misc]  # ipywidgets is untyped: Text is Any
    """A Text box for a number: what is typed stays as typed (see the module docstring)."""

    value = _NumberText(help="The text typed (code may set a number)").tag(sync=True)


class NumberField(ScalarField):
    """An integer or a number in a Text control (see the module docstring)."""

    accepts_unset = True

    def to_json(self, shown: Any) -> JSONValue:
        """Return the typed text as a JSON number; empty is `UNSET`, other text stays text."""
        text = str(shown).strip()
        if not text:
            return UNSET
        if _INTEGER.fullmatch(text):
            return int(text)
        if _NUMBER.fullmatch(text):
            number = float(text)
            return number if math.isfinite(number) else text
        return text

    def to_widget(self, value: JSONValue) -> Any:
        """Show an integer or a finite number as text (`UNSET`: an empty box)."""
        if value is UNSET:
            return ""
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise FieldMismatch(value)
        if isinstance(value, float) and not math.isfinite(value):
            raise FieldMismatch(value)
        return str(value) if isinstance(value, int) else repr(value)


def build_integer(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a number box for `type: integer`."""
    if schema.get("type") != "integer":
        return None
    return _number(schema, ctx, "integer")


def build_number(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a number box for `type: number`."""
    if schema.get("type") != "number":
        return None
    return _number(schema, ctx, "number")


def _number(schema: dict[str, Any], ctx: FieldContext, kind: str) -> Field:
    control = ctx.state.make(NumberBox, placeholder=placeholder(schema, kind),
                             **caption_kwargs(ctx))
    control.add_class("tc-number")
    return start(NumberField(ctx, control), schema, UNSET)


def placeholder(schema: dict[str, Any], kind: str) -> str:
    """Say what a number box takes: its kind and range, e.g. `integer, 1 to 100`."""
    low = _bound(schema, "minimum", "exclusiveMinimum")
    high = _bound(schema, "maximum", "exclusiveMaximum")
    if low and high:
        return f"{kind}, {low[0]}{' (excluded)' if low[1] else ''} to {high[0]}" + (
            " (excluded)" if high[1] else "")
    if low:
        return f"{kind}, {'above' if low[1] else 'at least'} {low[0]}"
    if high:
        return f"{kind}, {'below' if high[1] else 'at most'} {high[0]}"
    return kind


def _bound(schema: dict[str, Any], inclusive: str, exclusive: str) -> tuple[str, bool] | None:
    for key, excluded in ((exclusive, True), (inclusive, False)):
        value = schema.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return (f"{value:g}" if isinstance(value, float) else str(value)), excluded
    return None


__all__ = ["INT_LIMIT", "NumberBox", "NumberField", "build_integer", "build_number",
           "placeholder"]
