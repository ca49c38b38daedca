"""Violation messages for unions: the closest alternative, by title, and what fails in it."""

from __future__ import annotations

from typing import Any

from toolcaller.core.validation import ParamsValidator


def messages(schema: Any, params: Any) -> list[tuple[str, str]]:
    return [(v["pointer"], v["message"]) for v in ParamsValidator(schema).violations(params)]


def test_a_union_names_its_closest_variant_and_what_fails_there() -> None:
    """No alternative fits: the message names the closest (by title) and its failing field.

    A `const` discriminator that differs marks a variant as another shape, so the variant
    the value claims to be is the closest even when it fails as often as another.
    """
    card = {"title": "card", "type": "object", "required": ["method", "number"],
            "properties": {"method": {"const": "card"},
                           "number": {"type": "string", "pattern": "^[0-9]{16}$"}}}
    bank = {"title": "bank", "type": "object", "required": ["method", "iban"],
            "properties": {"method": {"const": "bank"}, "iban": {"type": "string"}}}
    schema = {"properties": {"pay": {"oneOf": [card, bank]}}}
    assert messages(schema, {"pay": {"method": "card", "number": "12"}}) == [
        ("/pay", 'an object matches none of the allowed alternatives; the closest, "card", '
                 'fails at /number: "12" does not match the required pattern')]
    assert messages(schema, {"pay": {"method": "bank"}}) == [
        ("/pay", "an object matches none of the allowed alternatives; the closest, \"bank\", "
                 "fails at /iban: 'iban' is required")]
    assert "{" not in messages(schema, {"pay": {"method": "x"}})[0][1]


def test_an_untitled_alternative_is_named_by_its_position() -> None:
    """Without a title, the closest alternative is "alternative N" (counted from 1)."""
    schema = {"anyOf": [{"type": "string"}, {"type": "object", "required": ["x"]}]}
    assert messages(schema, {}) == [
        ("", "an object matches none of the allowed alternatives; the closest, alternative 2, "
             "fails at /x: 'x' is required")]
