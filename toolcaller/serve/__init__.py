"""Any registry served as an MCP server, each call going through the engine.

`toolcaller serve` (or `serve(caller)`) answers MCP clients (Claude Desktop, Cursor, VS Code,
the MCP Inspector, agents on the SDKs) over stdio or streamable HTTP, on the official `mcp`
SDK's low-level server (the `mcp` extra). Tools keep their names, descriptions, schemas and
behaviour hints (`listing`); calls get the caller's timeouts, retries, deadline, redaction and
history, and come back as MCP results (`answer`); progress and cancellation cross over
(`progress`, `server`); in stdio mode stdout carries nothing but protocol messages (`stdio`).
"""

from __future__ import annotations

from toolcaller.serve.answer import to_call_result
from toolcaller.serve.http import HttpEndpoint
from toolcaller.serve.listing import annotations_of, to_listing
from toolcaller.serve.runner import aserve, mcp_servers_config, serve, stdio_config
from toolcaller.serve.server import ServedRegistry, build_server

__all__ = [
    "HttpEndpoint",
    "ServedRegistry",
    "annotations_of",
    "aserve",
    "build_server",
    "mcp_servers_config",
    "serve",
    "stdio_config",
    "to_call_result",
    "to_listing",
]
