"""Held verdicts: a warm status reuses what has not changed and re-judges whatever has."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.verdicts import Verdicts
from handoff_core.services.writing.store import Store
from tests.conftest import CHANGE, implementation, report_of, review

FOCUS = "Read it. Found two issues. Stopped. Next: fix."


@pytest.fixture
def warm(store: Store) -> Queries:
    """A second reader of the same tree whose verdicts count as settled at once."""
    return Queries(store.roots, Verdicts(settle_seconds=0))


def returned(store: Store) -> Path:
    ref = store.create_task(review()).ref
    store.write_report(
        report_of(ref, status="completed", focused=FOCUS, artifacts="none", verification="ok"),
        CHANGE,
    )
    return store.roots.task_dir(ref) / "REPORT.md"


def test_a_second_status_reuses_every_verdict_and_answers_the_same(store: Store, warm: Queries) -> None:
    returned(store)
    store.create_task(implementation())
    first = warm.status()
    second = warm.status()
    assert second == first == store.queries.status()
    assert all(again is before for again, before in zip(second, first, strict=True))


def test_a_report_changed_in_place_is_judged_again(store: Store, warm: Queries) -> None:
    report = returned(store)
    assert [t.label for t in warm.status()] == ["returned:completed"]
    report.chmod(0o644)
    report.write_text(report.read_text().replace("completed", "blocked", 1))
    assert [t.label for t in warm.status()] == ["returned:blocked"]


def after_a_clock_tick(path: Path, scratch: Path) -> None:
    """Touch ``scratch`` until the file system's clock has moved past ``path``'s ctime (bounded)."""
    for _ in range(100_000):
        scratch.write_bytes(b"")
        if scratch.stat().st_ctime_ns > path.stat().st_ctime_ns:
            return
    raise AssertionError("the file system's clock did not move")


def test_a_report_changed_in_place_with_its_size_and_mtime_kept_is_judged_again(
    store: Store, warm: Queries, tmp_path: Path
) -> None:
    report = returned(store)
    warm.status()
    before = report.stat()
    after_a_clock_tick(report, tmp_path / "scratch")  # a write in the same tick is what settling guards
    report.chmod(0o644)
    report.write_text(report.read_text().replace("completed", "cancelled", 1))  # the same length
    report.chmod(before.st_mode & 0o777)
    os.utime(report, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = report.stat()
    assert (after.st_ino, after.st_mode, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_mode,
        before.st_size,
        before.st_mtime_ns,
    )
    assert [t.label for t in warm.status()] == ["returned:cancelled"]


def test_a_replaced_report_is_judged_again(store: Store, warm: Queries, tmp_path: Path) -> None:
    report = returned(store)
    warm.status()
    other = tmp_path / "other.md"
    other.write_text(report.read_text().replace("completed", "failed", 1))
    report.unlink()
    os.link(other, report)
    other.unlink()
    assert [t.label for t in warm.status()] == ["returned:failed"]


def test_a_new_hard_link_to_a_held_file_is_judged_again(store: Store, warm: Queries, tmp_path: Path) -> None:
    report = returned(store)
    assert warm.status()[0].problems == ()
    os.link(report, tmp_path / "second-name.md")
    (found,) = warm.status()
    assert found.state == "invalid"
    assert any("hard links" in problem for problem in found.problems)


def test_a_temp_file_appearing_beside_held_files_is_seen(store: Store, warm: Queries) -> None:
    report = returned(store)
    warm.status()
    (report.parent / ".REPORT.md.0123456789abcdef.tmp").write_text("partial")
    assert warm.status()[0].temp_files == (".REPORT.md.0123456789abcdef.tmp",)


def test_a_verdict_on_files_younger_than_the_settle_time_is_not_held(store: Store) -> None:
    returned(store)
    verdicts = Verdicts()  # two seconds: these files were written just now
    Queries(store.roots, verdicts).status()
    assert len(verdicts) == 0


def test_forgetting_every_verdict_changes_no_answer(store: Store, warm: Queries) -> None:
    returned(store)
    store.create_task(implementation())
    held = warm.status()
    assert Queries(store.roots, Verdicts(settle_seconds=0)).status() == held
