"""ParamForm: widgets per schema feature, optional/nullable/defaults, errors, raw JSON, observe."""

from __future__ import annotations

from typing import Any

import pytest

from tests.widgets.form_helpers import at, field, obj, toggle
from toolcaller.widgets import ParamForm
from toolcaller.widgets._fields import FIELD_BUILDERS


def help_lines(form: ParamForm, pointer: str) -> str:
    """The description shown under the field at `pointer` ("" when none)."""
    found = field(form, pointer)
    return " ".join(child.value for child in found.widget.children
                    if type(child).__name__ == "HTML" and 'class="tc-help"' in child.value)


WIDGETS: list[tuple[str, dict[str, Any], str]] = [
    ("text", {"type": "string"}, "Text"),
    ("long-text", {"type": "string", "maxLength": 500}, "Textarea"),
    ("textarea-format", {"type": "string", "format": "textarea"}, "Textarea"),
    ("text-media", {"type": "string", "contentMediaType": "text/markdown"}, "Textarea"),
    ("multi-line-description", {"type": "string", "description": "A multi-line note"}, "Textarea"),
    ("write-only", {"type": "string", "writeOnly": True}, "Password"),
    ("password-format", {"type": "string", "format": "password"}, "Password"),
    ("date", {"type": "string", "format": "date"}, "DatePicker"),
    ("date-time", {"type": "string", "format": "date-time"}, "DatetimePicker"),
    ("integer", {"type": "integer"}, "NumberBox"),
    ("bounded-integer", {"type": "integer", "minimum": 0}, "NumberBox"),
    ("number", {"type": "number"}, "NumberBox"),
    ("bounded-number", {"type": "number", "maximum": 1.5}, "NumberBox"),
    ("boolean", {"type": "boolean"}, "Checkbox"),
    ("enum", {"enum": ["a", 1, None]}, "Dropdown"),
    ("string-enum-array", {"type": "array", "items": {"enum": ["a", "b"]}}, "TagsInput"),
    ("any-of", {"anyOf": [{"type": "string"}, {"type": "integer"}]}, "Dropdown"),
    ("anything", {}, "Textarea"),
    ("tuple", {"type": "array", "prefixItems": [{"type": "string"}]}, "Textarea"),
    ("array", {"type": "array", "items": {"type": "string"}}, "VBox"),
    ("nested-object", obj({"x": {"type": "integer"}}), "VBox"),
]


class TestWidgetChoice:
    @pytest.mark.parametrize(
        ("schema", "kind"), [(s, k) for _, s, k in WIDGETS], ids=[name for name, _, _ in WIDGETS]
    )
    def test_each_schema_feature_gets_its_control(self, schema: dict[str, Any], kind: str) -> None:
        """The control at a property's pointer is the widget its schema calls for."""
        form = ParamForm(obj({"p": schema}, "p"))
        assert type(at(form, "/p")).__name__ == kind

    def test_builders_run_in_the_documented_order(self) -> None:
        """secret, enum/const, boolean, integer, number, string, array, object, union, raw."""
        names = [builder.__name__ for builder in FIELD_BUILDERS]
        assert names == [
            "build_secret",
            "build_enum",
            "build_boolean",
            "build_integer",
            "build_number",
            "build_string",
            "build_array",
            "build_object",
            "build_union",
            "build_raw_json",
        ]

    def test_const_is_read_only_and_always_sent(self) -> None:
        """A const shows its JSON in a disabled box and is part of the value."""
        form = ParamForm(obj({"kind": {"const": "circle"}, "v": {"const": 1}}, "kind"))
        control = at(form, "/kind")
        assert control.disabled
        assert control.value == '"circle"'
        assert form.value == {"kind": "circle", "v": 1}

    def test_bounds_are_said_not_enforced(self) -> None:
        """Bounds are in the placeholder; a value outside them stays and is reported."""
        form = ParamForm(
            obj({"n": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10}}, "n")
        )
        control = at(form, "/n")
        assert (control.placeholder, control.value) == ("integer, 0 (excluded) to 10 (excluded)",
                                                        "")
        control.value = "10"
        assert form.value == {"n": 10}
        assert form.errors == [("/n", "10 must be less than 10")]

    def test_an_integer_stays_an_int(self) -> None:
        """What a user types in an integer box reads back as an `int`."""
        form = ParamForm(obj({"n": {"type": "integer", "minimum": 0, "maximum": 9}}, "n"))
        at(form, "/n").value = "5"
        assert form.value == {"n": 5}
        assert type(form.value["n"]) is int

    def test_required_fields_start_empty(self) -> None:
        """No number made up, no option preselected: the engine's "required" is what is said."""
        form = ParamForm(obj({"n": {"type": "integer"}, "e": {"enum": ["a", "b"]}}, "n", "e"))
        assert (at(form, "/n").value, at(form, "/e").value) == ("", None)
        assert form.value == {}
        assert form.errors == [("/e", "'e' is required"), ("/n", "'n' is required")]

    def test_an_optional_boolean_is_one_dropdown(self) -> None:
        """Not two checkboxes: "not set" (left out), true or false, its default named."""
        form = ParamForm(obj({"b": {"type": "boolean", "default": False}}))
        control = at(form, "/b")
        assert type(control).__name__ == "Dropdown"
        assert [label for label, _ in control.options] == ["not set (default false)", "true",
                                                           "false"]
        assert form.value == {}
        control.value = 2
        assert form.value == {"b": False}
        form.value = {}
        assert control.value == 0

    def test_mixed_enum_keeps_value_types(self) -> None:
        """Picking `1`, `"1"` or `true` from a mixed enum gives exactly that value."""
        form = ParamForm(obj({"e": {"enum": [1, "1", True, 1.0]}}, "e"))
        dropdown = at(form, "/e")
        assert [label for label, _ in dropdown.options] == ["1", '"1"', "true", "1.0"]
        picked = []
        for index in range(4):
            dropdown.value = index
            picked.append(form.value["e"])
        assert [type(v) for v in picked] == [int, str, bool, float]

    def test_no_raw_regex_is_shown(self) -> None:
        """A pattern is not the placeholder (a person reads it); an example is."""
        form = ParamForm(obj({"code": {"type": "string", "pattern": "^[A-Z]+$"},
                              "tag": {"type": "string", "examples": ["ABC"]}}))
        assert at(form, "/code").placeholder == ""
        assert at(form, "/tag").placeholder == "e.g. ABC"


