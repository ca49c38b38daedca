"""Fields made of other fields: optional/nullable toggles and arrays."""

from __future__ import annotations

import contextlib
import html
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import ipywidgets as W

from toolcaller.widgets._field import (
    UNSET,
    Field,
    FieldContext,
    FieldMismatch,
    JSONValue,
    help_markup,
    help_text,
)
from toolcaller.widgets._fields_raw import put, swap_widget
from toolcaller.widgets._fields_scalar import ScalarField
from toolcaller.widgets._schema import resolve

INCLUDE_TICK_CLASS = "tc-include-tick"


def title_html(ctx: FieldContext, schema: Any) -> W.HTML:
    """Return the heading of a compound field: its caption in bold, its description under it."""
    notes = help_text(schema) if isinstance(schema, dict) else ""
    text = f'<div class="tc-label">{html.escape(ctx.caption)}</div>' if ctx.caption else ""
    if notes:
        text += help_markup(notes)
    return ctx.state.make(W.HTML, layout="box", value=text)


class ToggleField(Field):
    """A field that can be switched off: optional (off = left out) or nullable (off = null).

    The inner field is built when first needed (switched on, edited, or set), so a recursive
    schema grows one level per use. Editing an inner field that is off switches it on.
    """

    def __init__(
        self, ctx: FieldContext, schema: Any, *, nullable: bool, on: bool, eager: bool
    ) -> None:
        super().__init__(ctx)
        self.schema = schema
        self.nullable = nullable
        self.inner: Field | None = None
        self.tick = ctx.state.make(
            W.Checkbox,
            layout="tick",
            indent=False,
            value=on != nullable,
            **_tick_label(ctx.label, nullable=nullable),
        )
        self.tick.add_class("tc-tick")
        if not nullable:
            self.tick.add_class(INCLUDE_TICK_CLASS)
        self._head: W.Widget | None = None
        if eager:
            head = self._build(lazy=False).widget
        else:
            caption = (f'<span class="tc-label">{html.escape(ctx.caption)}</span> '
                       '<span class="tc-muted">null</span>' if nullable
                       else '<span class="tc-muted">not sent</span>')
            head = self._head = ctx.state.make(W.HTML, layout="box", value=caption)
        if nullable:
            self.widget = ctx.state.make(W.HBox, layout="field", children=(head, self.tick))
        else:  # "include NAME" above the field, whose own label hides (the tick says it)
            self.widget = ctx.state.make(W.VBox, layout="field", children=(self.tick, head))
            self.widget.add_class("tc-toggled")
        self.widget.add_class("tc-field")
        self.tick.observe(self._on_tick, names="value")
        self._dim()

    accepts_unset = True

    @property
    def is_on(self) -> bool:
        """Whether the inner value is sent (not left out, not null)."""
        return bool(self.tick.value) != self.nullable

    @property
    def control(self) -> W.Widget:
        """The inner field's control (built on demand: editing it switches the field on)."""
        return self._build().control

    def value(self) -> JSONValue:
        """Return the inner value, or `UNSET` / None when switched off."""
        if not self.is_on:
            return None if self.nullable else UNSET
        return self._build().value()

    def set_value(self, value: JSONValue) -> None:
        """Switch off for `UNSET` (optional) or None (nullable), else switch on and show it."""
        if value is (None if self.nullable else UNSET):
            self.tick.value = self.nullable
            return
        if value is UNSET:
            raise FieldMismatch(value)
        inner = self._build()
        self.inner = put(inner, value, self.widget, self._on_inner)
        self.tick.value = not self.nullable

    def show_error(self, message: str) -> None:
        """Show the message under the inner field (beside the toggle when it is not built)."""
        if self.inner is not None:
            self.inner.show_error(message)
        else:
            super().show_error(message)

    def child(self, token: str, *, build: bool = False) -> Field | None:
        """Return the inner field's sub-field (the toggle is transparent to pointers)."""
        inner = self._build() if build else self.inner
        return inner.child(token, build=build) if inner is not None else None

    def children(self) -> Iterator[tuple[str, Field]]:
        """Yield the inner field's sub-fields while switched on."""
        if self.inner is not None and self.is_on:
            yield from self.inner.children()

    def problems(self) -> list[str]:
        """Return the inner field's problems while switched on."""
        return self.inner.problems() if self.inner is not None and self.is_on else []

    def inner_field(self) -> Field:
        """Return the inner field, building it if needed (it stays off until edited)."""
        return self._build()

    def _build(self, *, lazy: bool = True) -> Field:
        if self.inner is None:
            # Built now for a click or a value, a level cannot start an endless expansion.
            ctx = self.ctx.lazy() if lazy else self.ctx
            self.inner = ctx.build(self.schema, ctx)
            self.inner.on_change(self._on_inner)
            if self._head is not None:
                swap_widget(self.widget, self._head, self.inner.widget)
            self._dim()
        return self.inner

    def _dim(self) -> None:
        """Grey out an optional field that is not sent (a null one shows as it is)."""
        if self.nullable:
            return
        shown = self.inner.widget if self.inner is not None else self._head
        if shown is not None:
            if self.is_on:
                shown.remove_class("tc-off")
            else:
                shown.add_class("tc-off")

    def _on_tick(self, change: Any) -> None:
        if self.is_on:
            self._build()
        self._dim()
        self._changed()

    def _on_inner(self) -> None:
        if not self.is_on and not self.ctx.state.is_quiet:
            self.tick.value = not self.nullable  # the user edited it: they want it sent
        else:
            self._changed()


