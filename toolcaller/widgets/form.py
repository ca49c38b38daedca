"""ParamForm: a tool's params edited in a form built from its JSON Schema, errors inline.

The form checks the params with the engine's own validator (`ParamsValidator`), so what it
says beside a field is word for word what a call would answer. It shows a field's errors once
the user has edited that field (or `show_all_errors()`, after an attempt to call), never on a
blank form.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from typing import Any

import ipywidgets as W
import traitlets

from toolcaller.core.validation import ParamsValidator
from toolcaller.widgets._field import (
    UNSET,
    Field,
    FormState,
    JSONValue,
    Schema,
    close_widget,
    error_markup,
)
from toolcaller.widgets._fields import build_root
from toolcaller.widgets._fields_compound import ToggleField
from toolcaller.widgets._fields_raw import RawJSONField, dump_json, load_json, put
from toolcaller.widgets._schema import escape_token, split_pointer, to_pointer
from toolcaller.widgets._style import style_widget
from toolcaller.widgets._touched import changed_pointers, is_shown

MAX_SHOWN_MESSAGE = 400  # characters of one inline message (`.errors` keeps them whole)
MAX_FORM_VIOLATIONS = 1_000  # a form lists them all (the engine's envelope stops at 50)
RAW_ROWS = 16
SCHEMA_PROBLEM = "the tool's paramsSchema cannot be used: "


class ParamForm(W.VBox):  # type: ignore[misc]  # ipywidgets is untyped: VBox is Any
    """A form for any JSON Schema whose `value` is the params, checked as you type.

    Fields come from `FIELD_BUILDERS` (see `_fields.py`); what no builder maps is a raw JSON
    textarea, and a "raw JSON" toggle edits the whole params as one JSON text. Building never
    raises, whatever the schema. The `params` trait mirrors `value`: observe it to follow edits,
    set it (or `value`) to fill the form.

    Optional properties have an "include" tick: left off, the key is not sent. One with a
    `default` shows the default pre-filled but is sent only once ticked (editing it ticks it);
    a required property with a default starts at, and sends, the default. Nullable values
    (`type: [..., "null"]`, `anyOf` with null) have a "null" tick. The form carries the CSS
    class `tc-form`.

    Args:
        schema: The params' JSON Schema (2020-12, or the draft its `$schema` names).
        value: Params to show at first; else defaults and empty values.
    """

    valid = traitlets.Bool(
        True, help="Whether a call would get past validation (`is_valid`); observe it to gate a "
                   "Call button: it changes when raw text stops parsing, though `params` does not.")
    params = traitlets.Any(
        default_value=None,
        allow_none=True,
        help=(
            "The params shown (as `value`); set it to fill the form, observe it to follow edits."
        ),
    )

    def __init__(self, schema: Schema, *, value: JSONValue = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_class("tc-form")
        self.schema = schema
        self._state = FormState()
        self._root = build_root(schema, self._state)
        self._external: list[tuple[str, str]] = []
        self._shown: list[Field] = []
        self._validator: ParamsValidator | None = None
        self._syncing = False
        self._raw_good: JSONValue = None
        self._raw_problem = ""
        self._touched: set[str] = set()
        self._show_all = False
        self._last: JSONValue = UNSET
        self.raw_toggle = W.ToggleButton(
            description="raw JSON", icon="code", tooltip="edit the whole params as one JSON text"
        )
        self.raw_text = W.Textarea(rows=RAW_ROWS, layout=W.Layout(width="100%"),
                                   placeholder='{"name": "value"}')
        self.raw_text.add_class("tc-raw")
        self.error_banner = W.HTML()
        """Messages about the whole params (pointer ""), and every message in raw mode."""
        self._body = W.VBox(children=(self._root.widget,))
        self._style = style_widget()
        self.children = (W.HBox(children=(self.raw_toggle,)), self.error_banner, self._body,
                         self._style)
        self._root.on_change(self._on_field_change)
        self.raw_toggle.observe(self._on_raw_toggle, names="value")
        self.raw_text.observe(self._on_raw_text, names="value")
        if isinstance(self._root, RawJSONField) and not _has_default(schema):
            with self._state.quiet():
                self._root.set_value({})
        if value is not None:
            self.value = value
        else:
            self._sync()
        self._last = self.value

    @property
    def root(self) -> Field:
        """The field of the whole params (an object's field holds one field per property)."""
        return self._root

    @property
    def value(self) -> JSONValue:
        """The params: sent properties only; in raw mode, the last text that parsed.

        While raw text does not parse, `.value` is the last text that did and `.errors` says
        so: `is_valid` is False, and the explorer sends nothing.
        """
        if self.raw_toggle.value:
            return copy.deepcopy(self._raw_good)
        found = self._root.value()
        return None if found is UNSET else found

    @value.setter
    def value(self, value: JSONValue) -> None:
        with self._state.quiet():
            self._set_root(value)
        if self.raw_toggle.value:
            self._raw_good = copy.deepcopy(value)
            self._raw_problem = ""
            self._show_raw_text(value)
        self._last = self.value
        self._sync()

    @property
    def errors(self) -> list[tuple[str, str]]:
        """`(json_pointer, message)` for each violation of the current value, in pointer order.

        The messages are the engine's (`ParamsValidator`). Text that is not JSON (a raw JSON
        editor, raw mode) is reported too, as `"invalid JSON: ..."` at its pointer; a schema
        the engine cannot use, as one message at "".
        """
        return [*self._schema_errors(self.value), *self._problems()]

    @property
    def blocking_errors(self) -> list[tuple[str, str]]:
        """The errors a call would fail on: all but a schema the engine cannot use.

        A call with such a schema is still allowed: the engine answers EXECUTION_ERROR saying why.
        """
        return [e for e in self.errors if not (e[0] == "" and e[1].startswith(SCHEMA_PROBLEM))]

    @property
    def is_valid(self) -> bool:
        """Whether a call with these params would get past validation."""
        return not self.blocking_errors

    def show_all_errors(self) -> None:
        """Show every error, touched or not (after an attempt to call with these params)."""
        self._show_all = True
        self._render_errors()

    def on_submit(self, callback: Any) -> None:
        """Call `callback()` when Enter is pressed in one of the form's text boxes."""
        self._state.submit_listeners.append(callback)

    def show_errors(self, violations: Iterable[Any]) -> None:
        """Show violations found elsewhere (a server's INVALID_PARAMS details) at their fields.

        Each violation is a `(pointer, message)` pair or a mapping with `pointer` (or `path`,
        `instancePath`) and `message`. They stay shown until the next edit or `clear_errors()`.
        A violation the form already shows (the same pointer and message) is shown once.
        """
        self._external = list(_read_violations(violations))
        self._render_errors()

    def clear_errors(self) -> None:
        """Hide every message shown (the next edit checks and shows again)."""
        self._external = []
        self._hide_errors()

    def close(self) -> None:
        """Close the form and every widget it made (a closed form cannot be shown again)."""
        state = getattr(self, "_state", None)  # absent when __init__ failed half way
        if state is not None:
            state.close_all()
            for widget in (self.raw_toggle, self.raw_text, self.error_banner, *self.children):
                close_widget(widget)
            close_widget(self.layout)
        super().close()

    def field_at(self, pointer: str) -> Field | None:
        """Return the field a JSON pointer names (inside its include/null toggles), or None.

        A lazy level on the way is built; editing a field inside a toggle that is off
        switches the toggle on, as it does for a user.
        """
        field = self.toggle_at(pointer)
        while isinstance(field, ToggleField):
            field = field.inner_field()
        return field

    def toggle_at(self, pointer: str) -> Field | None:
        """Return the field a JSON pointer names as stored: an optional's or a nullable's toggle."""
        field = self._root
        for token in split_pointer(pointer):
            found = field.child(token, build=True)
            if found is None:
                return None
            field = found
        return field

    def widget_at(self, pointer: str) -> W.Widget | None:
        """Return the control of the field a JSON pointer names (set its `value` as a user)."""
        field = self.field_at(pointer)
        return None if field is None else field.control

    # --- internals ---------------------------------------------------------------------

    def _set_root(self, value: JSONValue) -> None:
        self._root = put(self._root, value, self._body, self._on_field_change)

    def _sync(self) -> None:
        value = self.value
        self._syncing = True
        try:
            self.params = value
        finally:
            self._syncing = False
        self.valid = self.is_valid
        self._render_errors()

    @traitlets.observe("params")
    def _on_params(self, change: Any) -> None:
        if not self._syncing:
            self.value = change["new"]

    def _on_field_change(self) -> None:
        if not self._state.is_quiet:
            self._external = []
            self._touch()
            self._sync()

    def _touch(self) -> None:
        """Remember which pointers the user changed: their errors show from now on."""
        now = self.value
        self._touched.update(changed_pointers(self._last, now))
        self._last = copy.deepcopy(now)

    def _on_raw_toggle(self, change: Any) -> None:
        if change["new"]:
            self._raw_good = self._root.value()
            self._raw_problem = ""
            self._show_raw_text(self._raw_good)
            self._body.children = (self.raw_text,)
            self._sync()
        else:
            self._body.children = (self._root.widget,)
            self.value = self._raw_good

    def _show_raw_text(self, value: JSONValue) -> None:
        with self._state.quiet():
            self.raw_text.value = dump_json(value)

    def _on_raw_text(self, change: Any) -> None:
        if self._state.is_quiet or not self.raw_toggle.value:
            return
        try:
            self._raw_good = load_json(change["new"])
            self._raw_problem = ""
        except ValueError as exc:
            self._raw_problem = f"invalid JSON: {exc}"
        self._external = []
        self._touch()
        self._sync()

    def _schema_errors(self, value: JSONValue) -> list[tuple[str, str]]:
        if self._validator is None:
            self._validator = ParamsValidator(self.schema)
        if self._validator.problem is not None:
            return [("", SCHEMA_PROBLEM + self._validator.problem)]
        found = self._validator.violations(value, limit=MAX_FORM_VIOLATIONS)
        return [(v["pointer"], v["message"]) for v in found]

    def _problems(self) -> list[tuple[str, str]]:
        if self.raw_toggle.value:
            return [("", self._raw_problem)] if self._raw_problem else []
        return list(_walk_problems(self._root, ""))

    def _render_errors(self) -> None:
        self._hide_errors()
        problems = set(self._problems())
        shown = [e for e in self.errors
                 if e in problems or self._show_all or is_shown(e[0], self._touched)]
        grouped: dict[str, list[str]] = {}
        for pointer, message in dict.fromkeys([*shown, *self._external]):
            grouped.setdefault(pointer, []).append(_cut(message))
        top: list[str] = []
        for pointer, messages in grouped.items():
            located = None if self.raw_toggle.value else self._locate(pointer)
            if located is None:
                top.extend(f"{pointer}: {m}" if pointer else m for m in messages)
                continue
            field, rest = located
            field.show_error("\n".join(f"{rest}: {m}" if rest else m for m in messages))
            self._shown.append(field)
        self.error_banner.value = error_markup("\n".join(top))

    def _hide_errors(self) -> None:
        for field in self._shown:
            field.show_error("")
        self._shown = []
        self.error_banner.value = ""

    def _locate(self, pointer: str) -> tuple[Field, str] | None:
        """Return the deepest built field on a pointer and the part of it below that field."""
        tokens = split_pointer(pointer)
        if not tokens:
            return None
        field = self._root
        for index, token in enumerate(tokens):
            found = field.child(token)
            if found is None:  # below the root's fields: the banner says it, with its pointer
                return (field, to_pointer(tokens[index:])) if index else None
            field = found
        return field, ""


def _walk_problems(field: Field, pointer: str) -> Iterator[tuple[str, str]]:
    for problem in field.problems():
        yield pointer, problem
    for token, child in field.children():
        yield from _walk_problems(child, f"{pointer}/{escape_token(token)}")


def _read_violations(violations: Iterable[Any]) -> Iterator[tuple[str, str]]:
    for item in violations or ():
        if isinstance(item, dict):
            pointer = next((item[k] for k in ("pointer", "path", "instancePath") if k in item), "")
            yield str(pointer), str(item.get("message", item))
        elif isinstance(item, list | tuple) and len(item) == 2:
            yield str(item[0]), str(item[1])
        else:
            yield "", str(item)


def _has_default(schema: Any) -> bool:
    return isinstance(schema, dict) and "default" in schema


def _cut(message: str) -> str:
    return message if len(message) <= MAX_SHOWN_MESSAGE else message[:MAX_SHOWN_MESSAGE] + "…"


__all__ = ["ParamForm"]
