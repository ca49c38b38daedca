"""CatalogTable: the tool catalogue as a searchable, tag-filtered, clickable table.

Search uses the registry's filter syntax (`math`, `tag:math`, `name:demo.*`, `-slow`, quoted
phrases; see `toolcaller.core.registry.compile_filter`). Rows are the options of one `Select`
laid out as fixed-width columns, so a keystroke costs one widget update however many tools
there are; at most `max_rows` rows are listed at first, and the count says so with a "show
all" button. A "clear" button empties the search and the tags at once.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as W
import traitlets

from toolcaller.core.registry import Registry, compile_filter
from toolcaller.core.tool import Tool
from toolcaller.widgets._style import style_widget

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["CatalogTable", "required_params"]

DEFAULT_MAX_ROWS = 200
NAME_WIDTH = (12, 40)  # min and max characters of the name column
REQUIRED_WIDTH = 22
TAGS_WIDTH = 22
DESCRIPTION_WIDTH = 60  # the tool card above the form shows the whole description
PAD = "\u00a0"  # <option> text collapses ordinary spaces; no-break spaces keep columns aligned
_STYLE = (
    "<style>.tc-catalog-list select, .tc-catalog-head {"
    "font-family: var(--jp-code-font-family, monospace); font-size: 12px;}</style>"
)


class _Row:
    """What filtering and rendering need of one tool, computed once per `refresh()`."""

    __slots__ = ("label", "name", "tags", "tool")

    def __init__(self, tool: Tool, label: str) -> None:
        self.tool = tool
        self.name = tool.name
        self.label = label
        self.tags = tool.search_keys[1]  # lowercase tags, cached on the tool


class CatalogTable(W.VBox):  # type: ignore[misc]  # ipywidgets is untyped: VBox is Any
    """The catalogue as a table with search-as-you-type, a tag filter and a selection.

    Observe `selected` (a tool name, or "" for none) to follow what the user clicks; set it, or
    call `select(name)`, to select from code. Filtering never changes the selection: a selected
    tool that the filter hides stays selected, just not highlighted. The table carries the CSS
    class `tc-catalog`, its list `tc-catalog-list`.

    Args:
        caller: The `ToolCaller` (or a bare `Registry`) whose tools are listed.
        max_rows: At most this many matching tools are listed (a label says how many match).
        rows: Height of the list, in rows.
        show_details: Whether the selected tool's name, description, tags and params show
            under the list (off where a view around the table shows them itself).
    """

    selected = traitlets.Unicode("", help="Name of the selected tool, or '' for none.")

    def __init__(self, caller: ToolCaller | Registry, *, max_rows: int = DEFAULT_MAX_ROWS,
                 rows: int = 14, show_details: bool = True, **kwargs: Any) -> None:
        selected = kwargs.pop("selected", "")  # checked once the tools are known
        super().__init__(**kwargs)
        self.add_class("tc-catalog")
        self.show_details = show_details
        """Whether `details` shows the selected tool (fixed when the table is built)."""
        self.registry: Registry = caller if isinstance(caller, Registry) else caller.registry
        self.max_rows = max_rows
        self.rows: list[str] = []
        """Names of the tools listed now, in order (at most `max_rows`)."""
        self.matches = 0
        """How many tools match the current search and tags (listed or not)."""
        self._rows: list[_Row] = []
        self._by_name: dict[str, _Row] = {}
        self._syncing = False
        self._listing_problem = ""
        self._limit: int | None = max_rows  # None once the user asked to see every row
        self.search = W.Text(
            placeholder="search: math   tag:math   name:demo.*   -slow",
            continuous_update=True, description="search", layout=W.Layout(width="100%"))
        self.tags = W.SelectMultiple(description="tags", rows=4,
                                     tooltip="show tools with any of the selected tags",
                                     layout=W.Layout(width="100%"))
        self.count_label = W.HTML()
        self.show_all_button = W.Button(description="show all", layout=W.Layout(
            width="auto", display="none"), tooltip="list every matching tool")
        self.clear_button = W.Button(description="clear filters", icon="times", layout=W.Layout(
            width="auto", display="none"), tooltip="empty the search and the tags")
        self.problems = W.HTML()
        self.message = W.HTML()
        self.header = W.HTML()
        self.list = W.Select(rows=rows, layout=W.Layout(width="100%"))
        self.list.add_class("tc-catalog-list")
        self.details = W.HTML(layout=W.Layout(display=None if show_details else "none"))
        counts = W.HBox(children=(self.count_label, self.show_all_button, self.clear_button),
                        layout=W.Layout(flex_flow="row wrap", align_items="center"))
        self.children = (self.search, self.tags, self.problems, counts, self.message,
                         self.header, self.list, self.details, style_widget())
        self.search.observe(self._on_filter_change, names="value")
        self.tags.observe(self._on_filter_change, names="value")
        self.list.observe(self._on_click, names="value")
        self.show_all_button.on_click(lambda _: self.show_all())
        self.clear_button.on_click(lambda _: self.clear_filters())
        self.refresh()
        self.selected = selected

    # -- public -----------------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-list the registry's tools (after tools were added or removed) and filter again."""
        self._listing_problem = ""
        try:
            tools, problems = self.registry.search(None)
        except Exception as exc:  # noqa: BLE001 - a broken registry is shown, not raised
            tools, problems = [], []
            self._listing_problem = f"cannot list the tools: {type(exc).__name__}: {exc}"
        width = _name_width(tools)
        self._rows = _make_rows(tools, width)
        self._by_name = {row.name: row for row in self._rows}
        self.header.value = _STYLE + _header_html(width)
        self.problems.value = _problems_html(problems)
        self._set_tag_options(tools)
        if self.selected and self.selected not in self._by_name:
            self.selected = ""
        self._apply()
        self._render_details()

    def show_all(self) -> None:
        """List every matching tool, not only the first `max_rows`."""
        self._limit = None
        self._apply()

    def clear_filters(self) -> None:
        """Empty the search and the tag selection (the selected tool stays selected)."""
        self._syncing = True
        try:
            self.search.value = ""
            self.tags.value = ()
        finally:
            self._syncing = False
        self._limit = self.max_rows
        self._apply()

    def select(self, name: str) -> None:
        """Select a tool by name ("" clears); an unknown name raises `traitlets.TraitError`."""
        self.selected = name

    def tool(self, name: str | None = None) -> Tool | None:
        """Return the selected tool (or the tool named `name`), `None` if there is none."""
        row = self._by_name.get(self.selected if name is None else name)
        return row.tool if row is not None else None

    # -- filtering --------------------------------------------------------------------------

    def _on_filter_change(self, change: Any) -> None:
        if not self._syncing:
            self._limit = self.max_rows  # a new filter starts short again
            self._apply()

    def _apply(self) -> None:
        try:
            matched = self._matching(self.search.value, self.tags.value)
        except Exception as exc:  # noqa: BLE001 - a callback never raises into the UI
            self._show_message(f"cannot apply the filter: {type(exc).__name__}: {exc}")
            matched = []
        else:
            self._show_message(self._listing_problem)
        limit = self.max_rows if self._limit is not None else len(matched)
        shown = matched[:limit]
        self.rows = [row.name for row in shown]
        self.matches = len(matched)
        filtered = bool(self.search.value.strip() or self.tags.value)
        self.count_label.value = _count_html(len(shown), len(matched), len(self._rows),
                                             self.tags.value)
        self.show_all_button.layout.display = None if len(shown) < len(matched) else "none"
        self.clear_button.layout.display = None if filtered else "none"
        self._set_options(shown)

    def _matching(self, text: str, tags: Sequence[str]) -> list[_Row]:
        rows = self._rows
        if tags:
            wanted = {t.lower() for t in tags}
            rows = [row for row in rows if not wanted.isdisjoint(row.tags)]
        if text.strip():
            keep = compile_filter(text)
            rows = [row for row in rows if keep(row.tool)]
        return rows

    def _set_options(self, shown: list[_Row]) -> None:
        self._syncing = True
        try:
            with self.list.hold_sync():
                self.list.index = None  # else a new options list selects its first row
                self.list.options = [(row.label, row.name) for row in shown]
                if self.selected in self.rows:
                    self.list.value = self.selected
        finally:
            self._syncing = False

    def _set_tag_options(self, tools: list[Tool]) -> None:
        counts = Counter(tag for tool in tools for tag in dict.fromkeys(tool.tags))
        options = [(f"{tag} ({counts[tag]})", tag) for tag in sorted(counts, key=str.lower)]
        keep = tuple(t for t in self.tags.value if t in counts)
        self._syncing = True  # the options change resets the value: filter once, afterwards
        try:
            self.tags.options = options
            self.tags.value = keep
        finally:
            self._syncing = False

    # -- selection --------------------------------------------------------------------------

    def _on_click(self, change: Any) -> None:
        if self._syncing or change["new"] is None:
            return
        try:
            self.selected = change["new"]
        except Exception as exc:  # noqa: BLE001 - a callback never raises into the UI
            self._show_message(f"cannot select {change['new']!r}: {exc}")

    @traitlets.validate("selected")
    def _check_selected(self, proposal: Any) -> str:
        name = proposal["value"]
        if name and name not in self._by_name:
            close = self.registry.suggest(name)
            tip = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise traitlets.TraitError(f"no tool named {name!r}{tip}")
        return str(name)

    @traitlets.observe("selected")
    def _on_selected(self, change: Any) -> None:
        self._syncing = True
        try:
            self.list.value = change["new"] if change["new"] in self.rows else None
        finally:
            self._syncing = False
        self._render_details()

    def _render_details(self) -> None:
        tool = self.tool() if self.show_details else None
        self.details.value = _details_html(tool) if tool is not None else ""

    def _show_message(self, text: str) -> None:
        self.message.value = f'<span class="tc-warn">⚠ {html.escape(text)}</span>' if text else ""


