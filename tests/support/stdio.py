"""A stdio server's parameters and an executor's write_report call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters

from tests.support.wire import SCRIPT


def params(role: str, project: Path, secret_file: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(SCRIPT),
        args=["serve", "--role", role, "--project-root", str(project), "--secret-file", str(secret_file)],
    )


def write_report_call(message: str) -> dict[str, Any]:
    """The JSON arguments line of a dispatch message, as an executor would copy it."""
    line = next(line.strip() for line in message.splitlines() if line.strip().startswith('{"ref"'))
    return dict(json.loads(line))
