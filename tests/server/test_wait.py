"""wait_for_reports: back within a second of another process's REPORT, never past its timeout."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.support.calls import call, refused, report_args, task_args
from tests.support.content import text_of

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
WRITER = """
import sys
from pathlib import Path
from handoff_core.contract.ids import parse_ref
from handoff_core.contract.report import Report
from handoff_core.services.writing.store import Store
ref = parse_ref(sys.argv[2])
focused = "Done. Tested. Stopped. Next: review."
Store(Path(sys.argv[1])).write_report(Report(ref.session, ref.task, "completed", focused, "x", "y"), ref.change)
"""


@pytest.mark.slow
async def test_it_returns_soon_after_another_process_publishes_a_report(lead: Client, state_root: Path) -> None:
    created = await call(lead, "create_task", **task_args())
    other = await call(lead, "create_task", **task_args(topic="review", kind="review", workspace="", writable=[]))
    outcome: dict[str, Any] = {}  # the call's answer, and when it came

    async def wait() -> None:
        outcome["result"] = await call(lead, "wait_for_reports", refs=[created["ref"], other["ref"]], timeout_s=20)
        outcome["returned_at"] = time.monotonic()

    async with anyio.create_task_group() as group:
        group.start_soon(wait)
        await anyio.run_process([sys.executable, "-c", WRITER, str(state_root), created["ref"]], cwd=ROOT)
        published_at = time.monotonic()
    result = outcome["result"]
    assert isinstance(result, dict)
    assert result["arrived"] == [f"{created['ref']} REPORT.md"]
    assert result["pending"] == [other["ref"]]
    assert result["timed_out"] is False
    assert outcome["returned_at"] - published_at <= 1.0


async def test_it_gives_up_at_its_timeout(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    started = time.monotonic()
    result = await call(lead, "wait_for_reports", refs=[created["ref"]], timeout_s=0.3)
    elapsed = time.monotonic() - started
    assert result["timed_out"] is True
    assert result["arrived"] == []
    assert 0.3 <= elapsed < 1.3


async def test_a_release_also_ends_the_wait(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    await call(lead, "release_writer", ref=created["ref"], kind="stopped", evidence="pane 4 exited (code 0)")
    result = await call(lead, "wait_for_reports", refs=[created["ref"]], timeout_s=5)
    assert result["arrived"] == [f"{created['ref']} RELEASE.md"]


async def test_bad_waits_are_refused(lead: Client) -> None:
    created = await call(lead, "create_task", **task_args())
    assert await refused(lead, "wait_for_reports", refs=[created["ref"]], timeout_s=51) == "invalid_input"
    assert await refused(lead, "wait_for_reports", refs=[], timeout_s=1) == "invalid_input"
    ghost = created["ref"].rsplit("/", 1)[0] + "/009-ghost"
    assert await refused(lead, "wait_for_reports", refs=[ghost], timeout_s=1) == "task_not_found"


async def test_force_new_makes_a_new_task_where_a_retry_returns_the_old_one(lead: Client) -> None:
    args = task_args(topic="review", kind="review", workspace="", writable=[])
    first = await call(lead, "create_task", **args)
    retry = await call(lead, "create_task", **args)
    forced = await call(lead, "create_task", force_new=True, session=first["ref"].split("/")[1], **args)
    assert retry["ref"] == first["ref"]
    assert forced["ref"].endswith("/002-review")


async def test_create_task_refuses_a_second_current_writer_with_the_holder(lead: Client) -> None:
    first = await call(lead, "create_task", **task_args())
    result = await lead.call_tool("create_task", task_args(topic="other", goal="Other work."))
    assert result.is_error
    assert "ownership_conflict" in text_of(result)
    assert first["ref"] in text_of(result)


def _stray(kind: str, path: Path) -> None:
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(path.parent / "nowhere.md")


@pytest.mark.parametrize("name", ["REPORT.md", "RELEASE.md"])
@pytest.mark.parametrize("kind", ["empty", "fifo", "dangling-link"])
async def test_a_stray_entry_under_a_closing_name_is_no_arrival(lead: Client, kind: str, name: str) -> None:
    created = await call(lead, "create_task", **task_args())
    stray = Path(created["task_path"]).parent / name
    _stray(kind, stray)
    started = time.monotonic()
    result = await call(lead, "wait_for_reports", refs=[created["ref"]], timeout_s=0.4)
    assert time.monotonic() - started >= 0.4
    assert (result["arrived"], result["pending"], result["timed_out"]) == ([], [created["ref"]], True)
    stray.unlink()
    await call(lead, "write_report", **report_args(created))
    result = await call(lead, "wait_for_reports", refs=[created["ref"]], timeout_s=5)
    assert result["arrived"] == [f"{created['ref']} REPORT.md"]
