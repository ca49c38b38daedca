"""Benchmarks: scripts that print their figures (no timed assertions in the tests)."""
