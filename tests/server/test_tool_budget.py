"""Tool schemas are paid for in every agent's context: tools/list on the wire stays within each role's budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.config import ROLES, TOOLS_LIST_BUDGET, Role
from tests.support.wire import serve_command, stdio_server


def tools_list_line(role: Role, project: Path, secret_file: Path) -> str:
    """The tools/list answer exactly as a stdio client receives it (one JSON line)."""
    with stdio_server(serve_command(role, project, secret_file)) as server:
        assert server.stdout is not None
        for line in server.stdout:
            if json.loads(line).get("id") == 2:
                return line.strip()
    raise AssertionError(f"the {role} server closed stdout before answering tools/list")


@pytest.mark.slow
@pytest.mark.parametrize("role", ROLES)
def test_tools_list_on_the_wire_stays_within_the_roles_budget(role: Role, project: Path, secret_file: Path) -> None:
    line = tools_list_line(role, project, secret_file).encode()
    assert len(json.loads(line)["result"]["tools"]) > 0
    assert len(line) <= TOOLS_LIST_BUDGET[role], f"{role}: {len(line)} bytes > {TOOLS_LIST_BUDGET[role]}"
