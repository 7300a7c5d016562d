"""The ``handoff-mcp`` command."""

from server.cli.main import main

__all__ = ["main"]
