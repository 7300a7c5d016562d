"""A role lists and can call only its own tools; a token opens exactly one task's REPORT."""

from __future__ import annotations

import pytest
from mcp import Client

from tests.support.calls import call, refused, report_args, task_args

pytestmark = pytest.mark.anyio

LEAD_ONLY = {
    "create_task",
    "record_session_locator",
    "capture_report",
    "release_writer",
    "wait_for_reports",
    "find_session_log",
    "package_dispatch",
    "receive_return",
    "claim_writer",
    "audit_task",
    "verify_task",
    "save_coordination",
}
SHARED = {
    "write_report",
    "read_task",
    "validate_handoff",
    "handoff_status",
    "read_handoff",
    "search_history",
    "write_handoff",
    "resolve_coordination",
}


async def test_each_role_lists_exactly_its_tools(lead: Client, executor: Client) -> None:
    assert {t.name for t in (await lead.list_tools()).tools} == LEAD_ONLY | SHARED
    assert {t.name for t in (await executor.list_tools()).tools} == SHARED


async def test_an_executor_cannot_call_a_lead_tool(executor: Client) -> None:
    # Refused by the role check, with its code: not merely unknown to this server, nor failing later on.
    assert await refused(executor, "create_task", **task_args()) == "role_refused"


async def test_read_only_tools_say_so_and_nothing_is_destructive(lead: Client) -> None:
    for tool in (await lead.list_tools()).tools:
        assert tool.annotations is not None
        assert tool.annotations.open_world_hint is None  # left to its cautious default (see registration)
        # destructiveHint only means something when readOnlyHint is false (MCP spec); handoff writers never
        # overwrite, and the one tool that replaces a config file says so
        replaces = tool.name == "save_coordination"
        assert tool.annotations.read_only_hint or tool.annotations.destructive_hint is (None if replaces else False)
        assert bool(tool.annotations.read_only_hint) is (
            tool.name
            in {
                "read_task",
                "validate_handoff",
                "handoff_status",
                "wait_for_reports",
                "read_handoff",
                "search_history",
                "resolve_coordination",
                "audit_task",
                "find_session_log",
            }
        )
        assert tool.output_schema is not None


async def test_an_executor_writes_its_report_with_the_token_from_the_dispatch(lead: Client, executor: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    written = await call(executor, "write_report", **report_args(created))
    assert written["created"]
    verdict = await call(executor, "validate_handoff", ref=created["ref"], stage="return")
    assert verdict["ok"]


async def test_another_tasks_token_is_refused_in_both_roles(lead: Client, executor: Client) -> None:
    first = await call(lead, "create_task", **task_args())
    session = first["ref"].split("/")[1]
    second = await call(
        lead,
        "create_task",
        **task_args(topic="other", workspace="required", writable=["src/b/**"], session=session, writer_limit=2),
    )
    for client in (lead, executor):
        args = report_args(second, token=first["report_token"])
        assert await refused(client, "write_report", **args) == "token_refused"
