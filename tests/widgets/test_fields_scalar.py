"""Number fields: what a user types is what is sent, out of range or not; empty is left out."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolcaller.widgets import ParamForm
from toolcaller.widgets._fields_number import NumberBox

NUMBER = {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}
BOUNDED = {"type": "object", "required": ["count"],
           "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 100}}}


def _type_into(form: ParamForm, pointer: str, text: Any) -> None:
    """Set a control as the browser does when a user types."""
    control = form.widget_at(pointer)
    assert control is not None, pointer
    control.value = text


class TestNumberTypedByAUser:
    @pytest.mark.parametrize(("typed", "sent"), [("2", 2), ("2.0", 2.0), ("-7", -7), ("0", 0),
                                                 ("2.5", 2.5), ("1e-3", 1e-3), (" 42 ", 42)],
                             ids=["2", "2.0", "-7", "0", "2.5", "0.001", "spaces"])
    def test_the_number_sent_is_the_number_typed(self, typed: str, sent: float) -> None:
        """`2` is sent as the integer 2, `2.0` as the number 2.0: as typed, nothing rewritten."""
        form = ParamForm(NUMBER)
        _type_into(form, "/a", typed)
        assert form.value == {"a": sent}
        assert type(form.value["a"]) is type(sent)
        assert form.params == {"a": sent}

    def test_the_json_sent_is_what_was_typed(self) -> None:
        """The params as JSON read `{"a": 2}` for a typed `2`."""
        form = ParamForm(NUMBER)
        _type_into(form, "/a", "2")
        assert json.dumps(form.value) == '{"a": 2}'

    def test_out_of_range_stays_as_typed_and_is_reported(self) -> None:
        """500 in a 1..100 box stays 500 (no clamping to 100) and the engine's message says so."""
        form = ParamForm(BOUNDED)
        _type_into(form, "/count", "500")
        assert form.value == {"count": 500}
        assert form.errors == [("/count", "500 is greater than the maximum of 100")]
        _type_into(form, "/count", "0")
        assert form.value == {"count": 0}
        assert form.errors == [("/count", "0 is less than the minimum of 1")]

    def test_text_that_is_no_number_is_sent_as_text(self) -> None:
        """`abc` is not made into a number: the engine's type message says what is wrong."""
        form = ParamForm(BOUNDED)
        _type_into(form, "/count", "abc")
        assert form.value == {"count": "abc"}
        assert form.errors == [("/count", 'expected an integer, got "abc"')]

    def test_an_empty_box_is_left_out(self) -> None:
        """A required number starts empty, is left out, and the engine says it is required."""
        form = ParamForm(BOUNDED)
        assert form.value == {}
        assert form.errors == [("/count", "'count' is required")]
        _type_into(form, "/count", "5")
        _type_into(form, "/count", "")
        assert form.value == {}

    def test_code_may_set_a_number_in_the_box(self) -> None:
        """`box.value = 7` (a number) shows "7": the box is text, code need not know it."""
        form = ParamForm(NUMBER)
        control = form.widget_at("/a")
        assert isinstance(control, NumberBox)
        control.value = 7
        assert control.value == "7"
        assert form.value == {"a": 7}

    def test_the_placeholder_says_the_kind_and_range(self) -> None:
        """An empty box says what it takes."""
        control = ParamForm(BOUNDED).widget_at("/count")
        assert control is not None
        assert control.placeholder == "integer, 1 to 100"


class TestNumberSetByCode:
    @pytest.mark.parametrize("value", [2.0, 2, -0.5, 1e20, 10**30],
                             ids=["2.0", "2", "-0.5", "1e20", "big-int"])
    def test_a_value_set_reads_back_exactly(self, value: float) -> None:
        """`form.value = {"a": 2.0}` reads back `2.0`, and `2` reads back `2` (lossless)."""
        form = ParamForm(NUMBER)
        form.value = {"a": value}
        assert form.value == {"a": value}
        assert type(form.value["a"]) is type(value)
        assert type(ParamForm(NUMBER, value={"a": value}).value["a"]) is type(value)

    def test_setting_the_params_trait_is_code_too(self) -> None:
        """`form.params = {...}` is a value set by code: `2.0` stays `2.0`."""
        form = ParamForm(NUMBER)
        form.params = {"a": 2.0}
        assert type(form.value["a"]) is float

    def test_a_default_reads_back_as_written(self) -> None:
        """A required field's `default: 2.0` is sent as `2.0`; without a default it starts empty."""
        schema = {**NUMBER, "properties": {"a": {"type": "number", "default": 2.0}}}
        assert type(ParamForm(schema).value["a"]) is float
        assert ParamForm(NUMBER).value == {}

    def test_an_integer_box_keeps_a_whole_float_set_by_code(self) -> None:
        """An integer field given `1.0` by code reads back `1.0`; typed `4`, it sends an int."""
        schema = {**NUMBER, "properties": {"a": {"type": "integer"}}}
        form = ParamForm(schema, value={"a": 1.0})
        assert type(form.value["a"]) is float
        _type_into(form, "/a", "4")
        assert form.value == {"a": 4}
        assert type(form.value["a"]) is int
