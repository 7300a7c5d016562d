"""A large answer goes once: structuredContent in full, the text block a summary a text-only client can act on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from bench.requests import review
from handoff_core.services.writing.store import Store
from server.mcp.summaries import status_summary
from tests.support.content import text_of
from tests.support.wire import answer, request, serve_command, stdio_server

pytestmark = pytest.mark.anyio
TASKS = 150  # more than one page of the default view holds


def _tree(project: Path, state_root: Path) -> None:
    store = Store(state_root, project)
    session = store.create_task(review("review-0")).ref.session
    for index in range(1, TASKS):  # rounds of up to 99 tasks, as a Lead's usually are
        session = store.create_task(review(f"review-{index}", session=session if index % 99 else None)).ref.session


def _refs(text: str) -> list[str]:
    """The refs a text-only reader finds: each task line's name under the round line above it."""
    refs, heading = [], ""
    for line in text.splitlines():
        if line.endswith("/"):
            heading = line
        elif line.startswith("- "):
            refs.append(heading + line.split()[2])
    return refs


async def test_a_structured_client_reads_the_whole_status_and_the_text_names_the_same_page(
    lead: Client, project: Path, state_root: Path
) -> None:
    _tree(project, state_root)
    result = await lead.call_tool("handoff_status", {"view": "all"})
    assert not result.is_error
    status = result.structured_content
    assert status is not None
    assert status["next_cursor"]
    text = text_of(result)
    assert len(result.content) == 1
    assert text == status_summary(status)
    assert _refs(text) == [task["ref"] for task in status["tasks"]]
    for task in status["tasks"]:
        assert f"- {task['state']} {task['ref'].rsplit('/', 1)[1]} review" in text
    assert f"next page: view={status['next_cursor']}" in text
    assert f"dispatched {TASKS}" in text


async def test_a_text_only_client_pages_through_every_task_by_the_cursor_in_the_text(
    lead: Client, project: Path, state_root: Path
) -> None:
    _tree(project, state_root)
    seen: list[str] = []
    view = "all"
    for _ in range(TASKS):  # bounded: a page holds at least one task
        text = text_of(await lead.call_tool("handoff_status", {"view": view}))
        seen += _refs(text)
        cursor = [line for line in text.splitlines() if line.startswith("next page: view=")]
        if not cursor:
            break
        view = cursor[0].removeprefix("next page: view=")
    assert len(seen) == len(set(seen)) == TASKS


@pytest.mark.slow
def test_the_status_reply_on_the_wire_carries_the_answer_once(project: Path, state_root: Path, tmp_path: Path) -> None:
    """Over stdio the whole JSON-RPC line is the structured answer and a short summary, not the answer twice."""
    _tree(project, state_root)
    with stdio_server(serve_command("lead", project, tmp_path / "secret")) as server:
        answer(server, 2)
        assert server.stdin is not None
        server.stdin.write(request(3, "tools/call", {"name": "handoff_status", "arguments": {"view": "all"}}))
        server.stdin.flush()
        reply = answer(server, 3)
    structured = json.dumps(reply["result"]["structuredContent"], separators=(",", ":"))
    line = json.dumps(reply, separators=(",", ":"))
    assert len(line) < 1.25 * len(structured), (len(line), len(structured))
