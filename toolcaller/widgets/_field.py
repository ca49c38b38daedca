"""Field, the unit a form is made of: one widget, its value, its inline error."""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias

import ipywidgets as W

JSONValue: TypeAlias = Any
"""Any value that `json.dumps` accepts (the same alias as the package's own)."""

Schema: TypeAlias = dict[str, Any] | bool
"""A JSON Schema: an object, or `true`/`false`."""

LABEL_WIDTH = "160px"  # a label beside its control (the form's style puts it above instead)


class _Unset:
    """The type of `UNSET`: a property that is left out of the params."""

    _instance: _Unset | None = None

    def __new__(cls) -> _Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET = _Unset()
"""Value of an optional field that is switched off: its key is left out of the params."""


class FieldMismatch(Exception):
    """A field cannot show a value (wrong type, not among its options)."""


class FormState:
    """What all fields of one form share: a quiet flag and widget layouts and styles.

    Layout and style widgets are shared inside one form because creating them is half the cost of
    a control; nothing in the form mutates a shared one.
    """

    def __init__(self) -> None:
        self._quiet = 0
        self._layouts: dict[str, W.Layout] = {}
        self._styles: dict[type[Any], W.Widget] = {}
        self.widgets: list[W.Widget] = []
        """Every widget made for the form, shown or not (for `close_all`)."""
        self.submit_listeners: list[Callable[[], None]] = []
        """Called when Enter is pressed in a one-line text box of the form."""

    @property
    def is_quiet(self) -> bool:
        """Whether the form is being set from Python, so changes are not the user's."""
        return self._quiet > 0

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Mark the changes made inside the block as programmatic."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    def layout(self, name: str) -> W.Layout:
        """Return the shared layout called `name` (see `LAYOUTS`)."""
        if name not in self._layouts:
            self._layouts[name] = W.Layout(**LAYOUTS[name])
        return self._layouts[name]

    def make(self, cls: type[Any], layout: str = "control", **kwargs: Any) -> Any:
        """Create a widget of `cls` with the shared layout and (for labelled widgets) style."""
        traits: dict[str, Any] = cls.class_traits() if hasattr(cls, "class_traits") else {}
        style_cls = traits.get("style")
        if style_cls is not None and "style" not in kwargs:
            if cls not in self._styles:
                klass = style_cls.klass
                extra = (
                    {"description_width": LABEL_WIDTH}
                    if "description_width" in (klass.class_trait_names())
                    else {}
                )
                self._styles[cls] = klass(**extra)
            kwargs["style"] = self._styles[cls]
        widget = cls(layout=self.layout(layout), **kwargs)
        self.widgets.append(widget)
        if isinstance(widget, W.Text):  # Password and number boxes too
            widget.on_msg(self._on_text_message)
        return widget

    def _on_text_message(self, widget: W.Widget, content: Any, buffers: Any) -> None:
        # The front end sends {"event": "submit"} when Enter is pressed in a Text.
        if isinstance(content, dict) and content.get("event") == "submit":
            for listener in list(self.submit_listeners):
                listener()

    def close_all(self) -> None:
        """Close every widget made for the form, with its layout and style."""
        for widget in self.widgets:
            close_widget(widget)
        self.widgets.clear()


def close_widget(widget: W.Widget) -> None:
    """Close a widget and its layout and style (closing twice is harmless)."""
    for part in (getattr(widget, "layout", None), getattr(widget, "style", None), widget):
        if isinstance(part, W.Widget):
            part.close()


LAYOUTS: dict[str, dict[str, str]] = {
    "control": {"width": "100%", "max_width": "640px"},
    "wide": {"width": "100%", "max_width": "640px"},
    "box": {},
    "field": {"width": "100%"},
    "nested": {},  # bordered by the `tc-nested` class (the theme's border colour)
    "tick": {"width": "auto"},
    "button": {"width": "auto"},
    "key": {"width": "12em"},
}


BuildFn: TypeAlias = Callable[["Schema", "FieldContext"], "Field"]


