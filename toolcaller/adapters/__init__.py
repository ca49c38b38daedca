"""Adapters run one attempt of a tool of one kind and map that kind's failures to error codes."""

from toolcaller.adapters.base import Adapter, AttemptContext, TextOutput

__all__ = ["Adapter", "AttemptContext", "TextOutput"]