class TestLabels:
    def test_required_fields_have_an_asterisk(self) -> None:
        """The label of a required field ends with `*`; an optional one has none."""
        form = ParamForm(obj({"a": {"type": "string"}, "b": {"type": "string"}}, "a"))
        assert at(form, "/a").description == "a *"
        assert at(form, "/b").description == "b"

    def test_title_is_the_label_and_the_description_shows_under_it(self) -> None:
        """`title` labels the field; `description` and `default` show under it, not as a tip."""
        form = ParamForm(
            obj(
                {
                    "n": {
                        "type": "integer",
                        "title": "Count",
                        "description": "How many.",
                        "default": 3,
                    }
                }
            )
        )
        control = at(form, "/n")
        assert control.description == "Count"
        assert control.tooltip == "Count"  # the name: the description is shown, not hidden
        assert "How many.<br>default: 3" in help_lines(form, "/n")
        bare = ParamForm(obj({"x": {"type": "string"}}))
        assert help_lines(bare, "/x") == ""  # nothing said, nothing shown (no "null")

    def test_nested_object_has_a_bordered_box_with_a_heading(self) -> None:
        """A nested object sits in a bordered box headed by its label."""
        form = ParamForm(obj({"inner": obj({"x": {"type": "integer"}}, "x")}, "inner"))
        box = at(form, "/inner")
        assert "tc-nested" in box._dom_classes
        assert '<div class="tc-label">inner *</div>' in box.children[0].value


class TestOptionalAndDefaults:
    SCHEMA = obj(
        {
            "name": {"type": "string"},
            "size": {"type": "integer", "default": 10},
            "mode": {"enum": ["fast", "slow"], "default": "slow"},
            "opts": obj({"x": {"type": "integer"}}, "x"),
        },
        "mode",
    )

    def test_unset_optional_fields_are_left_out(self) -> None:
        """A fresh form sends required fields only (here at their default)."""
        assert ParamForm(self.SCHEMA).value == {"mode": "slow"}

    def test_the_default_is_visible_but_not_sent_until_set(self) -> None:
        """An optional field shows its default pre-filled; the key is sent once it is ticked."""
        form = ParamForm(self.SCHEMA)
        assert at(form, "/size").value == "10"
        assert "size" not in form.value
        toggle(form, "/size").tick.value = True
        assert form.value["size"] == 10

    def test_editing_an_optional_field_includes_it(self) -> None:
        """Typing in an optional field ticks its include box."""
        form = ParamForm(self.SCHEMA)
        at(form, "/name").value = "Ada"
        assert toggle(form, "/name").tick.value
        assert form.value == {"mode": "slow", "name": "Ada"}

    def test_unticking_leaves_the_field_out_again(self) -> None:
        """Unticking include removes the key and keeps what was typed for later."""
        form = ParamForm(self.SCHEMA)
        at(form, "/name").value = "Ada"
        toggle(form, "/name").tick.value = False
        assert "name" not in form.value
        assert at(form, "/name").value == "Ada"

    def test_optional_object_is_built_when_first_needed(self) -> None:
        """An optional object has no sub-fields until it is switched on or reached."""
        form = ParamForm(self.SCHEMA)
        assert toggle(form, "/opts").inner is None
        at(form, "/opts/x").value = "4"
        assert form.value["opts"] == {"x": 4}

    def test_the_include_tick_says_include_and_names_its_field(self) -> None:
        """The include box is labelled "include NAME" (its accessible name and tooltip too)."""
        form = ParamForm(self.SCHEMA)
        tick = toggle(form, "/name").tick
        assert (tick.description, tick.indent) == ("include name", False)
        assert not tick.description_allow_html  # a raw-HTML label would show as its tooltip
        assert "tc-include-tick" in tick._dom_classes
        assert "tc-toggled" in toggle(form, "/name").widget._dom_classes

    def test_a_field_left_out_is_dimmed(self) -> None:
        """An optional field that is not sent is greyed out; ticked, it is not."""
        form = ParamForm(self.SCHEMA)
        inner = toggle(form, "/name").inner
        assert "tc-off" in inner.widget._dom_classes
        at(form, "/name").value = "Ada"
        assert "tc-off" not in inner.widget._dom_classes

    def test_setting_a_value_without_a_key_unticks_it(self) -> None:
        """`value = {...}` without an optional key switches that field off."""
        form = ParamForm(self.SCHEMA, value={"mode": "fast", "name": "x"})
        form.value = {"mode": "fast"}
        assert not toggle(form, "/name").tick.value


