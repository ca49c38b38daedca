"""String fields: text, secrets, dates and date-times (which say the UTC time they send)."""

from __future__ import annotations

import datetime as dt
import html
from typing import Any

import ipywidgets as W

from toolcaller.widgets._field import UNSET, Field, FieldContext, FieldMismatch, JSONValue
from toolcaller.widgets._fields_scalar import ScalarField, caption_kwargs, start

MULTILINE_LENGTH = 200


class TextField(ScalarField):
    """A string in a Text, Textarea or Password control."""

    def to_widget(self, value: JSONValue) -> Any:
        """Accept strings only."""
        if not isinstance(value, str):
            raise FieldMismatch(value)
        return value


class DateField(ScalarField):
    """A `format: date` string in a DatePicker (RFC 3339 full-date round-trips exactly)."""

    accepts_unset = True

    def to_json(self, shown: Any) -> JSONValue:
        """Return the ISO date, or `UNSET` when no date is picked."""
        return shown.isoformat() if shown else UNSET

    def to_widget(self, value: JSONValue) -> Any:
        """Parse an ISO date; other strings do not fit a picker (a text field shows them)."""
        if value is UNSET:
            return None
        try:
            day = dt.date.fromisoformat(value)
        except (TypeError, ValueError) as exc:
            raise FieldMismatch(value) from exc
        if day.isoformat() != value:
            raise FieldMismatch(value)
        return day


class DateTimeField(ScalarField):
    """A `format: date-time` string in a DatetimePicker; the string set is read back as is.

    The picker shows the browser's local time and sends UTC: a line under it says the exact
    text sent, so a local 14:00 that leaves as `12:00:00Z` is no surprise.
    """

    accepts_unset = True

    def __init__(self, ctx: FieldContext, control: W.Widget) -> None:
        super().__init__(ctx, control)
        self.note = ctx.state.make(W.HTML, layout="box")
        self.widget.children = (*self.widget.children, self.note)

    def to_json(self, shown: Any) -> JSONValue:
        """Return RFC 3339 text, UTC written as `Z`, or `UNSET` when nothing is picked."""
        if not shown:
            return UNSET
        text = shown.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text

    def to_widget(self, value: JSONValue) -> Any:
        """Parse an RFC 3339 date-time with an offset (the picker needs one)."""
        if value is UNSET:
            return None
        try:
            moment = dt.datetime.fromisoformat(value)
        except (TypeError, ValueError) as exc:
            raise FieldMismatch(value) from exc
        if moment.tzinfo is None:
            raise FieldMismatch(value)
        return moment

    def _on_control(self, change: Any) -> None:
        sent = self.value()
        self.note.value = (
            "" if sent is UNSET else
            f'<div class="tc-help">sent as <code>{html.escape(str(sent))}</code> (UTC: the '
            "picker shows your browser's local time)</div>")
        super()._on_control(change)


# --- builders -------------------------------------------------------------------------------


def build_secret(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a Password field for `writeOnly: true` or `format: password` strings."""
    if schema.get("type", "string") != "string":
        return None
    if schema.get("writeOnly") is not True and schema.get("format") != "password":
        return None
    control = ctx.state.make(W.Password, **caption_kwargs(ctx))
    return start(TextField(ctx, control), schema, "")


def build_string(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a Text, Textarea, DatePicker or DatetimePicker for `type: string`."""
    if schema.get("type") != "string":
        return None
    kwargs = caption_kwargs(ctx)
    fmt = schema.get("format")
    if fmt == "date":
        return start(DateField(ctx, ctx.state.make(W.DatePicker, **kwargs)), schema, UNSET)
    if fmt == "date-time":
        picker = ctx.state.make(W.DatetimePicker, **kwargs)
        return start(DateTimeField(ctx, picker), schema, UNSET)
    hint = _placeholder(schema)
    if _is_multiline(schema):
        control = ctx.state.make(W.Textarea, layout="wide", placeholder=hint, rows=5, **kwargs)
    else:
        control = ctx.state.make(W.Text, placeholder=hint, **kwargs)
    return start(TextField(ctx, control), schema, "")


def _placeholder(schema: dict[str, Any]) -> str:
    # Never the raw pattern: a person reads this (the engine's message says what is wrong).
    examples = schema.get("examples")
    if isinstance(examples, list) and examples and isinstance(examples[0], str):
        return f"e.g. {examples[0]}"
    if isinstance(schema.get("format"), str):
        return str(schema["format"])
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


__all__ = ["DateField", "DateTimeField", "TextField", "build_secret", "build_string"]
