"""Helpers the ParamForm tests share: find a control, field or toggle, read an inline error."""

from __future__ import annotations

from typing import Any

from toolcaller.widgets import ParamForm


def at(form: ParamForm, pointer: str) -> Any:
    """The control at `pointer`, which must exist."""
    control = form.widget_at(pointer)
    assert control is not None, pointer
    return control


def field(form: ParamForm, pointer: str) -> Any:
    """The field at `pointer` (inside its toggles), which must exist."""
    found = form.field_at(pointer)
    assert found is not None, pointer
    return found


def toggle(form: ParamForm, pointer: str) -> Any:
    """The include/null toggle at `pointer`, which must exist."""
    found = form.toggle_at(pointer)
    assert found is not None, pointer
    return found


def obj(properties: dict[str, Any], *required: str, **extra: Any) -> dict[str, Any]:
    """An object schema with these properties, required names and other keywords."""
    return {"type": "object", "properties": properties, "required": list(required), **extra}


def shown_error(form: ParamForm, pointer: str) -> str:
    """The text of the inline error under the field at `pointer` ("" when none)."""
    found = field(form, pointer)
    boxes = [found.widget, *getattr(found.widget, "children", ())]
    texts = [
        child.value
        for box in boxes
        for child in getattr(box, "children", ())
        if type(child).__name__ == "HTML" and 'class="tc-error"' in child.value
    ]
    return " ".join(texts)
