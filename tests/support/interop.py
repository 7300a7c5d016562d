"""Where the third-party MCP clients the interop tests drive are installed."""

from __future__ import annotations

from pathlib import Path

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
