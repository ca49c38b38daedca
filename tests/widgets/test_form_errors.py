"""ParamForm errors: the engine's messages, shown once touched, external violations, raw mode."""

from __future__ import annotations

from tests.widgets.form_helpers import at, obj, shown_error
from toolcaller.widgets import ParamForm


class TestErrors:
    SCHEMA = obj(
        {
            "name": {"type": "string", "minLength": 2},
            "a/b": {"type": "integer", "maximum": 5},
            "rows": {
                "type": "array",
                "items": obj({"qty": {"type": "integer", "minimum": 1}}, "qty"),
            },
        },
        "name",
    )

    def test_errors_name_the_pointer_and_show_beside_the_field_once_touched(self) -> None:
        """A violation is in `.errors` at once, and in red under its field once it was edited."""
        form = ParamForm(self.SCHEMA)
        assert form.errors == [("/name", "expected at least 2 characters, got 0")]
        assert shown_error(form, "/name") == ""  # a blank form is not red
        at(form, "/name").value = "A"
        assert "expected at least 2 characters, got 1" in shown_error(form, "/name")
        at(form, "/name").value = "Ada"
        assert form.errors == []
        assert shown_error(form, "/name") == ""

    def test_show_all_errors_shows_the_untouched_ones(self) -> None:
        """After an attempt to call, every error shows, touched or not."""
        form = ParamForm(self.SCHEMA)
        form.show_all_errors()
        assert "expected at least 2 characters" in shown_error(form, "/name")

    def test_pointer_tokens_are_escaped(self) -> None:
        """A property called `a/b` has the pointer `/a~1b`."""
        form = ParamForm(self.SCHEMA, value={"name": "Ada", "a/b": 9})
        assert form.errors == [("/a~1b", "9 is greater than the maximum of 5")]
        at(form, "/a~1b").value = "8"
        assert "maximum" in shown_error(form, "/a~1b")

    def test_errors_inside_array_rows(self) -> None:
        """An error in the second row's field shows under that field."""
        form = ParamForm(self.SCHEMA, value={"name": "Ada", "rows": [{"qty": 1}, {"qty": 1}]})
        at(form, "/rows/1/qty").value = "0"
        assert [p for p, _ in form.errors] == ["/rows/1/qty"]
        assert "minimum" in shown_error(form, "/rows/1/qty")
        assert shown_error(form, "/rows/0/qty") == ""

    def test_top_level_errors_show_at_the_top(self) -> None:
        """An undeclared key has no field: its violation shows in the banner above the fields."""
        form = ParamForm(obj({"a": {"type": "string"}}, "a", additionalProperties=False))
        form.value = {"a": "x", "zzz": 1}
        assert form.errors == [("/zzz", "'zzz' is not an allowed property")]
        form.show_all_errors()
        assert "zzz" in form.error_banner.value

    def test_external_violations_show_until_the_next_edit(self) -> None:
        """`show_errors` shows a server's violations; an edit or `clear_errors` hides them."""
        form = ParamForm(self.SCHEMA, value={"name": "Ada"})
        form.show_errors([("/name", "taken"), {"pointer": "", "message": "try later"}])
        assert "taken" in shown_error(form, "/name")
        assert "try later" in form.error_banner.value
        form.clear_errors()
        assert shown_error(form, "/name") == ""
        form.show_errors([("/name", "taken")])
        at(form, "/name").value = "Bob"
        assert shown_error(form, "/name") == ""

    def test_external_violations_the_form_shows_already_show_once(self) -> None:
        """`show_errors` with the form's own finding (same pointer and message) shows it once."""
        form = ParamForm(self.SCHEMA)
        form.show_all_errors()
        form.show_errors([{"pointer": "/name", "message": "expected at least 2 characters, got 0"},
                          ("/name", "expected at least 2 characters, got 0"), ("/name", "taken")])
        assert shown_error(form, "/name").count("expected at least 2") == 1
        assert "taken" in shown_error(form, "/name")

    def test_a_pointer_below_any_field_goes_to_the_nearest_one(self) -> None:
        """A violation at `/rows/7/x` shows on the rows field, naming the rest of the pointer."""
        form = ParamForm(self.SCHEMA, value={"name": "Ada", "rows": []})
        form.show_errors([("/rows/7/x", "gone")])
        assert "/7/x: gone" in shown_error(form, "/rows")

    def test_draft_07_is_used_when_the_schema_says_so(self) -> None:
        """Under draft-07, `dependentRequired` (a 2019 keyword) checks nothing."""
        body = obj(
            {"a": {"type": "string"}, "b": {"type": "string"}}, dependentRequired={"a": ["b"]}
        )
        value = {"a": "x"}
        assert ParamForm(body, value=value).errors == [("/b", "'b' is required")]
        draft7 = {**body, "$schema": "http://json-schema.org/draft-07/schema#"}
        assert ParamForm(draft7, value=value).errors == []

    def test_raw_json_field_reports_text_that_is_not_json(self) -> None:
        """A raw JSON editor with bad text keeps its last value and reports the syntax error."""
        form = ParamForm(obj({"any": {}}, "any"), value={"any": [1]})
        at(form, "/any").value = "[1, "
        assert form.value == {"any": [1]}
        assert form.errors[0][0] == "/any"
        assert form.errors[0][1].startswith("invalid JSON")
        assert "invalid JSON" in shown_error(form, "/any")


class TestRawMode:
    SCHEMA = obj({"a": {"type": "integer"}, "b": {"type": "string"}}, "a")

    def test_the_toggle_shows_the_params_as_json(self) -> None:
        """Raw mode replaces the fields by one Textarea holding the params."""
        form = ParamForm(self.SCHEMA, value={"a": 1, "b": "x"})
        form.raw_toggle.value = True
        assert form.raw_text in form.children[2].children
        assert form.raw_text.value == '{\n  "a": 1,\n  "b": "x"\n}'

    def test_raw_edits_are_the_value_and_reach_the_fields(self) -> None:
        """Text that parses is `.value` at once and fills the fields when leaving raw mode."""
        form = ParamForm(self.SCHEMA)
        form.raw_toggle.value = True
        form.raw_text.value = '{"a": 7, "b": "seven"}'
        assert form.value == {"a": 7, "b": "seven"}
        form.raw_toggle.value = False
        assert at(form, "/a").value == "7"
        assert form.value == {"a": 7, "b": "seven"}

    def test_invalid_json_keeps_the_last_good_value(self) -> None:
        """Text that does not parse is reported at the top; `.value` keeps the last good one."""
        form = ParamForm(self.SCHEMA, value={"a": 1})
        form.raw_toggle.value = True
        form.raw_text.value = '{"a": 2'
        assert form.value == {"a": 1}
        assert form.errors[-1][1].startswith("invalid JSON")
        assert "invalid JSON" in form.error_banner.value

    def test_schema_errors_show_in_the_banner_in_raw_mode(self) -> None:
        """With the fields hidden, every violation is listed at the top with its pointer."""
        form = ParamForm(self.SCHEMA)
        form.raw_toggle.value = True
        form.raw_text.value = '{"a": "x"}'
        assert "/a: expected an integer, got &quot;x&quot;" in form.error_banner.value

    def test_setting_value_in_raw_mode_rewrites_the_text(self) -> None:
        """`value = ...` while raw shows the new params in the text."""
        form = ParamForm(self.SCHEMA)
        form.raw_toggle.value = True
        form.value = {"a": 3}
        assert form.raw_text.value == '{\n  "a": 3\n}'
