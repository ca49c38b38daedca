"""anyOf/oneOf: a Dropdown picks the variant, whose field is shown below it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import ipywidgets as W

from toolcaller.widgets._field import (
    Field,
    FieldContext,
    FieldMismatch,
    JSONValue,
    help_markup,
    help_text,
    short_json,
)
from toolcaller.widgets._fields_compound import start_at_default
from toolcaller.widgets._fields_raw import swap_widget
from toolcaller.widgets._schema import ANNOTATIONS, is_valid, merge_schemas


class UnionField(Field):
    """`anyOf`/`oneOf`: a Dropdown picks the variant, whose field is shown below it.

    Variant fields are built when first picked and kept, so switching back restores them.
    """

    def __init__(
        self, ctx: FieldContext, variants: list[Any], labels: list[str], description: str
    ) -> None:
        super().__init__(ctx)
        self.variants = variants
        self._fields: dict[int, Field] = {}
        self.chooser = ctx.state.make(
            W.Dropdown,
            options=list(zip(labels, range(len(labels)), strict=True)),
            value=0,
            description=ctx.caption,
        )
        self.control = self.chooser
        self.current = self._field(0)
        notes = ((ctx.state.make(W.HTML, layout="box", value=help_markup(description)),)
                 if description else ())
        self.widget = ctx.state.make(
            W.VBox, layout="field", children=(self.chooser, *notes, self.current.widget)
        )
        self.widget.add_class("tc-field")
        self.chooser.observe(self._on_choose, names="value")

    def value(self) -> JSONValue:
        """Return the chosen variant's value."""
        return self.current.value()

    def set_value(self, value: JSONValue) -> None:
        """Pick the first variant `value` is valid against (or the first that can show it)."""
        valid = [i for i, schema in enumerate(self.variants) if is_valid(schema, value, self.ctx)]
        for index in dict.fromkeys([*valid, *range(len(self.variants))]):
            field = self._field(index)
            try:
                field.set_value(value)
            except FieldMismatch:
                continue
            self.chooser.value = index
            self._show(index)
            return
        raise FieldMismatch(value)

    def child(self, token: str, *, build: bool = False) -> Field | None:
        """Return the chosen variant's sub-field (the choice is transparent to pointers)."""
        return self.current.child(token, build=build)

    def children(self) -> Iterator[tuple[str, Field]]:
        """Yield the chosen variant's sub-fields."""
        return self.current.children()

    def problems(self) -> list[str]:
        """Return the chosen variant's problems."""
        return self.current.problems()

    def _field(self, index: int) -> Field:
        if index not in self._fields:
            base = replace(self.ctx, label="", required=True, depth=self.ctx.depth + 1)
            ctx = base if index == 0 else base.lazy()
            field = ctx.build(self.variants[index], ctx)
            field.on_change(self._changed)
            self._fields[index] = field
        return self._fields[index]

    def _show(self, index: int) -> None:
        field = self._field(index)
        if field is not self.current:
            swap_widget(self.widget, self.current.widget, field.widget)
            self.current = field

    def _on_choose(self, change: Any) -> None:
        self._show(change["new"])
        self._changed()


def build_union(schema: dict[str, Any], ctx: FieldContext) -> Field | None:
    """Build a variant chooser for `anyOf`/`oneOf` (the object's own keywords go to each)."""
    key = next((k for k in ("anyOf", "oneOf") if isinstance(schema.get(k), list)), None)
    if key is None or not schema[key]:
        return None
    base = {k: v for k, v in schema.items() if k != key and k not in ANNOTATIONS}
    variants = [_with_base(base, variant) for variant in schema[key]]
    labels = _unique([variant_label(v, i) for i, v in enumerate(schema[key])])
    field = UnionField(ctx, variants, labels, help_text(schema))
    start_at_default(field, schema)
    return field


def _with_base(base: dict[str, Any], variant: Any) -> Any:
    if not base or variant is False:
        return variant
    if variant is True:
        return base
    merged = merge_schemas([base, variant]) if isinstance(variant, dict) else None
    return variant if merged is None else merged


def variant_label(schema: Any, index: int) -> str:
    """Return a variant's name in the chooser: title, const, `$ref` name or type."""
    if isinstance(schema, dict):
        if isinstance(schema.get("title"), str):
            return str(schema["title"])
        if "const" in schema:
            return short_json(schema["const"])
        if isinstance(schema.get("$ref"), str):
            return str(schema["$ref"]).rstrip("/").rsplit("/", 1)[-1] or "#"
        kind = schema.get("type")
        if isinstance(kind, str):
            return kind
        if isinstance(kind, list) and all(isinstance(k, str) for k in kind):
            return " | ".join(kind)
    return f"option {index + 1}"


def _unique(labels: list[str]) -> list[str]:
    return [
        f"{label} ({i + 1})" if labels.count(label) > 1 else label for i, label in enumerate(labels)
    ]


__all__ = ["UnionField", "build_union", "variant_label"]
