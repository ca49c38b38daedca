"""ResultView with what is not data: MCP content blocks (a real server), bytes, and the notes
(progress and log messages) a tool reported during its attempts."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolcaller import Tool, ToolCaller
from toolcaller.widgets import ResultView

SLOW_SERVER = Path(__file__).parents[1] / "adapters" / "mcp_slow_server.py"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


@pytest.fixture
def view() -> Iterator[ResultView]:
    made = ResultView()
    yield made
    made.close()


@pytest.mark.mcp
@pytest.mark.integration
def test_mcp_content_blocks_under_raw_show_as_text_and_image(view: ResultView,
                                                             tmp_path: Path) -> None:
    """`format: raw` of a real MCP tool gives its blocks: each drawn as what it is."""
    pytest.importorskip("mcp")
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps(
        {"mcpServers": {"slow": {"command": sys.executable, "args": [str(SLOW_SERVER)]}}}))
    with ToolCaller.from_file(registry) as caller:
        envelope = caller.call("slow.several", {}, format="raw", timeout=30_000,
                               deadline=30_000)
    assert envelope.success, envelope.error
    view.show(envelope)
    assert view.result_kind == "content"
    shown = view.result.value
    assert "3 content blocks" in shown
    assert shown.count("tc-pre") == 2  # the two text blocks, as text
    assert '<img src="data:image/png;base64,iVBORw0KGgo="' in shown


def test_bytes_of_an_image_are_drawn(view: ResultView) -> None:
    view.show({"success": True, "result": {"mediaType": "image/png", "base64": PNG}})
    assert view.result_kind == "content"
    assert f'src="data:image/png;base64,{PNG}"' in view.result.value


def test_other_bytes_are_described_not_dumped(view: ResultView) -> None:
    data = base64.b64encode(bytes(range(256)) * 4).decode()
    view.show({"success": True, "result": {"mediaType": "application/zip", "base64": data}})
    assert "application/zip, 1,024 bytes" in view.result.value
    assert data not in view.result.value


def test_audio_and_resources(view: ResultView) -> None:
    blocks = [{"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
              {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello <b>"}},
              {"type": "resource_link", "uri": "file:///b.txt", "name": "b"}]
    view.show({"success": True, "result": blocks})
    shown = view.result.value
    assert '<audio controls src="data:audio/wav;base64,UklGRg=="' in shown
    assert "file:///a.txt" in shown
    assert "hello &lt;b&gt;" in shown
    assert "b · file:///b.txt" in shown


@pytest.mark.parametrize("block", [
    {"type": "image", "data": "AAAA", "mimeType": 'image/png" onerror="alert(1)'},
    {"type": "image", "data": 'AAAA" onerror="alert(1)', "mimeType": "image/png"},
    {"type": "image", "data": "AAAA", "mimeType": "text/html"},
], ids=["media-type", "data", "not-an-image"])
def test_nothing_hostile_reaches_an_attribute(view: ResultView, block: dict[str, Any]) -> None:
    view.show({"success": True, "result": [block]})
    assert "onerror=\"" not in view.result.value
    assert "<img" not in view.result.value


def test_a_list_of_dicts_that_are_not_blocks_is_still_a_table(view: ResultView) -> None:
    view.show({"success": True, "result": [{"type": "cat", "n": 1}, {"type": "dog", "n": 2}]})
    assert view.result_kind == "table"


class _Reporter:
    """A tool kind whose attempt reports progress and a log line, as an MCP server does."""

    kind = "reporter"

    async def invoke(self, tool: Tool, params: dict[str, Any], ctx: Any) -> object:
        ctx.report_progress(1, 2, "copying <files>")
        await asyncio.sleep(0)
        ctx.report_log("disk almost full", level="warning")
        ctx.report_progress(2, 2)
        return "done"

    async def aclose(self) -> None:
        """Nothing to release."""


def test_what_the_tool_reported_is_listed_under_the_trail(view: ResultView) -> None:
    tool = Tool(name="t.report", description="Reports as it goes.",
                params_schema={"type": "object"}, kind="reporter", target=None)
    with ToolCaller([tool], adapters={"reporter": _Reporter()}) as caller:
        view.show(caller.call("t.report", {}))
    shown = view.metadata.value
    assert "reported by the tool" in shown
    assert "progress 1/2: copying &lt;files&gt;" in shown
    assert "log (warning): disk almost full" in shown
    order = [shown.index(text) for text in ("progress 1/2", "disk almost full", "progress 2/2")]
    assert order == sorted(order)


def test_no_notes_no_list(view: ResultView) -> None:
    with ToolCaller() as caller:
        view.show(caller.call("math.add", {"a": 1, "b": 2}))
    assert "reported by the tool" not in view.metadata.value
