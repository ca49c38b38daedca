"""The pure engine: tools, schemas, retry policy, results, redaction and history (no I/O)."""
