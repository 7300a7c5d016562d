"""A hook event of the Lead's own guard."""

from __future__ import annotations

import json
from pathlib import Path


def event(path: Path, cwd: Path, tool: str = "Write") -> bytes:
    return json.dumps(
        {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": {"file_path": str(path)}, "cwd": str(cwd)}
    ).encode()
