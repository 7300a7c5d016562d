"""The board's first paint in Debian's Chromium: from opening the login link to the change list
with its counts on screen, at each tree size beside an empty tree (the floor), alternated.

``python -m bench.board docs/board.png`` instead takes the README's screenshot of a dozen tasks.
"""

from __future__ import annotations

import importlib.util
import shutil
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from bench.loopback import loopback_listener, served
from bench.trees import generate, make_change
from handoff_core.services.writing.store import Store
from server.web.board import BoardAccess, standalone
from server.web.board_model import BoardModel

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]
FLAGS += ["--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOT_TOKEN = "s" * 24


@asynccontextmanager
async def _served(state_root: Path) -> AsyncIterator[tuple[str, BoardAccess, float]]:
    """A board on a free loopback port; yields its base URL, access and the seconds it took to judge the tree."""
    start = time.perf_counter()
    model = BoardModel(Store(state_root).queries, 3)
    model.load()
    judged = time.perf_counter() - start
    access = BoardAccess()
    listener = loopback_listener()
    async with served(standalone(model, access, listener.getsockname()[1]), listener, start_timeout=30) as base:
        yield base, access, judged


async def _paint(browser: Any, base: str, access: BoardAccess) -> float:
    page = await browser.new_page()
    start = time.perf_counter()
    await page.goto(f"{base}/board?token={access.login_token()}")
    await page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    seconds = time.perf_counter() - start
    await page.close()
    return seconds


async def _measure(roots: dict[int, Path], repeats: int) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    times: dict[int, list[float]] = {size: [] for size in roots}
    async with async_playwright() as playwright, _many(roots) as servers:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        judged = {size: seconds for size, (_, _, seconds) in servers.items()}
        for _ in range(repeats):  # alternate the sizes within the run
            for size, (base, access, _) in servers.items():
                times[size].append(await _paint(browser, base, access))
        await browser.close()
    return {
        str(size): {"paint_p50_s": round(statistics.median(values), 3), "judge_s": round(judged[size], 3)}
        for size, values in times.items()
    }


@asynccontextmanager
async def _many(roots: dict[int, Path]) -> AsyncIterator[dict[int, tuple[str, BoardAccess, float]]]:
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        yield {size: await stack.enter_async_context(_served(root)) for size, root in roots.items()}


def run(work: Path, sizes: list[int], repeats: int) -> dict[str, Any]:
    if not Path(CHROMIUM).exists():
        return {"skipped": "Debian's chromium is not installed"}
    if importlib.util.find_spec("playwright") is None:
        return {"skipped": "playwright is not installed (pip install -e '.[dev]')"}
    roots = {0: work / "board-0" / "speculo" / ".speculo"}
    make_change(roots[0])
    for size in sizes:
        roots[size] = work / f"board-{size}" / "speculo" / ".speculo"
        generate(roots[size], size)
    return anyio.run(_measure, roots, repeats)


def _mixed_tree(project: Path) -> Store:
    """A dozen tasks in every state the board tells apart."""
    from dataclasses import replace

    from bench.requests import DEMO, implementation, review
    from handoff_core.contract.proof import signing_key
    from handoff_core.contract.report import Report
    from handoff_core.contract.scope import Scope

    state_root = project / "speculo" / ".speculo"
    make_change(state_root, DEMO)
    store = Store(state_root, project)
    for topic, globs in (("implement-a1", ("src/a1/**",)), ("docs-pass", ("docs/**",))):  # two writers side by side
        store.create_task(implementation(topic, scope=Scope(workspace="required", writable=globs), writer_limit=2))
    focus = "Read the diff. Found two issues. Stopped after the review. Next: fix them."
    session = store.create_task(review("audit-1")).ref.session  # one review round, several outcomes
    for index, status in enumerate(["completed", "completed", "blocked", "failed", "cancelled"]):
        request = review(f"review-{index + 1}", session=session)  # its REPORT proven, as a server's is
        ref = store.create_task(replace(request, signing_key=lambda _: signing_key(SCREENSHOT_TOKEN))).ref
        store.write_report(
            Report(
                session=ref.session,
                task=ref.task,
                status=status,
                focused=focus,
                artifacts="notes.md",
                verification="read only",
            ),
            ref.change,
            token=SCREENSHOT_TOKEN,
        )
    for index in range(2):
        store.create_task(review(f"audit-{index + 2}", session=session))
    store.release_writer(store.create_task(review("probe")).ref, "none", "the executor never started")
    stray = store.create_task(review("stray", session=session)).ref
    (store.roots.task_dir(stray) / "REPORT.md").write_text("half a report\n")
    return store


async def _screenshot(project: Path, target: Path) -> None:
    from playwright.async_api import async_playwright

    _mixed_tree(project)
    async with _served(project / "speculo" / ".speculo") as (base, access, _), async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = await browser.new_page(viewport={"width": 1400, "height": 900})
        await page.goto(f"{base}/board?token={access.login_token()}")
        await page.wait_for_selector("body[data-ready='1']")
        await page.click("details.change > summary")
        await page.wait_for_selector("tr.task")
        await page.click("tr.task:has(.state.completed) >> nth=0")  # a REPORT, its Chinese headings drawn
        await page.wait_for_selector("#detail:not([hidden]) pre")
        await page.screenshot(path=str(target), full_page=False)
        await browser.close()


def main() -> int:
    import tempfile

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/board.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="handoff-board-") as tmp:
        anyio.run(_screenshot, Path(tmp) / "project", target)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
