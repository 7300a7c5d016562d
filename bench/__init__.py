"""Benchmarks for handoff-mcp: `python -m bench` prints a table and writes JSON."""
