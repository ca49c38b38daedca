"""Object fields: declared properties in a (bordered) box, or a key/value map editor."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import ipywidgets as W

from toolcaller.widgets._field import UNSET, Field, FieldContext, FieldMismatch, JSONValue
from toolcaller.widgets._fields_compound import ToggleField, start_at_default, title_html
from toolcaller.widgets._fields_raw import RawJSONField, build_raw_json, put
from toolcaller.widgets._schema import is_simple


class ObjectField(Field):
    """An object with declared properties: required ones always sent, optional ones toggled.

    Keys the schema does not declare go to an "other properties" raw JSON editor, shown when
    the schema allows them explicitly or a value brings some, so no key is ever lost.
    """

    def __init__(self, ctx: FieldContext, schema: dict[str, Any]) -> None:
        super().__init__(ctx)
        self.schema = schema
        self.fields: dict[str, Field] = {}
        self.extras: RawJSONField | None = None
        self._absent: set[str] = set()  # required keys a value set from Python lacked
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
        for name, sub in properties.items():
            self.fields[str(name)] = self._property(str(name), sub, name in required)
        undeclared = schema.get("additionalProperties", True)
        for name in dict.fromkeys(required):
            if name not in self.fields:
                self.fields[name] = self._property(name, undeclared, True)
        nested = ctx.depth > 0
        head = (
            (title_html(ctx, schema),)
            if nested and (ctx.caption or "description" in schema)
            else ()
        )
        self.widget = ctx.state.make(
            W.VBox,
            layout="nested" if nested else "box",
            children=(*head, *(field.widget for field in self.fields.values())),
        )
        if nested:
            self.widget.add_class("tc-nested")
        self.control = self.widget
        for name, field in self.fields.items():
            field.on_change(self._listener(name))
        allowed = "additionalProperties" in schema and undeclared is not False
        if allowed or "patternProperties" in schema:
            self._extras()

    def _listener(self, name: str) -> Callable[[], None]:
        def changed() -> None:
            if not self.ctx.state.is_quiet:
                self._absent.discard(name)  # edited: the user means to send it
            self._changed()

        return changed

    def _property(self, name: str, schema: Any, required: bool) -> Field:
        label = (
            schema["title"]
            if isinstance(schema, dict) and isinstance(schema.get("title"), str)
            else name
        )
        ctx = self.ctx.child(label, required=required)
        if required or _is_plain_boolean(schema):
            return ctx.build(schema, ctx)  # an optional boolean says "not set" itself
        always = isinstance(schema, dict) and "const" in schema  # a const is sent unless unticked
        shows_default = isinstance(schema, dict) and "default" in schema
        eager = always or shows_default or is_simple(schema, ctx)
        return ToggleField(ctx, schema, nullable=False, on=always, eager=eager)

    def _extras(self) -> RawJSONField:
        if self.extras is None:
            ctx = self.ctx.child("other properties", required=False)
            extras = build_raw_json({"type": "object"}, ctx)
            assert isinstance(extras, RawJSONField)
            extras.control.tooltip = "properties the schema does not declare, as a JSON object"
            extras.on_change(self._changed)
            self.extras = extras
            self.widget.children = (*self.widget.children, extras.widget)
        return self.extras

    def value(self) -> JSONValue:
        """Return the properties that are sent, then the other properties."""
        result = {}
        for name, field in self.fields.items():
            item = UNSET if name in self._absent else field.value()
            if item is not UNSET:
                result[name] = item
        extra = self.extras.value() if self.extras is not None else None
        if isinstance(extra, dict):
            for name, item in extra.items():
                result.setdefault(name, item)
        return result

    def set_value(self, value: JSONValue) -> None:
        """Show an object; declared keys it lacks are switched off, or left out if required."""
        if not isinstance(value, dict):
            raise FieldMismatch(value)
        self._absent.clear()
        for name, field in self.fields.items():
            if name in value:
                self.fields[name] = put(field, value[name], self.widget, self._listener(name))
            elif field.accepts_unset and not getattr(field, "nullable", False):
                field.set_value(UNSET)
            else:
                self._absent.add(name)
        rest = {name: item for name, item in value.items() if name not in self.fields}
        if rest or self.extras is not None:
            self._extras().set_value(rest)

    def child(self, token: str, *, build: bool = False) -> Field | None:
        """Return the field of a declared property."""
        return self.fields.get(token)

    def children(self) -> Iterator[tuple[str, Field]]:
        """Yield `(property name, field)` pairs."""
        yield from self.fields.items()

    def problems(self) -> list[str]:
        """Return the other-properties editor's problems."""
        if self.extras is None:
            return []
        found = self.extras.problems()
        if not found and not isinstance(self.extras.value(), dict):
            found.append("other properties must be a JSON object")
        return found


