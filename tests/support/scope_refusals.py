"""Every tool called outside a task's scope, and whether each was refused."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from handoff_core.contract.ids import parse_ref
from tests.support.calls import refused


async def every_tool_is_refused(executor: Client, other: dict[str, Any], mine: dict[str, Any]) -> list[str]:
    """Each executor tool's name with its refusal's code, and the resource read's outcome last."""
    tools = (await executor.list_tools()).tools
    assert {tool.name for tool in tools} >= {"read_task", "write_report", "read_handoff", "write_handoff"}
    outcomes = [
        f"{tool.name}: {await refused(executor, tool.name, **reaching_for(tool, other, mine))}" for tool in tools
    ]
    with pytest.raises(Exception, match="scope_refused") as caught:
        await executor.read_resource(f"handoff://{other['ref']}/TASK.md")
    outcomes.append(f"resource: {'scope_refused' if 'scope_refused' in str(caught.value) else caught.value}")
    return outcomes


def placeholder(schema: dict[str, Any]) -> Any:
    """A value of a parameter's schema: the first choice of an enum, else the simplest of its type."""
    if "enum" in schema:
        return schema["enum"][0]
    simplest = {"string": "x", "integer": 1, "number": 1, "boolean": False, "array": [], "object": {}}
    return simplest.get(schema.get("type", "string"), "x")


def all_refused(outcomes: list[str]) -> bool:
    return all(line.endswith(": scope_refused") for line in outcomes)


REVIEW = {"kind": "review", "workspace": "", "writable": [], "shared": []}


def reaching_for(tool: Any, other: dict[str, Any], mine: dict[str, Any]) -> dict[str, Any]:
    """Arguments for ``tool`` that name the other task wherever a parameter names a task, and a
    well-formed value everywhere else (this session's own token where a token is asked)."""
    ref = parse_ref(other["ref"])
    properties: dict[str, Any] = tool.input_schema.get("properties", {})
    named = {"ref": str(ref), "change": ref.change, "session": ref.session, "token": mine["report_token"]}
    arguments = {name: named[name] for name in properties if name in named}
    for name in tool.input_schema.get("required", []):
        arguments.setdefault(name, placeholder(properties[name]))
    return arguments
