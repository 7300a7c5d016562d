"""The board: one-time login, live updates, untrusted text shown inert; Debian's Chromium via Playwright."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from bench.loopback import loopback_listener, served
from bench.requests import implementation, report_of, review
from handoff_core.contract.proof import signing_key
from handoff_core.contract.scope import Scope
from handoff_core.services.writing.store import Store
from server.mcp.app import build_server
from server.web.board import MAX_STREAMS, BoardAccess, standalone
from server.web.board_model import BoardModel
from server.web.watcher import Changes, watch_board
from tests.support.calls import call, task_args
from tests.support.changes import CHANGE
from tests.support.gitrepo import FOCUS, add_worktree, commit_all, make_repo, write
from tests.support.surfaces import audited_and_failed

pytestmark = pytest.mark.anyio
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class Board:
    base: str
    access: BoardAccess

    def login_url(self) -> str:
        return f"{self.base}/board?token={self.access.login_token()}"


@pytest.fixture
async def board(store: Store) -> AsyncIterator[Board]:
    model = BoardModel(store.queries, 3)
    model.load()
    access = BoardAccess()
    listener = loopback_listener()
    async with served(standalone(model, access, listener.getsockname()[1]), listener) as base:
        yield Board(base, access)


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    if not Path(CHROMIUM).exists() and os.environ.get("HANDOFF_BROWSER") == "skip":
        pytest.skip("chromium is missing and scripts/test could not install it without root (see its message)")
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is needed (scripts/test installs it with apt-get as root)")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


async def test_the_login_link_works_once_and_nothing_else_opens_the_board(board: Board) -> None:
    url = board.login_url()
    async with httpx2.AsyncClient() as http:
        assert (await http.get(f"{board.base}/board")).status_code == 401
        assert (await http.get(f"{board.base}/board?token=guess")).status_code == 401
        assert (await http.get(f"{board.base}/board/api/summary")).status_code == 401
        first = await http.get(url)
        assert first.status_code == 303
        assert "handoff_board" in first.headers["set-cookie"]
        assert "HttpOnly" in first.headers["set-cookie"]
        page = await http.get(f"{board.base}/board")  # the client kept the session cookie
        assert page.status_code == 200
        assert "script-src 'self'" in page.headers["content-security-policy"]
    async with httpx2.AsyncClient() as stranger:
        assert (await stranger.get(url)).status_code == 401  # spent


async def test_a_task_written_before_the_watcher_started_is_on_the_board_once_it_has(store: Store) -> None:
    model = BoardModel(store.queries, 3)
    model.load()
    store.create_task(implementation())  # after the first judgement, before any watch: no event
    stop = anyio.Event()
    async with anyio.create_task_group() as group:
        with anyio.fail_after(10):  # a bounded wait for the watches to be in place
            await group.start(watch_board, model, Changes(), stop)
        stop.set()
    assert model.summary()["total"] == 1


async def test_a_task_in_a_new_round_written_right_after_start_up_reaches_the_board(board: Board, store: Store) -> None:
    async with httpx2.AsyncClient() as http:
        await http.get(board.login_url())
        with anyio.fail_after(20):  # a bounded wait for the watcher's batch
            async with http.stream("GET", f"{board.base}/board/events") as events:
                lines = events.aiter_lines()
                await anext(lines)  # the version now: the stream is open before the files appear
                store.create_task(implementation())
                while (await http.get(f"{board.base}/board/api/summary")).json()["total"] != 1:
                    await anext(lines)
        (change,) = (await http.get(f"{board.base}/board/api/summary")).json()["changes"]
    assert change["counts"] == {"dispatched": 1}


@pytest.mark.slow
async def test_the_page_loads_with_the_token_and_is_refused_without(board: Board, browser: Any, store: Store) -> None:
    store.create_task(implementation())
    page = await browser.new_page()
    await page.goto(board.login_url())
    await page.wait_for_selector("body[data-ready='1']", timeout=5000)
    assert "2026-11-30-demo" in await page.inner_text("#changes")
    assert "dispatched" in await page.inner_text("#totals")
    assert "current: src/a1/**" in await page.inner_text("#claims")
    other = await browser.new_context()
    refused = await other.new_page()
    answer = await refused.goto(f"{board.base}/board")
    assert answer is not None
    assert answer.status == 401


@pytest.mark.slow
async def test_a_report_published_through_the_executor_tools_appears_within_two_seconds(
    board: Board, browser: Any, store: Store, settings_for: Any
) -> None:
    async with Client(build_server(settings_for("lead"))) as lead:
        created = await call(lead, "create_task", **task_args_review())
    page = await browser.new_page()
    await page.goto(board.login_url())
    await page.wait_for_selector("body[data-ready='1']", timeout=5000)
    await page.click("details.change > summary")
    await page.wait_for_selector(f"tr[data-ref='{created['ref']}']", timeout=5000)
    async with Client(build_server(settings_for("executor"))) as executor:
        await call(executor, "write_report", **report_for(created))
    with anyio.fail_after(5):
        await page.wait_for_selector(
            f"tr[data-ref='{created['ref']}'] .state.completed", timeout=2000
        )  # within 2 s of the publish


@pytest.mark.slow
async def test_a_report_with_script_and_bidi_controls_renders_inert_and_visible(
    board: Board, browser: Any, settings_for: Any
) -> None:
    async with Client(build_server(settings_for("lead"))) as lead:
        created = await call(lead, "create_task", **task_args_review())
    hostile = "Done <script>window.__pwned = 1</script>. Kept \u202eevil\u202c the API. Stopped. Next: merge."
    async with Client(build_server(settings_for("executor"))) as executor:
        await call(executor, "write_report", **report_for(created, focused=hostile))
    page = await browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    await page.goto(board.login_url())
    await page.wait_for_selector("body[data-ready='1']", timeout=5000)
    await page.click("details.change > summary")
    await page.click(f"tr[data-ref='{created['ref']}']")
    await page.wait_for_selector("#detail:not([hidden]) pre", timeout=5000)
    shown = await page.inner_text("#detail-body")
    assert "<script>window.__pwned = 1</script>" in shown
    assert "⟦U+202E⟧" in shown
    assert "\u202e" not in shown
    assert await page.evaluate("window.__pwned === undefined")
    assert await page.locator("#detail script").count() == 0
    assert dialogs == []


def task_args_review() -> dict[str, Any]:
    return {
        "change": "2026-11-30-demo",
        "topic": "review-board",
        "kind": "review",
        "goal": "Review the board.",
        "inputs": "the diff",
        "acceptance": "findings listed",
    }


def report_for(
    created: dict[str, Any], focused: str = "Read it. Found nothing. Stopped. Next: merge."
) -> dict[str, Any]:
    return {
        "ref": created["ref"],
        "token": created["report_token"],
        "task_sha256": created["task_sha256"],
        "status": "completed",
        "focused": focused,
        "artifacts": "none",
        "verification": "read only",
    }


def test_a_file_event_re_judges_only_the_task_it_touched(store: Store) -> None:
    first = store.create_task(review("review-a")).ref
    second = store.create_task(review("review-b")).ref
    model = BoardModel(store.queries, 3)
    model.load()
    before = model.tasks[str(second)]
    (store.roots.task_dir(first) / "RELEASE.md").write_text("x")  # a stray file: the task turns invalid
    model.refresh({first})
    assert model.tasks[str(second)] is before
    assert model.tasks[str(first)][0].state == "invalid"


# Characters a person cannot see: tag characters, line and paragraph separators, a filler, a
# grapheme joiner, variation selectors.
INVISIBLE: tuple[str, ...] = ("\U000e0001", "\U000e0020", "\U000e0041", "\U000e0061", "\U000e007f")
INVISIBLE += ("\u2028", "\u2029", "\u3164", "\u034f", "\ufe0f", "\ufe00")


@pytest.mark.slow
async def test_a_report_written_into_the_tree_shows_every_invisible_character_spelled_out(
    board: Board, browser: Any, store: Store
) -> None:
    stored = store.create_task(review("review-invisible"))
    ref = stored.ref
    hidden = "".join(f"w{index}{char}" for index, char in enumerate(INVISIBLE))
    head = f"# 任务回报\n\nSession: {ref.session}\nTask: {ref.task}\nStatus: completed\n\n"
    body = f"{head}## 聚焦交接\n\nRead {hidden} end.\n"
    stored.path.with_name("REPORT.md").write_text(body)  # by hand: a hostile tree, not the writer
    page = await browser.new_page()
    await page.goto(board.login_url())
    await page.wait_for_selector("body[data-ready='1']", timeout=5000)
    await page.click("details.change > summary")
    await page.click(f"tr[data-ref='{ref}']")
    await page.wait_for_selector("#detail:not([hidden]) pre", timeout=5000)
    shown = await page.inner_text("#detail-body")
    missing = [f"U+{ord(char):04X}" for char in INVISIBLE if f"⟦U+{ord(char):04X}⟧" not in shown or char in shown]
    assert missing == []


async def test_one_board_login_holds_a_bounded_number_of_live_streams(board: Board) -> None:
    async with httpx2.AsyncClient() as http, AsyncExitStack() as streams:
        await http.get(board.login_url())
        with anyio.fail_after(10):
            for _ in range(MAX_STREAMS):
                opened = await streams.enter_async_context(http.stream("GET", f"{board.base}/board/events"))
                assert opened.status_code == 200
            refused = await http.get(f"{board.base}/board/events")
    assert refused.status_code == 429


def test_a_report_that_is_not_proven_and_a_failed_audit_are_flagged_on_the_board(store: Store) -> None:
    project = store.roots.project_root
    make_repo(project)
    tree = add_worktree(project, "task-a")
    scope = Scope(workspace="required", writable=("src/a1/**",), worktree=str(tree), branch="task-a")
    request = implementation(scope=scope)
    ref = store.create_task(replace(request, signing_key=lambda _: signing_key("t" * 24))).ref
    write(tree, "src/b/other.py", "not this task's\n")
    checkpoint = commit_all(tree)
    report = report_of(
        ref, status="completed", focused=FOCUS, artifacts="x", verification="y", source_checkpoint=checkpoint
    )
    store.write_report(report, ref.change)  # no token: written as by hand, so its proof is absent
    model = BoardModel(store.queries, 3)
    model.load()
    (row,) = model.page(ref.change, 0)["tasks"]
    assert row["problems"][-2:] == ["REPORT proof: absent", "audit: failed"]
    assert row["attention"].startswith("audit failed")
    assert (row["audit"], model.detail(ref)["report"]["proof"]) == ("failed", "absent")


def test_a_folded_change_counts_a_failed_audit_as_needing_attention(store: Store) -> None:
    ref = audited_and_failed(store)  # proven: only the audit fails it
    model = BoardModel(store.queries, 3)
    model.load()
    summary = model.summary()  # no page asked for: the change is folded
    (change,) = summary["changes"]
    assert (summary["attention"], change["attention"]) == (1, 1)
    assert model.audits == {str(ref): "failed"}


def test_the_board_shows_the_writer_slots_create_task_admits(store: Store) -> None:
    store.create_task(implementation())  # current, no writer_limit: the one writer it may have
    model = BoardModel(store.queries, 3)
    model.load()
    summary = model.summary()
    assert summary["free_writer_slots"] == 0
    assert summary["writers"].startswith("free writer slots: 0 without writer_limit; 2 with writer_limit=3")


@pytest.mark.slow
async def test_with_the_panel_open_at_1400_by_900_the_columns_fit_and_the_timeline_has_a_scale(
    board: Board, browser: Any, store: Store, settings_for: Any
) -> None:
    async with Client(build_server(settings_for("lead"))) as lead:
        wide = {"workspace": "required", "writer_limit": 3, "shared": []}
        first = await call(
            lead,
            "create_task",
            **task_args(topic="parser-rewrite", writable=["src/parser/**", "tests/parser/**"], **wide),
        )
        session = first["ref"].split("/")[1]
        await call(
            lead, "create_task", **task_args(topic="docs-pass", writable=["docs/**/*.md"], session=session, **wide)
        )
        review_task = await call(lead, "create_task", **{**task_args_review(), "session": session})
    async with Client(build_server(settings_for("executor"))) as executor:
        await call(executor, "write_report", **report_for(review_task))
    page = await browser.new_page(viewport={"width": 1400, "height": 900})
    await page.goto(board.login_url())
    await page.wait_for_selector("body[data-ready='1']", timeout=5000)
    await page.click("details.change > summary")
    await page.click(f"tr[data-ref='{review_task['ref']}']")
    await page.wait_for_selector("#detail:not([hidden]) pre", timeout=5000)
    overflow = await page.evaluate(
        "[...document.querySelectorAll('details.change > .body, .body .scroll')]"
        ".map((s) => s.scrollWidth - s.clientWidth)"
    )
    assert overflow  # the change's body and its table's box
    assert max(overflow) <= 0  # every column beside the open panel, none hidden under it
    broken = await page.evaluate(
        """[...document.querySelectorAll('td.scope span, tr.task td:nth-child(-n+4)')].filter((e) => {
             const range = document.createRange(); range.selectNodeContents(e);
             return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
           }).map((e) => e.textContent)"""
    )
    assert broken == []  # no glob, id, kind or state is wrapped mid-way
    assert await page.inner_text("th.when .scale") == "47m ago\n23m\nnow" or "now" in await page.inner_text(
        "th.when .scale"
    )
    panel = await page.inner_text("#detail-body")
    assert "(artifacts and verification)" in panel
    assert "(problems and next steps)" in panel
    assert "任务简报 = task brief" in panel


async def test_a_bad_query_is_answered_with_its_code_never_a_server_error(board: Board) -> None:
    async with httpx2.AsyncClient() as http:
        await http.get(board.login_url())
        answers = [
            await http.get(f"{board.base}/board/api/tasks", params={"offset": "ten"}),
            await http.get(f"{board.base}/board/api/tasks", params={"offset": "-1"}),
            await http.get(f"{board.base}/board/api/task", params={"ref": "not/a/ref"}),
            await http.get(f"{board.base}/board/api/task", params={"ref": f"{CHANGE}/20261130T044500Z/001-ghost"}),
        ]
    assert [(answer.status_code, answer.json()["code"]) for answer in answers] == [
        (400, "invalid_input"),
        (400, "invalid_input"),
        (400, "invalid_id"),
        (404, "task_not_found"),
    ]


async def opened(browser: Any, board: Board, width: int = 1400) -> Any:
    page = await browser.new_page(viewport={"width": width, "height": 900})
    await page.goto(board.login_url())
    await page.wait_for_selector("body[data-ready='1']", timeout=5000)
    return page


@pytest.mark.slow
async def test_a_completed_return_whose_audit_failed_is_never_the_green_of_a_good_one(
    board: Board, browser: Any, store: Store, settings_for: Any
) -> None:
    failed = audited_and_failed(store)
    async with Client(build_server(settings_for("lead"))) as lead:
        good = await call(lead, "create_task", **task_args_review())
    async with Client(build_server(settings_for("executor"))) as executor:
        await call(executor, "write_report", **report_for(good))
    page = await opened(browser, board)
    await page.wait_for_selector("details.change .chip.attention", timeout=5000)  # folded: the summary says it
    assert "needs attention 1" in await page.inner_text("details.change > summary")
    await page.click("details.change > summary")
    colour = "(ref) => getComputedStyle(document.querySelector(`tr[data-ref='${ref}'] .state`)).color"
    await page.wait_for_selector(f"tr[data-ref='{good['ref']}'] .state", timeout=5000)
    green = await page.evaluate(colour, good["ref"])
    flagged = await page.evaluate(colour, str(failed))
    assert await page.inner_text(f"tr[data-ref='{failed}'] .state") == "returned:completed"
    assert green == "rgb(26, 127, 55)"
    assert flagged != green
    assert "audit: failed" in await page.inner_text(f"tr[data-ref='{failed}']")


@pytest.mark.slow
async def test_the_rounds_of_a_change_share_one_column_grid(
    board: Board, browser: Any, store: Store, settings_for: Any
) -> None:
    async with Client(build_server(settings_for("lead"))) as lead:
        await call(lead, "create_task", **task_args(topic="a-much-longer-topic-name-for-the-first-round"))
        await call(lead, "create_task", **{**task_args_review(), "topic": "x", "new_round": True})  # its own round
    page = await opened(browser, board)
    await page.click("details.change > summary")
    await page.wait_for_selector("tr.task >> nth=1", timeout=5000)
    lefts = await page.evaluate(
        "[...document.querySelectorAll('tr.task')]"
        ".map((tr) => [...tr.cells].map((c) => Math.round(c.getBoundingClientRect().left)))"
    )
    rounds = await page.evaluate(
        "new Set([...document.querySelectorAll('tr.task')].map((tr) => tr.dataset.ref.split('/')[1])).size"
    )
    assert rounds == 2
    assert lefts[0] == lefts[1]  # every column starts at the same place in both rounds


# Draws a string with the font an element uses and returns its pixels' digest: a string the fonts lack is drawn
# as one missing-glyph box per character, the same box whatever the character.
DRAWN = """([selector, text]) => {
  const canvas = document.createElement('canvas'); canvas.width = 400; canvas.height = 60;
  const context = canvas.getContext('2d');
  context.font = getComputedStyle(document.querySelector(selector)).font;
  context.fillText(text, 4, 40);
  let hash = 0;
  for (const value of context.getImageData(0, 0, 400, 60).data) hash = (hash * 31 + value) | 0;
  return hash;
}"""


@pytest.mark.slow
async def test_the_seeds_chinese_headings_are_drawn_as_glyphs_not_boxes(
    board: Board, browser: Any, settings_for: Any
) -> None:
    async with Client(build_server(settings_for("lead"))) as lead:
        created = await call(lead, "create_task", **task_args_review())
    async with Client(build_server(settings_for("executor"))) as executor:
        await call(executor, "write_report", **report_for(created))
    page = await opened(browser, board)
    await page.click("details.change > summary")
    await page.click(f"tr[data-ref='{created['ref']}']")
    await page.wait_for_selector("#detail:not([hidden]) h4", timeout=5000)
    heading = (await page.inner_text("#detail-body h4 >> nth=0"))[:4]
    assert heading == "聚焦交接"
    missing = "\u0378" * 4  # unassigned in Unicode: no font has it, every browser draws its missing-glyph box
    for selector in ("#detail-body h4", "#detail-body pre"):
        drawn = [await page.evaluate(DRAWN, [selector, text]) for text in (heading, missing, *heading)]
        assert drawn[0] != drawn[1], (
            f"{selector}: the heading is drawn as missing-glyph boxes: no CJK font (apt-get install fonts-noto-cjk)"
        )
        assert len(set(drawn[2:])) == 4, f"{selector}: its four characters are drawn alike (boxes)"
