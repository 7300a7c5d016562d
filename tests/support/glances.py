"""Trees for the status tests: histories, odd files, old times, replies, and a cold reader."""

from __future__ import annotations

import gc
import os
import sys
import time
from pathlib import Path
from types import FunctionType, ModuleType

from bench.requests import implementation, report_of, review
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.verdicts import Verdicts
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE


def rewrite(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.chmod(0o644)
    path.write_text(text.replace(old, new, 1))


def reply(store: Store, ref_status: str, index: int, session: str) -> None:
    ref = store.create_task(review(f"review-{index}", session=session)).ref
    store.write_report(
        report_of(ref, status=ref_status, focused=FOCUS, artifacts="none", verification="read only"),
        CHANGE,
    )


def task_file(store: Store, topic: str) -> Path:
    return next(store.roots.state_root.glob(f"specdev/changes/{CHANGE}/sessions/*/*-{topic}/TASK.md"))


def history(store: Store, reviews: int = 30) -> list[str]:
    """Reviews returned every way, released, outstanding; implementation tasks open and closed."""
    session = store.create_task(review("first")).ref.session
    for index in range(reviews):
        if index % 4 == 0:
            store.create_task(review(f"open-{index}", session=session))
        else:
            reply(store, ("completed", "blocked", "failed")[index % 3], index, session)
    released = store.create_task(review("released", session=session)).ref
    store.release_writer(released, "none", "the executor never started")
    writer = store.create_task(implementation(session=session)).ref
    store.write_report(
        report_of(writer, status="completed", focused=FOCUS, artifacts="src/a1", verification="pytest"),
        CHANGE,
    )
    store.create_task(implementation("implement-a2", session=session))
    return [session]


def cold(store: Store) -> Queries:
    """A fresh server's reader: nothing held, and files count as settled at once."""
    return Queries(store.roots, Verdicts(settle_seconds=0))


NOW_SLACK = 3600.0  # every task in these trees is older than this: none counts as a recent arrival


def odd_files(store: Store) -> None:
    """Tasks whose files a cold walk must read exactly as the full reader does, or leave to it."""
    crlf = task_file(store, "review-1")
    crlf.chmod(0o644)
    crlf.write_bytes(crlf.read_bytes().replace(b"\n", b"\r\n"))
    bom = task_file(store, "review-2")
    bom.chmod(0o644)
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes())
    rewrite(task_file(store, "review-3"), "\n---\n", "\n---\n\xff")  # not UTF-8: its kind is unknown
    report = task_file(store, "review-5").parent / "REPORT.md"
    report.chmod(0o644)
    report.write_bytes(b"```\nStatus: failed\n```\n" + report.read_bytes().replace(b"\n", b"\r\n"))
    (task_file(store, "review-6").parent / ".REPORT.md.0123456789abcdef.tmp").write_text("")
    (task_file(store, "review-7").parent / "session-locator.json").symlink_to("/etc/hostname")
    os.link(task_file(store, "review-10"), store.roots.project_root / "second")
    rewrite(task_file(store, "review-9"), 'kind: "review"', "kind: review")  # the YAML loader's way


def old_times(store: Store) -> None:
    """Every file an hour old: no task is a recent arrival, so the default view shows what is open or wrong."""
    hour_ago = time.time() - NOW_SLACK
    for path in store.roots.state_root.rglob("*"):
        os.utime(path, (hour_ago, hour_ago), follow_symlinks=False)


FOCUS = "Read it. Found two issues. Stopped. Next: fix."


def reachable_bytes(root: object) -> int:
    """``sys.getsizeof`` of every object ``root`` keeps alive, each counted once (shared ones too)."""
    seen: set[int] = set()
    stack = [root]
    total = 0
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, type | ModuleType | FunctionType):
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        stack += gc.get_referents(item)
    return total
