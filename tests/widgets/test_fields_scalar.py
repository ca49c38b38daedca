"""Scalar fields: what a user types into a number box, against what code sets in it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolcaller.widgets import ParamForm

NUMBER = {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}


def _type_into(form: ParamForm, pointer: str, value: Any) -> None:
    """Set a control as the browser does when a user types (a FloatText holds a float)."""
    control = form.widget_at(pointer)
    assert control is not None, pointer
    control.value = value


class TestNumberTypedByAUser:
    @pytest.mark.parametrize(("typed", "sent"), [(2, 2), (2.0, 2), (-7.0, -7), (0.0, 0),
                                                 (2.5, 2.5), (1e-3, 1e-3)],
                             ids=["2", "2.0", "-7", "0", "2.5", "0.001"])
    def test_a_whole_number_is_sent_as_an_int(self, typed: float, sent: float) -> None:
        """JSON has one number type: a typed `2` is sent as `2`, never `2.0`; `2.5` stays."""
        form = ParamForm(NUMBER)
        _type_into(form, "/a", typed)
        assert form.value == {"a": sent}
        assert type(form.value["a"]) is type(sent)
        assert form.params == {"a": sent}

    def test_the_json_sent_is_what_was_typed(self) -> None:
        """The params as JSON read `{"a": 2}` (the history showed `{"a": 2.0}`)."""
        form = ParamForm(NUMBER)
        _type_into(form, "/a", 2.0)
        assert json.dumps(form.value) == '{"a": 2}'

    def test_a_float_past_exact_integers_stays_a_float(self) -> None:
        """Past 2**53 a float is no exact integer: `1e20` is sent as the float it is."""
        form = ParamForm(NUMBER)
        _type_into(form, "/a", 1e20)
        assert type(form.value["a"]) is float

    def test_typing_back_the_value_code_set_sends_what_was_typed(self) -> None:
        """After `value = {"a": 2.0}`, typing 3 then 2 sends `2`: the user's edit wins."""
        form = ParamForm(NUMBER, value={"a": 2.0})
        _type_into(form, "/a", 3.0)
        _type_into(form, "/a", 2.0)
        assert type(form.value["a"]) is int


class TestNumberSetByCode:
    @pytest.mark.parametrize("value", [2.0, 2, -0.5, 1e20], ids=["2.0", "2", "-0.5", "1e20"])
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
        """A schema's `default: 2.0` is sent as `2.0`; an untouched field sends `0`."""
        schema = {**NUMBER, "properties": {"a": {"type": "number", "default": 2.0}}}
        assert type(ParamForm(schema).value["a"]) is float
        assert ParamForm(NUMBER).value == {"a": 0}

    def test_an_integer_box_keeps_a_whole_float_set_by_code(self) -> None:
        """An integer field given `1.0` by code reads back `1.0`; typed, it sends an int."""
        schema = {**NUMBER, "properties": {"a": {"type": "integer"}}}
        form = ParamForm(schema, value={"a": 1.0})
        assert type(form.value["a"]) is float
        _type_into(form, "/a", 4)
        assert form.value == {"a": 4}
        assert type(form.value["a"]) is int
