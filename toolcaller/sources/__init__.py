"""Where tools come from: registry files, decorated functions, plugins, MCP servers, OpenAPI."""