def _tick_label(name: str, *, nullable: bool) -> dict[str, str]:
    """Label a toggle's checkbox with what it does to which field: "include NAME", "NAME: null".

    A label is what names a checkbox in the browser (and its tooltip, in ipywidgets): plain
    text, so that both read well.
    """
    if nullable:
        return {"description": f"{name}: null" if name else "null"}
    return {"description": f"include {name}" if name else "include this optional parameter"}


class ListRow:
    """One item of a ListField: its field, its remove button and the box holding both."""

    def __init__(self, field: Field, remove_button: W.Button, box: W.HBox) -> None:
        self.field = field
        self.remove_button = remove_button
        self.box = box


class ListField(Field):
    """An array edited as rows of the item field, with add and remove buttons."""

    def __init__(self, ctx: FieldContext, schema: dict[str, Any]) -> None:
        super().__init__(ctx)
        self.items_schema = schema.get("items", True)
        self.rows: list[ListRow] = []
        self.add_button = ctx.state.make(
            W.Button, layout="button", description="add", icon="plus", tooltip="add an item"
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

    def add_row(self, value: JSONValue = UNSET) -> ListRow:
        """Append an item (its field's start value, or `value`) and return its row."""
        item_ctx = replace(self.ctx.lazy(), label="", required=True, depth=self.ctx.depth + 1)
        field = item_ctx.build(self.items_schema, item_ctx)
        remove = self.ctx.state.make(
            W.Button, layout="button", icon="trash", tooltip="remove this item"
        )
        row = ListRow(
            field,
            remove,
            self.ctx.state.make(W.HBox, layout="box", children=(field.widget, remove)),
        )
        field.on_change(self._changed)
        if value is not UNSET:
            row.field = put(field, value, row.box, self._changed)
        remove.on_click(lambda _: self.remove_row(row))
        self.rows.append(row)
        self._rows_box.children = (*self._rows_box.children, row.box)
        self._changed()
        return row

    def remove_row(self, row: ListRow) -> None:
        """Remove one item."""
        self.rows.remove(row)
        self._rows_box.children = tuple(r.box for r in self.rows)
        self._changed()

    def value(self) -> JSONValue:
        """Return the items' values (an empty item is null: an array keeps its positions)."""
        return [none_for_unset(row.field.value()) for row in self.rows]

    def set_value(self, value: JSONValue) -> None:
        """Show a list, reusing rows and adding or removing rows as needed."""
        if not isinstance(value, list):
            raise FieldMismatch(value)
        for row, item in zip(self.rows, value, strict=False):
            row.field = put(row.field, item, row.box, self._changed)
        for item in value[len(self.rows) :]:
            self.add_row(item)
        while len(self.rows) > len(value):
            self.remove_row(self.rows[-1])

    def child(self, token: str, *, build: bool = False) -> Field | None:
        """Return the item field at an index token."""
        if token.isdigit() and int(token) < len(self.rows) and str(int(token)) == token:
            return self.rows[int(token)].field
        return None

    def children(self) -> Iterator[tuple[str, Field]]:
        """Yield `(index, item field)` pairs."""
        for index, row in enumerate(self.rows):
            yield str(index), row.field


def none_for_unset(value: JSONValue) -> JSONValue:
    """Return None for `UNSET` (an empty field where a value must stand), else the value."""
    return None if value is UNSET else value


class TagsField(ScalarField):
    """An array of string enum values in a TagsInput (order kept; `uniqueItems` respected)."""

    def to_json(self, shown: Any) -> JSONValue:
        """Return the tags as a list."""
        return list(shown)

    def to_widget(self, value: JSONValue) -> Any:
        """Accept a list of allowed tags."""
        allowed = self.control.allowed_tags
        if not isinstance(value, list) or not all(
            isinstance(tag, str) and tag in allowed for tag in value
        ):
            raise FieldMismatch(value)
        return list(value)


# --- builders -------------------------------------------------------------------------------


def build_array(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a TagsInput for arrays of string enums, else rows of the item field."""
    if schema.get("type") != "array":
        return None
    if "prefixItems" in schema or isinstance(schema.get("items"), list):
        return None  # tuples are edited as raw JSON
    tags = _string_enum(schema.get("items", True), ctx)
    field: Field
    if tags is not None:
        control = ctx.state.make(
            W.TagsInput,
            allowed_tags=tags,
            allow_duplicates=schema.get("uniqueItems") is not True,
        )
        control.add_class("tc-tags")
        field = TagsField(ctx, control)
        # A TagsInput shows no label of its own: the caption goes above it, always.
        label = ctx.state.make(W.HTML, layout="box",
                               value=f'<div class="tc-label">{html.escape(ctx.caption)}</div>')
        field.widget.children = (label, *field.widget.children)
    else:
        field = ListField(ctx, schema)
    start_at_default(field, schema)
    return field


def _string_enum(items: Any, ctx: FieldContext) -> list[str] | None:
    found = resolve(items, ctx)
    options = found[0].get("enum") if found and isinstance(found[0], dict) else None
    # A TagsInput refuses blank tags: an enum with "" (or "  ") gets rows of item fields.
    if (isinstance(options, list) and options
            and all(isinstance(o, str) and o.strip() for o in options)):
        return list(dict.fromkeys(options))
    return None


def start_at_default(field: Field, schema: dict[str, Any]) -> None:
    """Show the schema's default in a new field when it can hold it."""
    if "default" in schema:
        with field.ctx.state.quiet(), contextlib.suppress(FieldMismatch):
            field.set_value(schema["default"])


__all__ = [
    "ListField",
    "ListRow",
    "TagsField",
    "ToggleField",
    "build_array",
    "none_for_unset",
    "start_at_default",
    "title_html",
]
