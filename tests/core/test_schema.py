"""`toolcaller.core.schema` and `@tool`: schemas from functions (validation: test_validation)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from enum import Enum
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from tests.helpers import resolved
from toolcaller import Tool, ToolCaller, UsageError, tool
from toolcaller.core.schema import check_schema, describe_function, schema_from_function


@resolved
def documented(city: str, days: int = 3, units: Literal["metric", "imperial"] = "metric",
               tags: list[str] | None = None, *args: Any, verbose: bool = False) -> None:
    """Forecast the weather.

    A longer paragraph that is not the summary's first line.

    Args:
        city (str): Name of the city.
        days: How many days
            to forecast.
        units: Unit system.

    Returns:
        Nothing useful.
    """


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    x: int
    y: int = 0


class TestSchemaFromFunction:
    def test_types_defaults_required(self) -> None:
        """Type hints give types, defaults give defaults, params without one are required."""
        schema, _ = schema_from_function(documented)
        props = schema["properties"]
        assert schema["type"] == "object"
        assert schema["required"] == ["city"]
        assert props["city"]["type"] == "string"
        assert props["days"] == {"type": "integer", "default": 3,
                                 "description": "How many days to forecast."}
        assert props["units"]["enum"] == ["metric", "imperial"]
        assert props["tags"]["anyOf"] == [{"type": "array", "items": {"type": "string"}},
                                          {"type": "null"}]
        assert props["verbose"] == {"type": "boolean", "default": False}
        assert "args" not in props

    def test_docstring_descriptions(self) -> None:
        """Google `Args:` entries become descriptions (types in parentheses dropped)."""
        schema, _ = schema_from_function(documented)
        assert schema["properties"]["city"]["description"] == "Name of the city."
        assert schema["properties"]["units"]["description"] == "Unit system."
        assert "description" not in schema["properties"]["tags"]

    def test_no_titles(self) -> None:
        """Generated titles (which repeat names) are dropped everywhere."""
        schema, _ = schema_from_function(documented)
        assert "title" not in schema
        assert all("title" not in p for p in schema["properties"].values())

    def test_closed_unless_kwargs(self) -> None:
        """Without **kwargs, extra params are refused; with them, allowed."""
        def closed(a: int) -> None: ...

        def open_(a: int, **more: Any) -> None: ...

        assert schema_from_function(closed)[0]["additionalProperties"] is False
        assert schema_from_function(open_)[0]["additionalProperties"] is True

    def test_no_hints_means_any(self) -> None:
        """A param without a hint accepts anything."""
        def bare(a, b=1):  # type: ignore[no-untyped-def]
            ...

        schema, _ = schema_from_function(bare)
        assert schema["properties"]["a"] == {}
        assert schema["required"] == ["a"]

    def test_rich_types(self) -> None:
        """Datetimes, enums and models give formats, enums and $defs references."""
        def rich(when: datetime, day: date, color: Color, point: Point) -> None: ...

        schema, _ = schema_from_function(resolved(rich))
        props = schema["properties"]
        assert props["when"] == {"type": "string", "format": "date-time"}
        assert props["day"] == {"type": "string", "format": "date"}
        assert props["color"] == {"$ref": "#/$defs/Color"}
        assert schema["$defs"]["Color"]["enum"] == ["red", "blue"]
        assert schema["$defs"]["Point"]["required"] == ["x"]
        assert check_schema(schema) is None


def postponed(when: datetime, color: Color, mode: Literal["a", "b"] = "a") -> dict[str, Any]:
    """Echo typed params (this module's annotations are strings: PEP 563)."""
    return {"types": [type(when).__name__, type(color).__name__], "mode": mode}


class TestPostponedAnnotations:
    def test_schema_from_string_annotations(self) -> None:
        """Under `from __future__ import annotations`, hints are resolved in the fn's module."""
        assert isinstance(postponed.__annotations__["when"], str)
        schema, _ = schema_from_function(postponed)
        assert schema["properties"]["when"] == {"type": "string", "format": "date-time"}
        assert schema["properties"]["mode"]["enum"] == ["a", "b"]

    def test_tool_converts_string_annotated_params(self) -> None:
        """`@tool` on such a function builds and converts params to the named types."""
        data = ToolCaller(tools=[tool(postponed)]).handle({"toolName": "postponed", "params": {
            "when": "2024-01-01T00:00:00Z", "color": "red"}})
        assert data["result"] == {"types": ["datetime", "Color"], "mode": "a"}


class TestDescribeFunction:
    def test_summary_and_args(self) -> None:
        """The summary is the text before the sections; args come from `Args:`."""
        summary, args = describe_function(documented)
        assert summary.startswith("Forecast the weather.")
        assert "Returns" not in summary
        assert args == {"city": "Name of the city.", "days": "How many days to forecast.",
                        "units": "Unit system."}

    def test_no_docstring(self) -> None:
        """A function without a docstring has an empty summary and no arg docs."""
        def plain(a: int) -> None: ...

        assert describe_function(plain) == ("", {})


class TestToolDecorator:
    def test_bare(self) -> None:
        """`@tool` makes a Tool named after the function, described by its summary."""
        @tool
        def greet(name: str) -> str:
            """Say hello.

            Args:
                name: Who to greet.
            """
            return f"hello {name}"

        assert isinstance(greet, Tool)
        assert greet.name == "greet"
        assert greet.description == "Say hello."
        assert greet.kind == "python"
        assert greet.params_schema["properties"]["name"]["description"] == "Who to greet."
        assert greet("bob") == "hello bob"  # still callable

    def test_with_settings(self) -> None:
        """`@tool(...)` sets name, description, tags, options, isolation and idempotence."""
        @tool(name="x.y", description="Custom.", tags=["a", "b"], options={"retries": 0},
              isolation="process", idempotent=True)
        def anything() -> None: ...

        assert (anything.name, anything.description, anything.tags) == ("x.y", "Custom.",
                                                                         ["a", "b"])
        assert anything.options == {"retries": 0}
        assert anything.isolation == "process"
        assert anything.idempotent is True

    def test_rich_params_are_converted_before_the_call(self) -> None:
        """datetime, enum and pydantic-model params arrive converted from JSON."""
        seen: dict[str, Any] = {}

        @tool
        @resolved
        def book(when: datetime, color: Color, where: Point, note: str = "") -> dict[str, Any]:
            seen.update(when=when, color=color, where=where, note=note)
            return {"ok": True}

        data = ToolCaller(tools=[book]).handle({"toolName": "book", "params": {
            "when": "2024-03-01T10:00:00Z", "color": "blue", "where": {"x": 3}}})
        assert data["success"] is True, data
        assert seen["when"] == datetime(2024, 3, 1, 10, tzinfo=UTC)
        assert seen["color"] is Color.BLUE
        assert seen["where"] == Point(x=3, y=0)
        assert seen["note"] == ""

    def test_plain_params_are_passed_as_given(self) -> None:
        """Plain JSON params reach the function untouched (no conversion needed)."""
        @tool
        def echo(items: list[Any], mapping: dict[str, Any]) -> dict[str, Any]:
            return {"items": items, "mapping": mapping}

        data = ToolCaller(tools=[echo]).handle({"toolName": "echo", "params": {
            "items": [1, "a", None], "mapping": {"k": [1]}}})
        assert data["result"] == {"items": [1, "a", None], "mapping": {"k": [1]}}

    def test_async_function(self) -> None:
        """An async function becomes a tool that `call()` awaits."""
        @tool
        async def twice(n: int) -> int:
            return 2 * n

        assert ToolCaller(tools=[twice]).call("twice", {"n": 4}).result == 8

    def test_caller_decorator_registers(self) -> None:
        """`caller.tool` decorates and registers in one step."""
        caller = ToolCaller(tools=[])

        @caller.tool(name="sq")
        def square(n: int) -> int:
            return n * n

        assert caller.handle({"toolName": "sq", "params": {"n": 5}})["result"] == 25

    @pytest.mark.parametrize("thing", [42, "name"], ids=["int", "str"])
    def test_not_a_function(self, thing: Any) -> None:
        """Decorating something that is not callable raises UsageError."""
        with pytest.raises(UsageError):
            tool(thing)

    def test_unschematizable_annotation(self) -> None:
        """A param type with no JSON Schema raises UsageError naming the function."""
        class Opaque:
            pass

        def uses(thing: Opaque) -> None: ...

        with pytest.raises(UsageError, match="uses"):
            tool(uses)