class MapRow:
    """One entry of a MapField: its key Text, its value field, its remove button, its box."""

    def __init__(self, key: W.Text, field: Field, remove_button: W.Button, box: W.HBox) -> None:
        self.key = key
        self.field = field
        self.remove_button = remove_button
        self.box = box


class MapField(Field):
    """An object of free keys (`additionalProperties` only) edited as key/value rows."""

    def __init__(self, ctx: FieldContext, schema: dict[str, Any], values: Any) -> None:
        super().__init__(ctx)
        self.values_schema = values
        self.rows: list[MapRow] = []
        self.add_button = ctx.state.make(
            W.Button, layout="button", description="add", icon="plus", tooltip="add an entry"
        )
        self._rows_box = ctx.state.make(W.VBox, layout="box")
        self.widget = ctx.state.make(
            W.VBox,
            layout="nested",
            children=(title_html(ctx, schema), self._rows_box, self.add_button),
        )
        self.widget.add_class("tc-nested")
        self.control = self.widget
        self.add_button.on_click(lambda _: self.add_row())

    def add_row(self, key: str | None = None, value: JSONValue = UNSET) -> MapRow:
        """Append an entry (a fresh key unless given) and return its row."""
        state = self.ctx.state
        if key is None:
            taken = {row.key.value for row in self.rows}
            key = next(f"key{n}" for n in range(1, len(taken) + 2) if f"key{n}" not in taken)
        ctx = self.ctx.lazy().child("", required=True)
        field = ctx.build(self.values_schema, ctx)
        key_text = state.make(W.Text, layout="key", value=key, placeholder="key")
        remove = state.make(W.Button, layout="button", icon="trash", tooltip="remove this entry")
        row = MapRow(
            key_text,
            field,
            remove,
            state.make(W.HBox, layout="box", children=(key_text, field.widget, remove)),
        )
        field.on_change(self._changed)
        if value is not UNSET:
            row.field = put(field, value, row.box, self._changed)
        key_text.observe(self._changed, names="value")
        remove.on_click(lambda _: self.remove_row(row))
        self.rows.append(row)
        self._rows_box.children = (*self._rows_box.children, row.box)
        self._changed()
        return row

    def remove_row(self, row: MapRow) -> None:
        """Remove one entry."""
        self.rows.remove(row)
        self._rows_box.children = tuple(r.box for r in self.rows)
        self._changed()

    def value(self) -> JSONValue:
        """Return the entries as an object (a repeated key: the last one wins; empty: left out)."""
        values = ((row.key.value, row.field.value()) for row in self.rows)
        return {key: item for key, item in values if item is not UNSET}

    def set_value(self, value: JSONValue) -> None:
        """Show an object, one row per key."""
        if not isinstance(value, dict):
            raise FieldMismatch(value)
        items = list(value.items())
        for row, (key, item) in zip(self.rows, items, strict=False):
            row.key.value = key
            row.field = put(row.field, item, row.box, self._changed)
        for key, item in items[len(self.rows) :]:
            self.add_row(key, item)
        while len(self.rows) > len(items):
            self.remove_row(self.rows[-1])

    def child(self, token: str, *, build: bool = False) -> Field | None:
        """Return the value field of the entry whose key is `token`."""
        found = [row.field for row in self.rows if row.key.value == token]
        return found[-1] if found else None

    def children(self) -> Iterator[tuple[str, Field]]:
        """Yield `(key, value field)` pairs."""
        for row in self.rows:
            yield row.key.value, row.field

    def problems(self) -> list[str]:
        """Return repeated keys."""
        keys = [row.key.value for row in self.rows]
        repeated = sorted({key for key in keys if keys.count(key) > 1})
        return [f"repeated key {key!r}: only the last is sent" for key in repeated]


def _is_plain_boolean(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "boolean" and not any(
        key in schema for key in ("$ref", "enum", "const", "anyOf", "oneOf", "allOf"))


def build_object(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a map editor for free keys, else a box of the declared properties."""
    kind = schema.get("type")
    if kind != "object" and not (kind is None and isinstance(schema.get("properties"), dict)):
        return None
    if not schema.get("properties") and any(k in schema for k in ("anyOf", "oneOf")):
        return None  # the variants say what the object holds
    values = _map_values(schema)
    field: Field = ObjectField(ctx, schema) if values is None else MapField(ctx, schema, values)
    start_at_default(field, schema)
    return field


def _map_values(schema: dict[str, Any]) -> Any:
    """Return the schema of a map's values, or None when the object is not a map."""
    if schema.get("properties") or schema.get("required"):
        return None
    extra = schema.get("additionalProperties")
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict) and patterns:
        return (
            next(iter(patterns.values())) if len(patterns) == 1 and extra in (None, False) else {}
        )
    return extra if isinstance(extra, dict) and extra else None


__all__ = ["MapField", "MapRow", "ObjectField", "build_object"]
