"""The embedded demo registry: tools that exercise every feature and every error code offline."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from toolcaller.core.registry import Registry

if TYPE_CHECKING:
    from toolcaller.caller import ToolCaller

__all__ = ["DEMO_REGISTRY", "demo_registry"]

DEMO_REGISTRY = Path(__file__).resolve().parent / "registry.json"


def demo_registry(caller: ToolCaller) -> Registry:
    """Load the demo registry into a fresh `Registry` for `caller` and return it."""
    from toolcaller.sources.registry_file import load_registry

    caller.registry = Registry()
    load_registry(DEMO_REGISTRY, caller)
    return caller.registry
