"""`toolcaller.core.registry`: tools by name, filter syntax, suggestions, lazy sources."""

from __future__ import annotations

import threading

import pytest

from toolcaller import Registry, Tool, UsageError
from toolcaller.core.registry import Source, ToolProblem, compile_filter


def _tool(name: str, description: str = "", tags: tuple[str, ...] = ()) -> Tool:
    return Tool(name=name, description=description or f"The {name} tool.",
                params_schema={"type": "object"}, kind="python", target=lambda: None,
                metadata={"tags": list(tags)})


TOOLS = [
    _tool("math.add", "Add two numbers.", ("math", "demo")),
    _tool("math.divide", "Divide a by b.", ("math",)),
    _tool("text.echo", "Echo text back.", ("text", "demo")),
    _tool("demo.slow", "Sleep for a while.", ("demo", "timeout")),
    _tool("web.fetch", "Fetch a web page over HTTP.", ("http",)),
]


@pytest.fixture
def registry() -> Registry:
    return Registry(TOOLS)


def names(registry: Registry, text: str | None) -> list[str]:
    tools, _ = registry.search(text)
    return [t.name for t in tools]


class FakeSource:
    """A lazy source whose list is fixed, or that fails."""

    def __init__(self, prefix: str, tools: list[Tool] | None, calls: list[int]) -> None:
        self.name = f"fake:{prefix}"
        self.prefix = prefix
        self._tools = tools
        self._calls = calls

    def list_tools(self) -> list[Tool]:
        self._calls.append(1)
        if self._tools is None:
            raise ConnectionError("server did not start")
        return self._tools


FILTERS = [
    ("empty", "", ["math.add", "math.divide", "text.echo", "demo.slow", "web.fetch"]),
    ("blank", "   ", ["math.add", "math.divide", "text.echo", "demo.slow", "web.fetch"]),
    ("word-in-name", "echo", ["text.echo"]),
    ("word-any-case", "ECHO", ["text.echo"]),
    ("word-in-description", "numbers", ["math.add"]),
    ("word-in-tag", "timeout", ["demo.slow"]),
    ("words-all-hold", "math two", ["math.add"]),
    ("tag", "tag:math", ["math.add", "math.divide"]),
    ("tag-any-case", "tag:MATH", ["math.add", "math.divide"]),
    ("tag-is-exact", "tag:mat", []),
    ("name-glob", "name:math.*", ["math.add", "math.divide"]),
    ("name-glob-any-case", "name:MATH.A*", ["math.add"]),
    ("name-glob-question", "name:????.echo", ["text.echo"]),
    ("name-exact", "name:web.fetch", ["web.fetch"]),
    ("exclude-word", "math -divide", ["math.add"]),
    ("exclude-tag", "-tag:demo", ["math.divide", "web.fetch"]),
    ("exclude-name", "demo -name:demo.*", ["math.add", "text.echo"]),
    ("phrase", '"two numbers"', ["math.add"]),
    ("phrase-order-matters", '"numbers two"', []),
    ("phrase-excluded", '-"web page"', ["math.add", "math.divide", "text.echo", "demo.slow"]),
    ("unbalanced-quote", '"two', ["math.add"]),
    ("lone-dash", "- echo", ["text.echo"]),
    ("no-match", "zebra", []),
    ("tag-and-word", "tag:demo slow", ["demo.slow"]),
]


class TestFilterSyntax:
    @pytest.mark.parametrize(("text", "expected"), [f[1:] for f in FILTERS],
                             ids=[f[0] for f in FILTERS])
    def test_filter(self, registry: Registry, text: str, expected: list[str]) -> None:
        """Filters combine words, tag:, name: globs, -exclusions and quoted phrases."""
        assert names(registry, text) == expected

    def test_none_lists_everything(self, registry: Registry) -> None:
        """No filter lists every tool, in the order they were added."""
        assert names(registry, None) == [t.name for t in TOOLS]

    def test_compiled_predicate(self) -> None:
        """`compile_filter` returns a reusable predicate over tools."""
        predicate = compile_filter("tag:math -divide")
        assert [t.name for t in TOOLS if predicate(t)] == ["math.add"]

    def test_empty_tag_is_a_word(self, registry: Registry) -> None:
        """`tag:` with no value is an ordinary word (matches nothing here)."""
        assert names(registry, "tag:") == []


