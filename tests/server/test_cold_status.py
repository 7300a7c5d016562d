"""A cold Lead's handoff_status: the page of a fully judged answer, at once, and how many tasks it
has not yet judged, falling to 0 as its server judges them after the answer."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client

from bench.trees import generate
from handoff_core.services.tree.status_rows import read_rows, save_rows
from handoff_core.services.tree.verdicts import Shared, Verdicts
from handoff_core.services.writing.store import Store
from server.config import Settings
from server.mcp import summaries
from server.mcp.app import HandoffServer, build_server
from server.mcp.tools import shared
from tests.support.calls import call

pytestmark = pytest.mark.anyio


async def test_a_cold_answer_says_how_many_tasks_it_has_not_judged_until_none_are_left(
    state_root: Path, settings_for: Callable[[str], Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    generate(state_root, 600)  # every third returned, the rest dispatched
    full = Store(state_root).queries.status()
    monkeypatch.setattr(Verdicts.__init__, "__defaults__", (0.0,))  # the new server's files count as settled
    async with Client(build_server(settings_for("lead")), mode="legacy") as lead:
        first = await call(lead, "handoff_status", view="all")
        assert 0 < first["unjudged"] < 600
        assert first["counts"] == {"dispatched": 400, "returned:completed": 200}
        assert first["free_writer_slots"] == 1  # no claims: one writer without writer_limit, as create_task admits
        assert first["writers"].startswith("free writer slots: 1 without writer_limit; 3 with writer_limit=3")
        assert [t["ref"] for t in first["tasks"]] == [str(t.ref) for t in sorted(full, key=str)][: len(first["tasks"])]
        seen = [first["unjudged"]]
        deadline = time.monotonic() + 120
        while seen[-1] and time.monotonic() < deadline:  # bounded: the server judges on a thread of its own
            await anyio.sleep(0.05)
            seen.append((await call(lead, "handoff_status", view="all"))["unjudged"])
        last = await call(lead, "handoff_status", view="all")
    assert seen[-1] == 0
    assert seen == sorted(seen, reverse=True)
    assert (last["counts"], last["next_cursor"]) == (first["counts"], first["next_cursor"])
    assert [t["ref"] for t in last["tasks"]] == [t["ref"] for t in first["tasks"]]


async def test_the_background_judging_begins_only_once_the_answer_is_made(
    state_root: Path, settings_for: Callable[[str], Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    generate(state_root, 300)
    monkeypatch.setattr(Verdicts.__init__, "__defaults__", (0.0,))  # the new server's files count as settled
    judging = threading.Event()
    judge = Verdicts.judge

    def judged_where(self: Verdicts, *args: object, **kwargs: object) -> object:
        if threading.current_thread().name == "handoff-judge":
            judging.set()
        return judge(self, *args, **kwargs)  # type: ignore[arg-type]

    order: list[str] = []

    def summary(answer: dict[str, object]) -> str:
        # The last step of making the answer: the judging must not have begun, however long it lasts.
        order.append("judging began during the answer" if judging.wait(0.5) else "answer made")
        return summaries.status_summary(answer)

    monkeypatch.setattr(Verdicts, "judge", judged_where)
    monkeypatch.setattr(shared, "status_summary", summary)
    async with Client(build_server(settings_for("lead")), mode="legacy") as lead:
        first = await call(lead, "handoff_status", view="all")
        assert first["unjudged"] > 0
        assert await anyio.to_thread.run_sync(judging.wait, 60)  # bounded: then it judges
    assert order == ["answer made"]


async def test_a_restarted_lead_server_reads_its_status_rows_ahead_once_its_tools_are_listed(
    state_root: Path, settings_for: Callable[[str], Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    generate(state_root, 30)
    monkeypatch.setattr(Verdicts.__init__, "__defaults__", (0.0,))  # the new server's files count as settled
    first = build_server(settings_for("lead"))
    assert isinstance(first, HandoffServer)
    await first.call_tool("handoff_status", {})
    assert first.services().queries.wait_judged(60)  # judged in full, and kept as rows
    saved_basis, rows = read_rows(state_root, Shared())
    assert len(rows) == 30
    save_rows(state_root, saved_basis, [(*row[:4], row[4]._replace(notes=("kept",))) for row in rows])
    restarted = build_server(settings_for("lead"))
    assert isinstance(restarted, HandoffServer)
    await restarted.list_tools()
    for thread in threading.enumerate():
        if thread.name == "handoff-rows":
            thread.join(60)
    save_rows(state_root, saved_basis, [])  # kept no more: only the rows read ahead say "kept"
    assert {t.notes for t in restarted.services().queries.status()} == {("kept",)}
