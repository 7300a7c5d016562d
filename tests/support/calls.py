"""A tool called through a client as an agent calls it: its arguments, its answer, its refusal's code."""

from __future__ import annotations

import re
from typing import Any

from mcp import Client

from tests.support.changes import CHANGE
from tests.support.content import text_of


def task_args(**overrides: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "change": CHANGE,
        "topic": "implement-a1",
        "kind": "implementation",
        "goal": "Implement A1 so that `pytest tests/a1` passes.",
        "inputs": "SPEC.md §A1",
        "acceptance": "`pytest tests/a1 -q` exits 0",
        "workspace": "current",
        "writable": ["src/a1/**"],
        "shared": ["pyproject.toml=lead"],
    }
    args.update(overrides)
    return args


def report_args(created: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    args = {
        "ref": created["ref"],
        "token": created["report_token"],
        "status": "completed",
        "focused": FOCUS,
        "artifacts": "src/a1/core.py",
        "verification": "pytest: exit 0",
        "task_sha256": created["task_sha256"],
    }
    args.update(overrides)
    return args


async def refused(client: Client, name: str, **arguments: Any) -> str:
    """The stable code of a refused call."""
    result = await client.call_tool(name, arguments)
    assert result.is_error
    text = text_of(result)
    match = re.match(r"Error executing tool \w+: ([a-z_]+): ", text)
    assert match, text
    return match.group(1)


FOCUS = "Built A1. Kept the API. Stopped after tests. Next: review."


async def call(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict), result.structured_content
    return result.structured_content
