"""LogView and CallLog: exact requests and envelopes, copy, JSON Lines, edit and resend, diff."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolcaller import ToolCaller
from toolcaller.widgets._diff import diff_html, diff_lines, steady
from toolcaller.widgets._runner import CallRunner, Job
from toolcaller.widgets.log import CallLog, LogEntry, LogView, copy_block


@pytest.fixture(scope="module")
def caller() -> Iterator[ToolCaller]:
    with ToolCaller() as made:
        yield made


def _run(caller: ToolCaller, name: str, params: Any, **job: Any) -> Job:
    return CallRunner(caller).run_now(Job(name, params, {}, **job))


class TestCallLog:
    def test_entries_keep_request_envelope_and_status(self, caller: ToolCaller) -> None:
        """Each entry holds the request as sent, the envelope, the status and the call id."""
        log = CallLog()
        ok = log.add(_run(caller, "math.add", {"a": 1, "b": 2}))
        bad = log.add(_run(caller, "math.divide", {"a": 1, "b": 0}))
        assert ok.request == {"toolName": "math.add", "params": {"a": 1, "b": 2}, "options": {}}
        assert ok.envelope is not None
        assert ok.envelope["result"] == {"sum": 3}
        assert (ok.status, bad.status) == ("success", "EXECUTION_ERROR")
        assert log.find(ok.call_id) is ok
        assert log.find("nope") is None

    def test_a_cancelled_job_has_no_envelope(self) -> None:
        """Cancelled: status "cancelled", envelope None."""
        job = Job("demo.slow", {}, {})
        job.cancelled = True
        entry = CallLog().add(job)
        assert (entry.status, entry.envelope) == ("cancelled", None)

    def test_json_lines(self, caller: ToolCaller, tmp_path: Path) -> None:
        """One JSON object a line, to a path or an open file."""
        log = CallLog()
        log.add(_run(caller, "math.add", {"a": 1, "b": 2}))
        log.add(_run(caller, "text.echo", {"text": "hi"}))
        lines = log.jsonl().splitlines()
        assert [json.loads(line)["request"]["toolName"] for line in lines] == [
            "math.add", "text.echo"]
        assert log.to_jsonl(tmp_path / "calls.jsonl") == 2
        assert (tmp_path / "calls.jsonl").read_text("utf-8") == log.jsonl()
        out = io.StringIO()
        log.to_jsonl(out)
        assert out.getvalue() == log.jsonl()


class TestLogView:
    def test_the_newest_entry_shows_with_copy_buttons(self, caller: ToolCaller) -> None:
        """Request and envelope as indented JSON, escaped, each with a copy button."""
        log = CallLog()
        log.add(_run(caller, "text.echo", {"text": "<b>hi</b>"}))
        view = LogView(log)
        assert view.blocks.value.count('class="jupyter-button tc-copy"') == 2
        assert "&lt;b&gt;hi&lt;/b&gt;" in view.blocks.value
        assert "<b>hi</b>" not in view.blocks.value.replace("<b>request</b>", "")
        view.close()

    def test_export_is_a_download_of_json_lines(self, caller: ToolCaller) -> None:
        """The export link carries the JSON Lines as a data URL to download."""
        log = CallLog()
        log.add(_run(caller, "math.add", {"a": 1, "b": 2}))
        view = LogView(log)
        href = view.export.value.split('href="', 1)[1].split('"', 1)[0]
        data = base64.b64decode(href.split("base64,", 1)[1]).decode("utf-8")
        assert data == log.jsonl()
        assert 'download="toolcaller-calls.jsonl"' in view.export.value
        view.close()

    def test_edit_and_resend(self, caller: ToolCaller) -> None:
        """The editor starts with the request; bad JSON is reported; good JSON is handed on."""
        log = CallLog()
        first = log.add(_run(caller, "math.add", {"a": 1, "b": 2}))
        sent: list[tuple[dict[str, Any], LogEntry]] = []
        view = LogView(log, on_resend=lambda request, entry: sent.append((request, entry)))
        view.edit_button.click()
        assert json.loads(view.editor.value)["params"] == {"a": 1, "b": 2}
        assert view.editor.layout.display is None
        view.editor.value = '{"toolName": '
        view.send_button.click()
        assert "tc-error" in view.editor_problem.value
        view.editor.value = '{"params": {}}'
        view.send_button.click()
        assert "toolName" in view.editor_problem.value
        view.editor.value = '{"toolName": "math.add", "params": {"a": 1, "b": 5}}'
        view.send_button.click()
        assert sent == [({"toolName": "math.add", "params": {"a": 1, "b": 5}}, first)]
        view.close()

    def test_a_repeat_is_compared_with_its_original(self, caller: ToolCaller) -> None:
        """A resend's entry is compared with the entry it repeats: the changed lines show."""
        log = CallLog()
        first = log.add(_run(caller, "math.add", {"a": 1, "b": 2}))
        log.add(_run(caller, "text.echo", {"text": "between"}))
        again = log.add(_run(caller, "math.add", {"a": 1, "b": 5}, origin="resend",
                             parent=first.call_id))
        view = LogView(log)
        view.refresh(pick=again)
        assert view.compare.value == first.number
        assert '-    &quot;sum&quot;: 3' in view.diff.value
        assert '+    &quot;sum&quot;: 6' in view.diff.value
        assert "(resend of" in again.label
        view.close()


class TestDiff:
    def test_volatile_fields_are_left_out_unless_asked(self) -> None:
        """Call ids, times and durations differ on every call: left out of the diff."""
        a = {"result": 1, "metadata": {"callId": "x-1", "duration": 1.0, "attempts": 1}}
        b = {"result": 1, "metadata": {"callId": "x-2", "duration": 2.0, "attempts": 1}}
        assert steady(a) == {"result": 1, "metadata": {"attempts": 1}}
        assert diff_lines(a, b) == []
        assert "are the same (call ids, times and durations aside)" in diff_html(a, b)
        assert diff_lines(a, b, timing=True)

    def test_changes_are_coloured(self) -> None:
        """Removed lines are `tc-del`, added ones `tc-add`, escaped."""
        shown = diff_html({"r": "<1>"}, {"r": "<2>"})
        assert '<div class="tc-del">-  &quot;r&quot;: &quot;&lt;1&gt;&quot;</div>' in shown
        assert '<div class="tc-add">+  &quot;r&quot;: &quot;&lt;2&gt;&quot;</div>' in shown


def test_copy_block_escapes_its_script() -> None:
    """The copy button's script sits in an escaped attribute; the JSON is escaped too."""
    block = copy_block("request", {"x": "</pre><script>"})
    assert "<script>" not in block
    assert 'onclick="(function(b){' in block
