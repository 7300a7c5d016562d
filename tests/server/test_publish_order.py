"""Everything that can refuse runs before a publish; nothing after it can fail."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from mcp import Client

from server.config import Role, Settings
from server.mcp.app import build_server
from tests.support.calls import call, refused, report_args, task_args

pytestmark = pytest.mark.anyio

FIRST_SENTENCES = [
    "Built 👩\u200d💻 the parser.",  # a zero-width joiner inside an emoji sequence
    "Co\u00adoperation done.",  # a soft hyphen
    "Fixed \u202eedoc\u202c the bug.",  # bidi controls
    "Printed \x1b[31mred\x1b[0m output.",  # an ANSI escape
]


@pytest.mark.parametrize("first", FIRST_SENTENCES)
async def test_a_report_whose_first_sentence_hides_characters_is_published_and_answered(
    lead: Client, first: str
) -> None:
    created = await call(lead, "create_task", **task_args())
    focused = f"{first} Kept the API. Stopped after tests. Next: review."
    written = await call(lead, "write_report", **report_args(created, focused=focused))
    assert written["created"]
    assert written["reply_line"].isprintable()
    assert "\\u" in written["reply_line"]
    again = await call(lead, "write_report", **report_args(created, focused=focused))
    assert not again["created"]
    assert again["reply_line"] == written["reply_line"]


async def test_a_refused_token_secret_stops_the_dispatch_before_any_task_exists(
    settings_for: Callable[[Role], Settings], project: Path, state_root: Path, mode: str
) -> None:
    settings = settings_for("lead")
    inside = Settings(role="lead", project_root=project, state_root=state_root, secret_file=project / "secret")
    async with Client(build_server(inside), mode=mode) as client:
        assert await refused(client, "create_task", **task_args()) == "unsafe_path"
    assert not list(state_root.rglob("TASK.md"))
    async with Client(build_server(settings), mode=mode) as client:
        created = await call(client, "create_task", **task_args())  # no claim was left behind
    assert created["created"]


async def test_an_identical_retry_says_it_was_not_created(lead: Client) -> None:
    first = await call(lead, "create_task", **task_args())
    again = await call(lead, "create_task", **task_args())
    assert (first["created"], again["created"], again["ref"]) == (True, False, first["ref"])
