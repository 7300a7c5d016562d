"""Tool schemas are paid for in every agent's context: tools/list on the wire stays within each role's budget."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from server.config import ROLES, TOOLS_LIST_BUDGET, Role

SCRIPT = Path(sys.executable).parent / "handoff-mcp"
MESSAGES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def tools_list_line(role: Role, project: Path, secret_file: Path) -> bytes:
    """The tools/list answer exactly as a stdio client receives it (one JSON line)."""
    command = [str(SCRIPT), "serve", "--role", role, "--project-root", str(project), "--secret-file", str(secret_file)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        try:
            server.stdin.write("".join(json.dumps(m) + "\n" for m in MESSAGES).encode())
            server.stdin.flush()
            for line in server.stdout:
                if json.loads(line).get("id") == 2:
                    return line.strip()
        finally:
            server.kill()
    raise AssertionError(f"the {role} server closed stdout before answering tools/list")


@pytest.mark.slow
@pytest.mark.parametrize("role", ROLES)
def test_tools_list_on_the_wire_stays_within_the_roles_budget(role: Role, project: Path, secret_file: Path) -> None:
    line = tools_list_line(role, project, secret_file)
    assert len(json.loads(line)["result"]["tools"]) > 0
    assert len(line) <= TOOLS_LIST_BUDGET[role], f"{role}: {len(line)} bytes > {TOOLS_LIST_BUDGET[role]}"