@dataclass(frozen=True)
class FieldContext:
    """Where a field sits: the root schema's resolver, its label, depth and shared state."""

    build: BuildFn
    """Builds the field for a sub-schema (the dispatch in `_fields.build_field`)."""
    resolver: Any
    """A `referencing` resolver whose base is the schema the field's keywords came from."""
    root: Any
    """The root schema (its `$defs` and dialect serve to check a value against a part)."""
    spec: Any
    """The `referencing` specification of that dialect (reads `$id` in sub-schemas)."""
    state: FormState
    label: str = ""
    required: bool = False
    depth: int = 0
    refs: tuple[int, ...] = field(default=())
    """`$ref`s expanded since the last lazy boundary: one seen twice would recurse forever."""

    def child(self, label: str, *, required: bool = True) -> FieldContext:
        """Return the context of a nested field one level down."""
        return replace(self, label=label, required=required, depth=self.depth + 1)

    def lazy(self) -> FieldContext:
        """Return this context for a field built later, on a user's or a value's demand."""
        return replace(self, refs=())

    @property
    def caption(self) -> str:
        """The label as shown: with an asterisk when the field is required."""
        return f"{self.label} *" if self.required and self.label else self.label


class Field:
    """One form field: `widget` to display, `value()`/`set_value()`, `show_error()`.

    `control` is the widget a user edits (what tests set); compound fields return their
    children from `child()`, so a JSON pointer finds the field it names.
    """

    widget: W.Box
    control: W.Widget
    source: Any = None
    """The schema the field was built from (set by `build_field`)."""
    is_fallback = False
    """Whether the field stands in for one that could not show a value."""
    accepts_unset = False
    """Whether `set_value(UNSET)` empties the field (a property left out of the params)."""

    def __init__(self, ctx: FieldContext) -> None:
        self.ctx = ctx
        self._listeners: list[Callable[[], None]] = []
        self._error: W.HTML | None = None

    def value(self) -> JSONValue:
        """Return the value shown, or `UNSET` for an optional field that is off."""
        raise NotImplementedError

    def set_value(self, value: JSONValue) -> None:
        """Show `value`; raise `FieldMismatch` when this field cannot hold it."""
        raise NotImplementedError

    def show_error(self, message: str) -> None:
        """Show `message` in red under the field; an empty message hides it."""
        if self._error is None:
            if not message:
                return
            self._error = self.ctx.state.make(W.HTML, layout="box")
            self.widget.children = (*self.widget.children, self._error)
        self._error.value = error_markup(message)

    def add_help(self, text: str) -> None:
        """Show `text` (a description) in small print under the field's control."""
        if text:
            note = self.ctx.state.make(W.HTML, layout="box", value=help_markup(text))
            self.widget.children = (*self.widget.children, note)

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call `callback()` whenever the field's value changes."""
        self._listeners.append(callback)

    def child(self, token: str, *, build: bool = False) -> Field | None:
        """Return the sub-field for one JSON pointer token (`build` builds lazy ones)."""
        return None

    def children(self) -> Iterator[tuple[str, Field]]:
        """Yield `(token, field)` for every sub-field built so far."""
        return iter(())

    def problems(self) -> list[str]:
        """Return what is wrong here that JSON Schema cannot see (text that is not JSON)."""
        return []

    def _changed(self, *_: object) -> None:
        for callback in self._listeners:
            callback()


def error_markup(message: str) -> str:
    """Return the HTML of an inline error (an empty string for no error)."""
    if not message:
        return ""
    lines = "<br>".join(html.escape(line) for line in message.splitlines())
    return f'<div class="tc-error">{lines}</div>'


def help_markup(text: str) -> str:
    """Return the HTML of a field's description (small print under its control)."""
    lines = "<br>".join(html.escape(line) for line in text.splitlines())
    return f'<div class="tc-help">{lines}</div>'


def help_text(schema: dict[str, Any]) -> str:
    """Return what a field says of itself: its description, then its default."""
    parts = [str(schema["description"])] if isinstance(schema.get("description"), str) else []
    if "default" in schema:
        parts.append(f"default: {short_json(schema['default'])}")
    return "\n".join(part for part in parts if part.strip())


def short_json(value: JSONValue, limit: int = 60) -> str:
    """Return `value` as compact JSON, cut to `limit` characters."""
    import json

    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_json_equal(a: JSONValue, b: JSONValue) -> bool:
    """Return whether two JSON values are equal as JSON Schema sees it (`true` is not `1`)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(is_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(is_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)