class TestAddAndGet:
    def test_duplicate_name_raises(self, registry: Registry) -> None:
        """Adding a second tool with a used name raises UsageError naming it."""
        with pytest.raises(UsageError, match=r"math\.add"):
            registry.add(_tool("math.add"))

    def test_duplicate_in_constructor_raises(self) -> None:
        """Duplicates passed to the constructor raise too."""
        with pytest.raises(UsageError):
            Registry([_tool("a"), _tool("a")])

    def test_replace(self, registry: Registry) -> None:
        """`replace=True` swaps the tool with the same name."""
        new = _tool("math.add", "New adder.")
        registry.add(new, replace=True)
        assert registry.get("math.add") is new
        assert len(registry) == len(TOOLS)

    def test_get_contains_len_remove(self, registry: Registry) -> None:
        """get/in/len/remove behave like a mapping by name."""
        assert registry.get("text.echo") is TOOLS[2]
        assert registry.get("nope") is None
        assert "text.echo" in registry
        assert 42 not in registry
        registry.remove("text.echo")
        registry.remove("text.echo")  # absent: no error
        assert "text.echo" not in registry
        assert len(registry) == len(TOOLS) - 1

    def test_concurrent_adds(self) -> None:
        """Adds from many threads all land, and duplicates are refused exactly once each."""
        registry = Registry()
        errors: list[Exception] = []

        def add(i: int) -> None:
            try:
                registry.add(_tool(f"t{i % 50}"))
            except UsageError as exc:
                errors.append(exc)

        threads = [threading.Thread(target=add, args=(i,)) for i in range(100)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(registry) == 50
        assert len(errors) == 50


class TestSuggestions:
    @pytest.mark.parametrize(
        ("name", "first"), [("math.ad", "math.add"), ("math.dividе", "math.divide"),
                            ("echo", "text.echo"), ("text.ecko", "text.echo"),
                            ("MATH.ADD", "math.add")],
        ids=["typo", "homoglyph", "substring", "misspelt", "case"],
    )
    def test_close_names(self, registry: Registry, name: str, first: str) -> None:
        """Close names are suggested, best first."""
        assert registry.suggest(name)[0] == first

    def test_limit(self, registry: Registry) -> None:
        """At most `limit` names are suggested."""
        assert len(registry.suggest("math", limit=1)) == 1
        assert len(registry.suggest("a", limit=3)) <= 3

    def test_nothing_close(self, registry: Registry) -> None:
        """An unrelated name gets no suggestion."""
        assert registry.suggest("zzzzqqq") == []


class TestSources:
    def test_fake_source_is_a_source(self) -> None:
        """The test source satisfies the `Source` protocol."""
        assert isinstance(FakeSource("x.", [], []), Source)

    def test_source_tools_are_listed_and_found(self, registry: Registry) -> None:
        """A lazy source's tools appear in search and get, only when asked."""
        calls: list[int] = []
        registry.add_source(FakeSource("srv.", [_tool("srv.time", "Current time.")], calls))
        assert calls == []
        assert registry.get("srv.time") is not None
        assert "srv.time" in names(registry, "time")
        assert [t.name for t in registry.static_tools()] == [t.name for t in TOOLS]

    def test_get_lists_only_the_matching_source(self, registry: Registry) -> None:
        """`get` of a name outside a source's prefix never lists that source."""
        calls: list[int] = []
        registry.add_source(FakeSource("srv.", None, calls))
        assert registry.get("math.add") is not None
        assert registry.get("other.x") is None
        assert calls == []

    def test_broken_source_is_a_problem_not_an_error(self, registry: Registry) -> None:
        """A source that fails is reported as a problem; other tools are still listed."""
        registry.add_source(FakeSource("bad.", None, []))
        tools, problems = registry.search("tag:math")
        assert [t.name for t in tools] == ["math.add", "math.divide"]
        assert len(problems) == 1
        assert problems[0].source == "fake:bad."
        assert problems[0].prefix == "bad."
        assert "did not start" in problems[0].message

    def test_tools_that_cannot_be_called_are_problems(self, registry: Registry) -> None:
        """A tool with a `problem` is listed, and reported among the problems of the
        searches that list it (after the failed sources); replacing or removing it clears it."""
        broken = _tool("math.bad", "Broken schema.", ("math",))
        broken.problem = "its paramsSchema cannot be used: $ref '#/x' points to nothing"
        registry.add(broken)
        registry.add_source(FakeSource("bad.", None, []))
        tools, problems = registry.search("tag:math")
        assert "math.bad" in [t.name for t in tools]
        assert [p.to_dict() for p in problems][1] == {"tool": "math.bad",
                                                      "message": broken.problem}
        assert problems[0].to_dict()["source"] == "fake:bad."
        assert not any(isinstance(p, ToolProblem) for p in registry.search("text")[1])
        registry.add(_tool("math.bad"), replace=True)
        assert not any(isinstance(p, ToolProblem) for p in registry.search(None)[1])
        registry.add(broken, replace=True)
        registry.remove("math.bad")
        assert not any(isinstance(p, ToolProblem) for p in registry.search(None)[1])

    def test_broken_source_get_raises_for_its_prefix(self, registry: Registry) -> None:
        """`get` of a name under a broken source's prefix raises (the caller reports it)."""
        registry.add_source(FakeSource("bad.", None, []))
        with pytest.raises(ConnectionError):
            registry.get("bad.tool")
