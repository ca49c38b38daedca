"""CatalogTable: search-as-you-type, tag filter, selection, refresh and source problems."""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Iterator
from typing import Any

import pytest
import traitlets

from toolcaller import Registry, Tool, ToolCaller
from toolcaller.widgets import CatalogTable


@pytest.fixture(scope="module")
def caller() -> Iterator[ToolCaller]:
    with ToolCaller() as made:
        yield made


@pytest.fixture
def table(caller: ToolCaller) -> Iterator[CatalogTable]:
    made = CatalogTable(caller)
    yield made
    made.close()


def _noop(**params: Any) -> dict[str, Any]:
    return params


def _tool(
    name: str,
    description: str = "a tool",
    tags: tuple[str, ...] = (),
    required: tuple[str, ...] = (),
) -> Tool:
    schema = {
        "type": "object",
        "properties": {r: {"type": "string"} for r in required},
        "required": list(required),
    }
    return Tool(
        name=name,
        description=description,
        params_schema=schema,
        kind="python",
        target=_noop,
        metadata={"tags": list(tags)},
    )


def _synthetic(count: int) -> Registry:
    words = ["math", "text", "data", "slow", "image"]
    return Registry(
        _tool(
            f"tool.{i:05d}",
            f"{words[i % 5].title()} things, number {i}",
            tags=(words[(i + 1) % 5], "bulk"),
        )
        for i in range(count)
    )


def _demo_names(caller: ToolCaller, query: str | None = None) -> list[str]:
    tools, _ = caller.registry.search(query)
    return sorted(t.name for t in tools)


class _BrokenSource:
    """A lazy source that cannot list its tools (like an MCP server that did not start)."""

    name = "mcp:time"
    prefix = "time."

    def list_tools(self) -> list[Tool]:
        raise ConnectionError("server <exited> with status 1")


class TestSearch:
    def test_every_tool_is_listed_before_any_search(
        self, table: CatalogTable, caller: ToolCaller
    ) -> None:
        """With no search and no tag, every tool is listed, sorted by name, and counted."""
        assert table.rows == _demo_names(caller)
        assert table.matches == len(table.rows)
        assert f"showing {len(table.rows)} of {len(table.rows)} tools" in table.count_label.value

    def test_typing_narrows_the_rows_keystroke_by_keystroke(self, table: CatalogTable) -> None:
        """Each keystroke of "math" filters at once; the rows only ever shrink."""
        seen = []
        for text in ("m", "ma", "mat", "math"):
            table.search.value = text
            seen.append(list(table.rows))
        assert all(set(later) <= set(earlier) for earlier, later in itertools.pairwise(seen))
        assert seen[-1] == ["math.add", "math.divide"]
        assert "filtered from" in table.count_label.value

    def test_search_updates_continuously(self, table: CatalogTable) -> None:
        """The search box reports every keystroke (continuous_update), not only on Enter."""
        assert table.search.continuous_update is True

    def test_search_matches_description_and_tags_ignoring_case(self, table: CatalogTable) -> None:
        """A plain term matches names, descriptions and tags, whatever the case."""
        table.search.value = "TWO NUMBERS"  # two terms, both in math.add's description
        assert table.rows == ["math.add"]
        table.search.value = "secrets"  # only a tag of demo.login
        assert table.rows == ["demo.login"]

    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("tag:math", ["math.add", "math.divide"]),
            ("tag:timeout name:demo.* -name:*sync", ["demo.hang", "demo.slow"]),
            ("name:text.*", ["text.echo", "text.wordcount"]),
            ("name:demo.s*", ["demo.showcase", "demo.slow", "demo.slow_sync"]),
            ("timeout -slow", ["demo.hang"]),
            ('"add two"', ["math.add"]),
            ("tag:", []),
        ],
        ids=[
            "tag",
            "tag-and-negated-name",
            "name-glob",
            "name-glob-prefix",
            "negation",
            "quoted-phrase",
            "empty-tag-is-a-plain-term",
        ],
    )
    def test_registry_filter_syntax(
        self, table: CatalogTable, query: str, expected: list[str]
    ) -> None:
        """`tag:`, `name:` globs, `-` negation and quoted phrases work as in discovery."""
        table.search.value = query
        assert table.rows == expected

    def test_no_match_shows_an_empty_list(self, table: CatalogTable) -> None:
        """A search that matches nothing lists nothing and says 0 matches."""
        table.search.value = "zzz-no-such-tool"
        assert table.rows == []
        assert table.list.options == ()
        assert "showing 0 of 0" in table.count_label.value

    def test_clearing_the_search_lists_everything_again(
        self, table: CatalogTable, caller: ToolCaller
    ) -> None:
        """Emptying the search box restores the full list."""
        table.search.value = "math"
        table.search.value = ""
        assert table.rows == _demo_names(caller)


