"""YAML documents: the fast loader gives what `yaml.safe_load` gives (timestamps as strings)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

from toolcaller.sources import _openapi_document as document  # noqa: E402
from toolcaller.sources.openapi import load_openapi, tools_from_openapi  # noqa: E402


class _Reference(yaml.SafeLoader):
    """PyYAML's own safe loader, with timestamps kept as strings as the fast one does."""


_Reference.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)

DOCUMENTS = {
    "scalars": """
openapi: 3.0.3
a: [yes, no, on, off, true, False, ~, null, '', "", 0x1F, 0o17, 1_000, -2, +3, 1.5e3, .inf,
    -.Inf, .nan, '12', "007", 2024-01-01, 2024-01-01T10:00:00Z, <, v1, /path, -x]
b:
c: "multi
  line"
d: |
  literal
  block
e: >
  folded
  text
""",
    "anchors": """
openapi: 3.0.3
defs: &shared {type: object, properties: {id: {type: integer}}}
one: *shared
two: *shared
list: &items [1, 2]
again: *items
""",
    "merge-keys": """
swagger: "2.0"
base: &base {a: 1, b: 2}
child:
  <<: *base
  b: 3
""",
    "odd-keys": """
openapi: 3.0.3
responses: {200: ok, 404: missing, true: yes, null: nothing, 1.5: x, 2024-01-01: date}
""",
    "tags": """
openapi: 3.0.3
s: !!str 123
i: !!int "42"
f: !!float "1"
set: !!set {a, b}
omap: !!omap [{a: 1}, {b: 2}]
bin: !!binary aGVsbG8=
""",
}


@pytest.mark.parametrize("text", DOCUMENTS.values(), ids=list(DOCUMENTS))
def test_fast_loader_gives_what_safe_load_gives(text: str) -> None:
    """Scalars of every implicit type, anchors, merge keys, odd keys, explicit tags."""
    expected = yaml.load(text, Loader=_Reference)
    assert document._parse_yaml(text, "<doc>", ValueError("not JSON")) == expected


def test_anchors_stay_shared() -> None:
    """An alias is the same object as its anchor, as PyYAML makes it."""
    data = document._parse_yaml(DOCUMENTS["anchors"], "<doc>", ValueError())
    assert data["one"] is data["two"]


def test_timestamps_are_strings() -> None:
    """A date in a YAML document stays a string: documents are JSON data."""
    data = load_openapi("openapi: 3.0.3\nexample: 2024-01-01\npaths: {}\n")
    assert data["example"] == "2024-01-01"
    json.dumps(data)


def test_the_loader_is_libyamls_when_present() -> None:
    """PyYAML's wheels bring libyaml: the C loader is used."""
    if not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("this PyYAML was built without libyaml")
    assert issubclass(document.yaml_loader(), yaml.CSafeLoader)


class TestCache:
    def big_yaml(self, folder: Path) -> Path:
        paths = {f"/items{i}": {"get": {"operationId": f"get{i}", "summary": "x" * 200}}
                 for i in range(4000)}
        path = folder / "big.yaml"
        path.write_text(yaml.safe_dump({"openapi": "3.0.3", "paths": paths}))
        assert path.stat().st_size >= document.CACHE_MIN_BYTES
        return path

    def test_a_big_yaml_is_cached_as_json(self, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
        """A big YAML file is parsed once; the next import reads the cached JSON."""
        monkeypatch.setenv("TOOLCALLER_CACHE_DIR", str(tmp_path / "cache"))
        path = self.big_yaml(tmp_path)
        first = tools_from_openapi(path, base_url="http://h")
        cached = list((tmp_path / "cache" / "openapi").glob("*.json"))
        assert len(cached) == 1
        calls: list[Any] = []
        monkeypatch.setattr(document, "_parse_yaml", lambda *a: calls.append(a))
        again = tools_from_openapi(path, base_url="http://h")
        assert calls == []
        assert [t.info() for t in again] == [t.info() for t in first]

    def test_the_cache_can_be_turned_off(self, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
        """`TOOLCALLER_CACHE_DIR=""` writes no cache."""
        monkeypatch.setenv("TOOLCALLER_CACHE_DIR", "")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        tools_from_openapi(self.big_yaml(tmp_path), base_url="http://h")
        assert not (tmp_path / "xdg").exists()
