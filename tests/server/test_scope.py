"""A task's session reaches its own task and nothing else: every executor tool, as ``tools/list``
names it, called with another task's ref (or round), is refused with ``scope_refused``: in process,
over stdio (``serve --role executor --ref``) and over HTTP (the bearer token's task)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.server.mcpserver import MCPServer

from handoff_core.contract.ids import parse_ref
from server.config import Role, Settings
from server.mcp.app import build_server
from tests.server.test_tools import call, refused, task_args
from tests.server.wire import serve_command

pytestmark = pytest.mark.anyio

REVIEW = {"kind": "review", "workspace": "", "writable": [], "shared": []}


def placeholder(schema: dict[str, Any]) -> Any:
    """A value of a parameter's schema: the first choice of an enum, else the simplest of its type."""
    if "enum" in schema:
        return schema["enum"][0]
    simplest = {"string": "x", "integer": 1, "number": 1, "boolean": False, "array": [], "object": {}}
    return simplest.get(schema.get("type", "string"), "x")


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


def all_refused(outcomes: list[str]) -> bool:
    return all(line.endswith(": scope_refused") for line in outcomes)


async def test_every_executor_tool_refuses_another_tasks_ref_in_process(
    lead: Client, settings_for: Callable[[Role], Settings], mode: str
) -> None:
    mine = await call(lead, "create_task", **task_args(topic="review-a", **REVIEW))
    other = await call(lead, "create_task", **task_args(topic="review-b", new_round=True, **REVIEW))
    scoped = build_server(replace(settings_for("executor"), task=parse_ref(mine["ref"])))
    async with Client(scoped, mode=mode) as executor:
        outcomes = await every_tool_is_refused(executor, other, mine)
        own = await call(executor, "read_task", ref=mine["ref"])
        status = await call(executor, "handoff_status")
    assert all_refused(outcomes), outcomes
    assert own["task_sha256"] == mine["task_sha256"]
    assert [task["ref"] for task in status["tasks"]] == [mine["ref"]]


async def test_an_unscoped_executor_still_reads_any_task(lead: Client, executor: Client) -> None:
    other = await call(lead, "create_task", **task_args(topic="review-b", new_round=True, **REVIEW))
    assert (await call(executor, "read_task", ref=other["ref"]))["task_sha256"] == other["task_sha256"]


@pytest.mark.slow  # starts the server as a process
async def test_every_executor_tool_refuses_another_tasks_ref_over_stdio(
    lead_server: MCPServer, project: Path, secret_file: Path
) -> None:
    async with Client(lead_server) as lead:
        mine = await call(lead, "create_task", **task_args(topic="review-a", **REVIEW))
        other = await call(lead, "create_task", **task_args(topic="review-b", new_round=True, **REVIEW))
    command = serve_command("executor", project, secret_file, "--ref", mine["ref"])
    async with Client(StdioServerParameters(command=command[0], args=command[1:])) as executor:
        outcomes = await every_tool_is_refused(executor, other, mine)
        own = await call(executor, "read_task", ref=mine["ref"])
    assert all_refused(outcomes), outcomes
    assert own["task_sha256"] == mine["task_sha256"]