class TestTagFilter:
    def test_tag_options_list_every_tag_once_with_its_count(
        self, table: CatalogTable, caller: ToolCaller
    ) -> None:
        """The tag filter offers each tag of the catalogue once, sorted, with how many tools."""
        values = [value for _, value in table.tags.options]
        assert values == sorted({t for tool in caller.registry.static_tools() for t in tool.tags})
        labels = {value: label for label, value in table.tags.options}
        assert labels["math"] == "math (2)"

    def test_picking_tags_shows_tools_with_any_of_them(self, table: CatalogTable) -> None:
        """Selecting tags keeps the tools that carry any one of them."""
        table.tags.value = ("math",)
        assert table.rows == ["math.add", "math.divide"]
        table.tags.value = ("math", "text")
        assert table.rows == ["math.add", "math.divide", "text.echo", "text.wordcount"]
        table.tags.value = ()
        assert len(table.rows) > 4

    def test_tags_and_search_combine(self, table: CatalogTable) -> None:
        """The tag filter and the search box both apply."""
        table.tags.value = ("math", "text")
        table.search.value = "echo"
        assert table.rows == ["text.echo"]


class TestSelection:
    def test_clicking_a_row_sets_selected(self, table: CatalogTable) -> None:
        """Choosing a row of the list sets the `selected` trait to the tool's name."""
        table.list.value = "math.add"
        assert table.selected == "math.add"
        assert table.tool() is not None
        assert table.tool().name == "math.add"  # type: ignore[union-attr]

    def test_selected_can_be_observed(self, table: CatalogTable) -> None:
        """An observer of `selected` (an Explorer) hears every change, old and new names."""
        heard: list[tuple[str, str]] = []
        table.observe(lambda change: heard.append((change["old"], change["new"])), "selected")
        table.list.value = "text.echo"
        table.select("math.add")
        table.select("")
        assert heard == [("", "text.echo"), ("text.echo", "math.add"), ("math.add", "")]

    def test_select_highlights_the_row(self, table: CatalogTable) -> None:
        """`select(name)` highlights the tool's row and shows its details."""
        table.select("text.echo")
        assert table.list.value == "text.echo"
        assert "Echo text back" in table.details.value
        assert "<code>text*</code>" in table.details.value  # required params are starred

    def test_filtering_never_changes_the_selection(self, table: CatalogTable) -> None:
        """A selected tool hidden by the search stays selected, and is highlighted again later."""
        table.select("math.add")
        table.search.value = "echo"
        assert table.selected == "math.add"
        assert table.list.value is None
        table.search.value = "math"
        assert table.list.value == "math.add"
        assert table.selected == "math.add"

    def test_new_rows_do_not_select_their_first_row(self, table: CatalogTable) -> None:
        """Typing with nothing selected leaves nothing selected (no silent first-row pick)."""
        table.search.value = "math"
        assert table.selected == ""
        assert table.list.value is None

    def test_selected_can_be_given_when_building(self, caller: ToolCaller) -> None:
        """`CatalogTable(caller, selected=name)` starts with that tool selected."""
        table = CatalogTable(caller, selected="text.echo")
        assert table.selected == "text.echo"
        assert table.list.value == "text.echo"
        table.close()

    def test_an_unknown_name_is_refused_with_a_suggestion(self, table: CatalogTable) -> None:
        """Selecting a name that is not in the catalogue raises and suggests close names."""
        with pytest.raises(traitlets.TraitError, match=r"did you mean 'math\.add'"):
            table.select("math.ad")
        assert table.selected == ""

    def test_details_can_be_left_to_the_view_around_the_table(self, caller: ToolCaller) -> None:
        """`show_details=False` (the Explorer shows the tool itself) hides the details line."""
        table = CatalogTable(caller, show_details=False)
        table.select("text.echo")
        assert (table.details.value, table.details.layout.display) == ("", "none")
        assert "tc-catalog" in table._dom_classes
        assert "tc-catalog-list" in table.list._dom_classes
        table.close()

    def test_details_are_escaped(self) -> None:
        """A description holding markup is shown as text, never as HTML."""
        registry = Registry([_tool("evil.tool", "<script>alert(1)</script>", tags=("<b>",))])
        table = CatalogTable(registry)
        table.select("evil.tool")
        assert "<script>" not in table.details.value
        assert "&lt;script&gt;" in table.details.value
        table.close()


