"""Subscriptions on the team server, over real HTTP: scoped to the token's task, bounded, public SDK only."""

from __future__ import annotations

import ast
import json
import warnings
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import types
from mcp.shared.exceptions import MCPDeprecationWarning

import server
from server.mcp.arrivals import MAX_FOLLOWED, MAX_STREAMS
from tests.support.calls import call
from tests.support.team import Team, dispatch, report_args

pytestmark = pytest.mark.anyio
REVIEW = {"kind": "review", "workspace": "", "writable": []}


def test_the_adapter_reaches_no_private_attribute_of_the_sdk() -> None:
    """No ``._name`` attribute of another package's object, no import from a private module."""
    found = []
    for path in Path(server.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                base = node.value
                if not (isinstance(base, ast.Name) and base.id in ("self", "cls")):
                    found.append(f"{path.name}:{node.lineno} .{node.attr}")
            module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            if isinstance(node, ast.ImportFrom) and module.startswith("mcp") and "._" in f".{module}":
                found.append(f"{path.name}:{node.lineno} from {module}")
    assert found == []


async def test_an_executor_cannot_follow_another_tasks_report_in_either_era(team: Team) -> None:
    mine = await dispatch(team, topic="review-a", **REVIEW)
    other = await dispatch(team, topic="review-b", **REVIEW)
    theirs, own = f"handoff://{other['ref']}/REPORT.md", f"handoff://{mine['ref']}/REPORT.md"
    told: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            told.append(str(message.params.uri))

    async with team.client("executor", mine["report_token"], mode="legacy", message_handler=on_message) as legacy:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            with pytest.raises(Exception, match="scope_refused"):
                await legacy.subscribe_resource(theirs)
            await legacy.subscribe_resource(own)
        async with team.client("executor", other["report_token"]) as executor:
            await call(executor, "write_report", **report_args(other))
        async with team.client("executor", mine["report_token"]) as modern:
            with pytest.raises(Exception, match="scope_refused"):
                async with modern.listen(resource_subscriptions=[theirs]) as stream:
                    await stream.__anext__()
        async with team.client("executor", mine["report_token"]) as executor:
            await call(executor, "write_report", **report_args(mine))
        with anyio.fail_after(10):  # its own arrival comes; the other task's never did
            while own not in told:
                await anyio.sleep(0.05)
    assert theirs not in told


async def test_a_session_follows_a_bounded_number_of_uris(team: Team) -> None:
    async with team.lead(mode="legacy") as lead:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            for index in range(MAX_FOLLOWED):
                await lead.subscribe_resource(f"handoff://c/r/{index:03d}-t/REPORT.md")
            with pytest.raises(Exception, match="too_many_subscriptions"):
                await lead.subscribe_resource("handoff://c/r/999-t/REPORT.md")
            await lead.unsubscribe_resource("handoff://c/r/000-t/REPORT.md")
            await lead.subscribe_resource("handoff://c/r/999-t/REPORT.md")


async def test_one_token_holds_a_bounded_number_of_listen_streams(team: Team) -> None:
    async with team.lead() as lead, anyio.create_task_group() as group:
        opened = anyio.Semaphore(0)
        release = anyio.Event()

        async def hold() -> None:
            async with lead.listen(resource_subscriptions=["handoff://c/r/001-t/REPORT.md"]):
                opened.release()
                await release.wait()

        for _ in range(MAX_STREAMS):
            group.start_soon(hold)
        with anyio.fail_after(20):
            for _ in range(MAX_STREAMS):
                await opened.acquire()
        with pytest.raises(Exception, match="too_many_streams"):
            async with lead.listen(resource_subscriptions=["handoff://c/r/002-t/REPORT.md"]):
                pass
        release.set()


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_a_2025_handshake_says_resources_subscribe_is_served(team: Team, version: str) -> None:
    init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    headers = {
        "authorization": f"Bearer {team.lead_token}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }
    async with httpx2.AsyncClient() as http:
        answer = await http.post(
            team.endpoint.url("lead"),
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
            headers=headers,
        )
    data = next(line[5:] for line in answer.text.splitlines() if line.startswith("data:"))
    assert json.loads(data)["result"]["capabilities"]["resources"]["subscribe"] is True


async def test_a_2025_session_holds_one_get_event_stream(team: Team) -> None:
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    headers = {"authorization": f"Bearer {team.lead_token}", "accept": "application/json, text/event-stream"}
    url = team.endpoint.url("lead")
    async with httpx2.AsyncClient() as http:
        opened = await http.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}, headers=headers
        )
        session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        with anyio.fail_after(10):
            async with http.stream("GET", url, headers={**session, "accept": "text/event-stream"}) as first:
                assert first.status_code == 200
                second = await http.get(url, headers={**session, "accept": "text/event-stream"})
    assert second.status_code == 409
