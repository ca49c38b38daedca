"""Fixtures of the contract tests: the demo caller and a fake clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers import FakeClock
from toolcaller import ToolCaller


@pytest.fixture
def demo() -> Iterator[ToolCaller]:
    """A caller on the embedded demo registry, closed after the test."""
    made = ToolCaller()
    yield made
    made.close()


@pytest.fixture
def clock() -> FakeClock:
    """A fake monotonic clock whose sleeps are instant."""
    return FakeClock()
