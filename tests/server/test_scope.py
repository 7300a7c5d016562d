"""A task's session reaches its own task and nothing else: every executor tool, as ``tools/list``
names it, called with another task's ref (or round), is refused with ``scope_refused``: in process,
over stdio (``serve --role executor --ref``) and over HTTP (the bearer token's task)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.server.mcpserver import MCPServer

from handoff_core.contract.ids import parse_ref
from server.config import Role, Settings
from server.mcp.app import build_server
from tests.support.calls import call, task_args
from tests.support.scope_refusals import REVIEW, all_refused, every_tool_is_refused
from tests.support.wire import serve_command

pytestmark = pytest.mark.anyio


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