class TestColumns:
    def test_each_row_shows_name_required_params_tags_and_description(
        self, table: CatalogTable
    ) -> None:
        """A row's label holds the name, the required params, the tags and the description."""
        label = {value: label for label, value in table.list.options}["math.add"]
        words = label.replace("\u00a0", " ").split()
        assert words[0] == "math.add"
        assert "a," in words
        assert "b" in words
        assert "Add two numbers." in " ".join(words)
        assert "name" in table.header.value
        assert "required" in table.header.value

    def test_long_descriptions_are_cut(self) -> None:
        """A very long description is cut with an ellipsis; the details show it whole."""
        long_text = "word " * 100
        table = CatalogTable(Registry([_tool("t.long", long_text)]))
        assert "word…" in table.list.options[0][0]
        table.select("t.long")
        assert long_text.strip() in table.details.value
        table.close()


class TestLargeCatalogue:
    def test_rows_are_capped_with_a_count(self) -> None:
        """At most `max_rows` rows are listed; the label says how many match."""
        table = CatalogTable(_synthetic(1_000), max_rows=50)
        assert len(table.rows) == 50
        assert "showing 50 of 1,000" in table.count_label.value
        table.search.value = "math"
        assert table.matches == 400  # 200 "Math" descriptions, 200 "math" tags
        assert "showing 50 of 400 (filtered from 1,000 tools)" in table.count_label.value
        table.close()

    def test_a_cut_list_says_so_and_shows_all_on_demand(self) -> None:
        """"showing 50 of 1,000" comes with "show all", which lists every match; a new filter
        starts short again."""
        table = CatalogTable(_synthetic(1_000), max_rows=50)
        assert table.show_all_button.layout.display is None
        assert "type to narrow the list" in table.count_label.value
        table.show_all_button.click()
        assert len(table.rows) == 1_000
        assert table.show_all_button.layout.display == "none"
        table.search.value = "math"
        assert len(table.rows) == 50
        table.close()

    def test_clear_filters_empties_the_search_and_the_tags(self, table: CatalogTable) -> None:
        """A tag filtering after the search was emptied says so; "clear filters" ends it."""
        assert table.clear_button.layout.display == "none"
        table.tags.value = ("math",)
        table.search.value = "add"
        table.search.value = ""
        assert table.rows == ["math.add", "math.divide"]
        assert "tags: math" in table.count_label.value
        assert table.clear_button.layout.display is None
        table.clear_button.click()
        assert (table.search.value, table.tags.value) == ("", ())
        assert len(table.rows) == table.matches > 2
        assert table.clear_button.layout.display == "none"

    def test_a_keystroke_over_10000_tools_takes_under_50_ms(self) -> None:
        """Updating the model for one keystroke over 10,000 tools takes well under 50 ms."""
        table = CatalogTable(_synthetic(10_000))
        samples = []
        for _ in range(3):
            for text in ("m", "ma", "mat", "math", "tag:data", "name:tool.01*", "-slow", ""):
                start = time.perf_counter()
                table.search.value = text
                samples.append((time.perf_counter() - start) * 1000)
        assert statistics.median(samples) < 50
        assert len(table.rows) == 200
        table.close()