# -- rendering ----------------------------------------------------------------------------------


def required_params(tool: Tool) -> list[str]:
    """Return the names of a tool's required params (none when the schema is not an object)."""
    schema = tool.params_schema
    required = schema.get("required") if isinstance(schema, dict) else None
    return [r for r in required if isinstance(r, str)] if isinstance(required, list) else []


def _description(tool: Tool) -> str:
    """The description as text, even from a source that left it out."""
    return tool.description if isinstance(tool.description, str) else ""


def _name_width(tools: list[Tool]) -> int:
    longest = max((len(t.name) for t in tools), default=0)
    return min(max(longest, NAME_WIDTH[0]), NAME_WIDTH[1])


def _make_rows(tools: list[Tool], name_width: int) -> list[_Row]:
    return [_Row(tool, _label(tool, name_width)) for tool in sorted(tools, key=lambda t: t.name)]


def _label(tool: Tool, name_width: int) -> str:
    cells = (
        _cell(tool.name, name_width, cut=False),
        _cell(_cut(" ".join(_description(tool).split()), DESCRIPTION_WIDTH), DESCRIPTION_WIDTH),
        _cell(", ".join(required_params(tool)), REQUIRED_WIDTH),
        _cut(", ".join(tool.tags), TAGS_WIDTH),
    )
    return (PAD * 2).join(cells)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _cell(text: str, width: int, *, cut: bool = True) -> str:
    text = _cut(text, width) if cut else text
    return text + PAD * (width - len(text))