class TestNullable:
    SCHEMA = obj(
        {
            "n": {"type": ["integer", "null"]},
            "s": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": "hi"},
        },
        "n",
        "s",
    )

    def test_nullable_starts_null_unless_a_default_says_otherwise(self) -> None:
        """No default: null is ticked; a non-null default is shown and sent."""
        assert ParamForm(self.SCHEMA).value == {"n": None, "s": "hi"}

    def test_null_can_be_set_explicitly(self) -> None:
        """Ticking null sends null."""
        form = ParamForm(self.SCHEMA)
        toggle(form, "/s").tick.value = True
        assert form.value["s"] is None

    def test_editing_a_null_field_unticks_null(self) -> None:
        """Typing a number into a null field sends the number."""
        form = ParamForm(self.SCHEMA)
        at(form, "/n").value = "12"
        assert form.value["n"] == 12
        assert not toggle(form, "/n").tick.value

    def test_the_null_tick_is_named_after_its_field(self) -> None:
        """The null box's label names its field, so that two null boxes are told apart."""
        form = ParamForm(self.SCHEMA)
        assert [toggle(form, p).tick.description for p in ("/n", "/s")] == ["n: null", "s: null"]

    def test_optional_and_nullable_have_both_ticks(self) -> None:
        """Optional + nullable: leave it out, send null, or send a value."""
        form = ParamForm(obj({"v": {"type": ["string", "null"]}}))
        assert form.value == {}
        outer = toggle(form, "/v")
        outer.tick.value = True
        assert form.value == {"v": None}
        outer.inner.tick.value = False
        assert form.value == {"v": ""}


class TestArrays:
    SCHEMA = obj(
        {
            "tags": {"type": "array", "items": {"type": "string"}},
            "rows": {"type": "array", "items": obj({"name": {"type": "string"}}, "name")},
            "colours": {"type": "array", "uniqueItems": True, "items": {"enum": ["red", "green"]}},
        },
        "tags",
        "rows",
        "colours",
    )

    def test_add_and_remove_rows(self) -> None:
        """Add appends an item field; remove deletes that item and later ones move up."""
        form = ParamForm(self.SCHEMA)
        tags = field(form, "/tags")
        for text in ("a", "b", "c"):
            tags.add_button.click()
            at(form, f"/tags/{len(tags.rows) - 1}").value = text
        assert form.value["tags"] == ["a", "b", "c"]
        tags.rows[1].remove_button.click()
        assert form.value["tags"] == ["a", "c"]
        assert at(form, "/tags/1").value == "c"

    def test_rows_of_objects_are_nested_forms(self) -> None:
        """Each row of an array of objects holds the object's fields."""
        form = ParamForm(self.SCHEMA)
        field(form, "/rows").add_button.click()
        at(form, "/rows/0/name").value = "first"
        assert form.value["rows"] == [{"name": "first"}]

    def test_setting_fewer_items_removes_rows(self) -> None:
        """Setting a shorter list drops the extra rows."""
        form = ParamForm(self.SCHEMA, value={"tags": ["a", "b", "c"], "rows": [], "colours": []})
        form.value = {"tags": ["z"], "rows": [], "colours": []}
        assert len(field(form, "/tags").rows) == 1

    def test_enum_arrays_use_tags(self) -> None:
        """An array of string enums is a TagsInput keeping the user's order."""
        form = ParamForm(self.SCHEMA)
        tags = at(form, "/colours")
        assert (tags.allowed_tags, tags.allow_duplicates) == (["red", "green"], False)
        tags.value = ["green", "red"]
        assert form.value["colours"] == ["green", "red"]

    def test_free_key_objects_have_entries(self) -> None:
        """`additionalProperties` alone gives key/value rows."""
        form = ParamForm({"type": "object", "additionalProperties": {"type": "integer"}})
        entries = field(form, "")
        entries.add_button.click()
        entries.rows[0].key.value = "count"
        at(form, "/count").value = "3"
        assert form.value == {"count": 3}


