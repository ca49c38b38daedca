"""Raw JSON editing: the field no builder declines, and stand-ins for values a field cannot show."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from toolcaller.widgets._field import Field, FieldContext, FieldMismatch, JSONValue
from toolcaller.widgets._fields_scalar import ScalarField
from toolcaller.widgets._fields_text import TextField

RAW_ROWS = 8  # a JSON value needs room: a 2-row box hides all but its first lines

_EMPTY: dict[str, JSONValue] = {
    "object": {},
    "array": [],
    "string": "",
    "integer": 0,
    "number": 0,
    "boolean": False,
}


class RawJSONField(ScalarField):
    """Any JSON value edited as text; text that does not parse keeps the last good value."""

    def __init__(self, ctx: FieldContext, control: W.Widget, initial: JSONValue) -> None:
        super().__init__(ctx, control)
        self._good: JSONValue = initial
        self._problem = ""

    def value(self) -> JSONValue:
        """Return the value of the last text that parsed."""
        return copy.deepcopy(self._good)

    def set_value(self, value: JSONValue) -> None:
        """Show `value` as indented JSON (a value JSON cannot hold is shown by its repr)."""
        self.control.value = dump_json(value)
        self._good = copy.deepcopy(value)  # set after the text: a repr'd value does not parse
        self._problem = ""

    def problems(self) -> list[str]:
        """Return the JSON syntax error of the text, if any."""
        return [self._problem] if self._problem else []

    def _on_control(self, change: Any) -> None:
        try:
            self._good = load_json(change["new"])
            self._problem = ""
        except ValueError as exc:
            self._problem = f"invalid JSON: {exc}"
        self._changed()


def dump_json(value: JSONValue) -> str:
    """Return `value` as indented JSON text for a textarea (repr for what JSON cannot hold)."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return json.dumps(value, indent=2, ensure_ascii=False, default=repr)


def load_json(text: str) -> JSONValue:
    """Parse JSON text, refusing NaN and Infinity (they are not JSON)."""

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def build_raw_json(schema: Any, ctx: FieldContext) -> Field:
    """Build a Textarea holding JSON: the fallback that never declines."""
    initial = initial_json(schema)
    control = ctx.state.make(
        W.Textarea,
        layout="wide",
        value=dump_json(initial),
        description=ctx.caption,
        placeholder="a JSON value",
        rows=RAW_ROWS,
    )
    return RawJSONField(ctx, control, initial)


def initial_json(schema: Any) -> JSONValue:
    """Return the value a raw JSON field starts with: default, const, or empty of its type."""
    if not isinstance(schema, dict):
        return None
    for key in ("default", "const"):
        if key in schema:
            return copy.deepcopy(schema[key])
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return copy.deepcopy(_EMPTY.get(kind)) if isinstance(kind, str) else None


def fallback_field(value: JSONValue, ctx: FieldContext) -> Field:
    """Build the field that shows a value the schema's own field could not: Text or raw JSON."""
    field: Field
    if isinstance(value, str) and "\n" not in value:
        field = TextField(ctx, ctx.state.make(W.Text, description=ctx.caption))
    else:
        field = build_raw_json({}, ctx)
    with ctx.state.quiet():
        field.set_value(value)
    field.is_fallback = True
    return field


def swap_widget(box: W.Box, old: W.Widget, new: W.Widget) -> None:
    """Put `new` where `old` is among a box's children."""
    box.children = tuple(new if child is old else child for child in box.children)


def put(child: Field, value: JSONValue, box: W.Box, on_change: Callable[[], None]) -> Field:
    """Show `value` in `child`, or in a field that replaces it; return the one in place.

    A fallback (Text or raw JSON) replaces a field that cannot show the value; a fallback
    gives way to the schema's own field again once that can show the value.
    """
    substitute = _own_field(child, value) if child.is_fallback else None
    if substitute is None:
        try:
            child.set_value(value)
        except FieldMismatch:
            substitute = fallback_field(value, child.ctx)
            substitute.source = child.source
        else:
            return child
    substitute.on_change(on_change)
    swap_widget(box, child.widget, substitute.widget)
    return substitute


def _own_field(fallback: Field, value: JSONValue) -> Field | None:
    """Return the schema's own field showing `value`, or None when it still cannot."""
    if fallback.source is None:
        return None
    ctx = fallback.ctx.lazy()
    own = ctx.build(fallback.source, ctx)
    try:
        with ctx.state.quiet():
            own.set_value(value)
    except FieldMismatch:
        return None
    return own


__all__ = [
    "RawJSONField",
    "build_raw_json",
    "dump_json",
    "fallback_field",
    "initial_json",
    "load_json",
    "put",
    "swap_widget",
]