def _header_html(name_width: int) -> str:
    cells = (_cell("name", name_width), _cell("description", DESCRIPTION_WIDTH),
             _cell("required", REQUIRED_WIDTH), "tags")
    text = html.escape((PAD * 2).join(cells)).replace(PAD, "&nbsp;")
    return (f'<div class="tc-catalog-head tc-muted" style="padding-left:4px;white-space:nowrap;'
            f'overflow:hidden">{text}</div>')


def _count_html(shown: int, matched: int, total: int, tags: Sequence[str] = ()) -> str:
    text = f"showing {shown:,} of {matched:,}"
    if matched != total:
        text += f" (filtered from {total:,} tools)"
    elif shown == total:
        text += " tools"
    if tags:
        text += " · tags: " + ", ".join(tags)
    if shown < matched:
        text += " · type to narrow the list, or"
    return f'<span class="tc-muted">{html.escape(text)}</span>'


def _problems_html(problems: list[Any]) -> str:
    sources = [p for p in problems if hasattr(p, "source")]
    tools = [p for p in problems if hasattr(p, "tool")]
    parts = []
    if sources:
        items = "; ".join(
            f"{html.escape(p.source)} ({html.escape(p.prefix)}…): {html.escape(p.message)}"
            for p in sources)
        noun = "source" if len(sources) == 1 else "sources"
        parts.append(f"⚠ {len(sources)} {noun} could not list their tools: {items}")
    if tools:
        items = "; ".join(f"{html.escape(p.tool)}: {html.escape(p.message)}" for p in tools)
        noun = "tool" if len(tools) == 1 else "tools"
        parts.append(f"⚠ {len(tools)} {noun} cannot be called: {items}")
    return "".join(f'<div class="tc-warn">{part}</div>' for part in parts)


def _details_html(tool: Tool) -> str:
    schema = tool.params_schema
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required = set(required_params(tool))
    params = []
    for name, sub in (properties or {}).items():
        kind = sub.get("type", "any") if isinstance(sub, dict) else "any"
        mark = "*" if name in required else ""
        params.append(f"<code>{html.escape(str(name))}{mark}</code>: {html.escape(str(kind))}")
    tags = ", ".join(html.escape(t) for t in tool.tags) or "—"
    return (
        f"<div><b>{html.escape(tool.name)}</b> — {html.escape(_description(tool))}<br>"
        f'<span class="tc-muted">tags: {tags} · params: '
        f"{', '.join(params) or '—'}</span></div>"
    )