class TestUnions:
    SCHEMA = obj(
        {
            "shape": {
                "oneOf": [
                    {
                        "title": "Circle",
                        **obj({"r": {"type": "number"}}, "r", additionalProperties=False),
                    },
                    {
                        "title": "Square",
                        **obj({"side": {"type": "integer"}}, "side", additionalProperties=False),
                    },
                ]
            }
        },
        "shape",
    )

    def test_the_chooser_switches_the_variant(self) -> None:
        """Picking a variant shows its fields; switching back restores what was typed."""
        form = ParamForm(self.SCHEMA)
        chooser = at(form, "/shape")
        assert [label for label, _ in chooser.options] == ["Circle", "Square"]
        at(form, "/shape/r").value = "2.5"
        chooser.value = 1
        at(form, "/shape/side").value = "4"
        assert form.value == {"shape": {"side": 4}}
        chooser.value = 0
        assert form.value == {"shape": {"r": 2.5}}

    def test_setting_a_value_picks_the_first_variant_it_is_valid_for(self) -> None:
        """`{"side": 3}` is only a Square, so Square is picked."""
        form = ParamForm(self.SCHEMA)
        form.value = {"shape": {"side": 3}}
        assert at(form, "/shape").value == 1
        assert form.errors == []

    def test_scalar_variants(self) -> None:
        """For `anyOf: [string, integer]`, an int picks the integer variant."""
        form = ParamForm(obj({"u": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}, "u"))
        form.value = {"u": 5}
        assert at(form, "/u").value == 1
        assert form.value == {"u": 5}


TREE = {
    "$defs": {
        "node": obj(
            {
                "name": {"type": "string"},
                "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
            "name",
        )
    },
    "$ref": "#/$defs/node",
}


class TestRecursion:
    def test_recursive_levels_are_built_on_demand(self) -> None:
        """A tree schema builds one level, and the next when a row is added."""
        form = ParamForm(TREE)
        assert form.field_at("/kids/0") is None
        field(form, "/kids").add_button.click()
        at(form, "/kids/0/name").value = "leaf"
        assert form.value == {"name": "", "kids": [{"name": "leaf"}]}


class TestObserve:
    def test_params_trait_fires_on_every_user_change(self) -> None:
        """`observe(..., names="params")` sees each edit."""
        form = ParamForm(obj({"a": {"type": "integer"}}, "a"))
        seen: list[Any] = []
        form.observe(lambda change: seen.append(change["new"]), names="params")
        at(form, "/a").value = "1"
        at(form, "/a").value = "2"
        assert seen == [{"a": 1}, {"a": 2}]

    def test_setting_params_fills_the_form(self) -> None:
        """Assigning the trait is the same as assigning `value`."""
        form = ParamForm(obj({"a": {"type": "integer"}}, "a"))
        form.params = {"a": 9}
        assert at(form, "/a").value == "9"

    def test_programmatic_set_notifies_once(self) -> None:
        """Setting `value` notifies observers once, not once per field."""
        form = ParamForm(obj({"a": {"type": "integer"}, "b": {"type": "string"}}, "a", "b"))
        seen: list[Any] = []
        form.observe(lambda change: seen.append(change["new"]), names="params")
        form.value = {"a": 1, "b": "x"}
        assert seen == [{"a": 1, "b": "x"}]

    def test_unknown_pointers_find_nothing(self) -> None:
        """`widget_at` returns None for a pointer that names no field."""
        form = ParamForm(obj({"a": {"type": "integer"}}))
        assert form.widget_at("/nope") is None
        assert form.widget_at("/a/0") is None

    def test_close_closes_every_widget_made(self) -> None:
        """`close()` closes the fields' widgets too, shown or not."""
        form = ParamForm(obj({"a": {"type": "integer"}, "u": {"anyOf": [{"type": "string"}]}}))
        control, chooser = at(form, "/a"), at(form, "/u")
        form.close()
        assert control.comm is None
        assert chooser.comm is None

    def test_the_form_renders_without_a_kernel(self) -> None:
        """The form is a VBox with a widget-view mime bundle."""
        form = ParamForm(obj({"a": {"type": "integer"}}))
        bundle = form._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in bundle