class TestRefresh:
    def test_refresh_lists_tools_added_later(self) -> None:
        """Tools added to the registry appear after `refresh()`, with their tags."""
        caller = ToolCaller(tools=[_tool("a.one", tags=("x",))])
        table = CatalogTable(caller)
        caller.add(_tool("b.two", tags=("y",)))
        assert table.rows == ["a.one"]
        table.refresh()
        assert table.rows == ["a.one", "b.two"]
        assert [value for _, value in table.tags.options] == ["x", "y"]
        table.close()
        caller.close()

    def test_refresh_keeps_the_search_tags_and_selection(self) -> None:
        """A refresh keeps the search text, picked tags that still exist and the selection."""
        registry = Registry([_tool("a.one", tags=("x",)), _tool("a.two", tags=("x", "y"))])
        table = CatalogTable(registry)
        table.search.value = "a."
        table.tags.value = ("x", "y")
        table.select("a.two")
        registry.add(_tool("a.three", tags=("x",)))
        table.refresh()
        assert table.rows == ["a.one", "a.three", "a.two"]
        assert table.tags.value == ("x", "y")
        assert table.selected == "a.two"
        assert table.list.value == "a.two"
        table.close()

    def test_a_removed_selected_tool_is_unselected(self) -> None:
        """When the selected tool leaves the registry, a refresh clears the selection."""
        registry = Registry([_tool("a.one"), _tool("a.two")])
        table = CatalogTable(registry)
        table.select("a.two")
        registry.remove("a.two")
        table.refresh()
        assert table.selected == ""
        assert table.rows == ["a.one"]
        table.close()

    def test_a_bare_registry_is_accepted(self) -> None:
        """A `Registry` can stand in for a `ToolCaller`."""
        table = CatalogTable(Registry([_tool("only.one")]))
        assert table.rows == ["only.one"]
        table.close()


class TestProblems:
    def test_sources_that_failed_are_shown_as_a_warning(self) -> None:
        """A source that cannot list its tools shows a warning line, escaped; the rest lists."""
        registry = Registry([_tool("a.one")], sources=[_BrokenSource()])
        table = CatalogTable(registry)
        assert table.rows == ["a.one"]
        assert "1 source could not list their tools" in table.problems.value
        assert "mcp:time" in table.problems.value
        assert "server &lt;exited&gt; with status 1" in table.problems.value
        table.close()

    def test_tools_that_cannot_be_called_are_shown_as_a_warning(self) -> None:
        """A listed tool with a problem shows a warning line naming it and why, escaped."""
        broken = _tool("a.bad")
        broken.problem = "its paramsSchema cannot be used: $ref '#/<x>' points to nothing"
        table = CatalogTable(Registry([_tool("a.one"), broken]))
        assert table.rows == ["a.bad", "a.one"]
        assert "1 tool cannot be called: a.bad: " in table.problems.value
        assert "&lt;x&gt;" in table.problems.value
        table.close()

    def test_no_problem_no_warning(self, table: CatalogTable) -> None:
        """With every source fine, there is no warning line."""
        assert table.problems.value == ""

    def test_a_broken_registry_is_shown_not_raised(self) -> None:
        """A registry that raises while listing leaves an empty table and a message."""

        class Broken(Registry):
            def search(self, filter_text: str | None) -> Any:
                raise RuntimeError("disk on fire")

        table = CatalogTable(Broken())
        assert table.rows == []
        assert "disk on fire" in table.message.value
        table.close()
