"""Schema to field dispatch: an ordered list of builders, the first that answers wins.

Like ipywidgets' `interaction.py` (`widget_from_abbrev`): each builder looks at one schema and
returns a `Field` or None; the last, raw JSON, never declines. `boolean` precedes `integer`
because a bool is an int. Before the builders run, `$ref` is followed, `allOf` is merged and a
nullable schema is wrapped in a null toggle, so builders see one plain schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from toolcaller.widgets._field import Field, FieldContext, FormState, Schema, help_text
from toolcaller.widgets._fields_compound import ToggleField, build_array
from toolcaller.widgets._fields_number import build_integer, build_number
from toolcaller.widgets._fields_object import build_object
from toolcaller.widgets._fields_raw import build_raw_json
from toolcaller.widgets._fields_scalar import ScalarField, build_boolean, build_enum
from toolcaller.widgets._fields_text import build_secret, build_string
from toolcaller.widgets._fields_union import build_union
from toolcaller.widgets._schema import (
    is_simple,
    merge_all_of,
    non_null_part,
    resolve,
    root_tools,
    type_union,
)

MAX_DEPTH = 32  # nesting levels built at once; deeper values are edited as raw JSON

FieldBuilder: TypeAlias = Callable[[dict[str, Any], FieldContext], Field | None]

FIELD_BUILDERS: list[FieldBuilder] = [
    build_secret,
    build_enum,
    build_boolean,
    build_integer,
    build_number,
    build_string,
    build_array,
    build_object,
    build_union,
    build_raw_json,
]
"""Tried in order for every (prepared) schema; the first non-None field wins."""


def build_field(schema: Schema, ctx: FieldContext) -> Field:
    """Return the field for a schema; whatever the schema, this does not raise."""
    field = _dispatch(schema, ctx)
    field.source = schema
    return field


def _dispatch(schema: Schema, ctx: FieldContext) -> Field:
    try:
        prepared = _prepare(schema, ctx)
        if prepared is None:
            return build_raw_json(schema, ctx)
        plain, ctx = prepared
        nullable = non_null_part(plain)
        if nullable is not None:
            on = plain.get("default") is not None
            eager = on or is_simple(nullable, ctx)
            return ToggleField(ctx, nullable, nullable=True, on=on, eager=eager)
        plain = type_union(plain) or plain
    except Exception:  # noqa: BLE001 - a schema that cannot be read is edited as raw JSON
        return build_raw_json(schema, ctx)
    for builder in FIELD_BUILDERS:
        try:
            field = builder(plain, ctx)
        except Exception:  # noqa: BLE001 - a keyword a builder cannot read: the next one tries
            continue
        if field is not None:
            return _described(field, plain)
    return _described(build_raw_json(plain, ctx), plain)


def _described(field: Field, schema: dict[str, Any]) -> Field:
    """Show a one-control field's description under it (compound fields head their box)."""
    if isinstance(field, ScalarField):
        field.add_help(help_text(schema))
    return field


def _prepare(schema: Schema, ctx: FieldContext) -> tuple[dict[str, Any], FieldContext] | None:
    """Follow `$ref`s and merge `allOf`; None when the schema is left to raw JSON."""
    if ctx.depth > MAX_DEPTH or not isinstance(schema, dict):
        return None
    found = resolve(schema, ctx)
    if found is None or not isinstance(found[0], dict):
        return None
    plain, ctx = found
    if "allOf" in plain:
        merged = merge_all_of(plain, ctx)
        return None if merged is None else _prepare(merged, ctx)
    return plain, ctx


def build_root(schema: Schema, state: FormState) -> Field:
    """Build the field of a whole form (a root that is not an object starts as `{}`)."""
    resolver, spec = root_tools(schema)
    ctx = FieldContext(build=build_field, resolver=resolver, root=schema, spec=spec, state=state)
    return build_field(schema, ctx)


__all__ = ["FIELD_BUILDERS", "MAX_DEPTH", "FieldBuilder", "build_field", "build_root"]
