"""Held verdicts: a warm status reuses what has not changed and re-judges whatever has."""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.requests import implementation, report_of, review
from bench.trees import generate
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.files.task_dir import Roots
from handoff_core.layout import KINDS, TASK_STATES
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.status import TaskStatus
from handoff_core.services.tree.verdicts import Shared, Verdicts
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE
from tests.support.glances import reachable_bytes
from tests.support.mappings import rewrite_through, written_mapping

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


HELD_BYTES_PER_TASK = 600  # what a warm server may hold per task, 586 B measured (its RSS adds allocator slack)


def test_a_warm_reader_holds_a_compact_verdict_per_task(tmp_path: Path) -> None:
    generate(tmp_path / "tree", 600)  # reviews in rounds of 100, every third returned
    reader = Queries(Roots(tmp_path / "tree", tmp_path / "tree"), Verdicts(settle_seconds=0))
    assert len(reader.status()) == reader.held_verdicts == 600
    assert reachable_bytes(reader._verdicts) / 600 <= HELD_BYTES_PER_TASK


def test_equal_scopes_and_entry_names_are_held_once_and_answers_stay_equal(store: Store, warm: Queries) -> None:
    for topic in ("review-a1", "review-a2"):
        ref = store.create_task(review(topic)).ref
        store.write_report(
            report_of(ref, status="completed", focused=FOCUS, artifacts="none", verification="ok"), CHANGE
        )
    first, second = warm.status()
    assert first.scope is second.scope
    assert first.report_status is second.report_status
    names = [warm._verdicts.names(*t.ref) for t in (first, second)]
    assert names[0] is names[1]
    assert names[0] == ("REPORT.md", "TASK.md")
    assert [first, second] == store.queries.status()


GLOBS = st.lists(st.sampled_from(["src/**", "docs/*.md", "tests/a1/**"]), max_size=2).map(tuple)
SCOPES = st.builds(Scope, workspace=st.sampled_from([None, "current", "worktree"]), writable=GLOBS, read_only=GLOBS)
STATUSES = st.builds(
    TaskStatus,
    ref=st.builds(Ref, st.just(CHANGE), st.just("20261130T044500Z"), st.sampled_from(["001-a", "002-b"])),
    kind=st.sampled_from([None, *KINDS]).map(lambda k: k and "".join(k)),  # a fresh string, as a parse makes
    state=st.sampled_from(TASK_STATES),
    report_status=st.sampled_from([None, "completed", "blocked"]).map(lambda w: w and "".join(w)),
    scope=st.one_of(st.none(), SCOPES),
    has_locator=st.booleans(),
    temp_files=st.just(()),
    problems=st.lists(st.text(max_size=5), max_size=2).map(tuple),
    outstanding=st.booleans(),
    dispatched_at=st.floats(0, 2e9),
    closed_at=st.one_of(st.none(), st.floats(0, 2e9)),
)


@given(st.lists(STATUSES, min_size=1, max_size=8))
def test_a_shared_status_is_equal_to_the_status_and_equal_parts_are_one_object(statuses: list[TaskStatus]) -> None:
    shared = Shared()
    held = [shared.status(status) for status in statuses]
    assert held == statuses
    for a, b in itertools.combinations(held, 2):
        if a.scope == b.scope and a.scope is not None:
            assert a.scope is b.scope
        if a.report_status == b.report_status:
            assert a.report_status is b.report_status


def test_a_report_edited_through_a_shared_mapping_is_judged_again(store: Store, warm: Queries) -> None:
    report = returned(store)
    with written_mapping(report) as mapping:
        before = report.stat()
        assert [t.label for t in warm.status()] == ["returned:completed"]
        rewrite_through(mapping, b"Status: completed", b"Status: cancelled")
        assert (report.stat().st_ctime_ns, report.stat().st_mtime_ns) == (before.st_ctime_ns, before.st_mtime_ns)
        assert [t.label for t in warm.status()] == ["returned:cancelled"]
    assert [t.label for t in warm.status()] == ["returned:cancelled"] == [t.label for t in store.queries.status()]


def test_verdicts_and_glances_of_tasks_gone_from_the_active_changes_are_dropped(store: Store, warm: Queries) -> None:
    returned(store)
    store.create_task(implementation())
    kept = store.create_task(review("review-kept")).ref
    assert len(warm.status()) == warm.held_verdicts == 3
    shutil.rmtree(store.roots.task_dir(kept))  # a task removed by hand
    assert len(warm.status()) == warm.held_verdicts == 2
    archive = store.roots.state_root / "specdev" / "archive"
    archive.mkdir()
    store.roots.task_dir(kept).parent.parent.parent.rename(archive / CHANGE)
    assert warm.status() == []
    assert warm.held_verdicts == 0
    (archive / CHANGE).rename(store.roots.task_dir(kept).parent.parent.parent)
    cold = Queries(store.roots, Verdicts(settle_seconds=0))
    assert len(cold.status(glancing=True)) == 2
    assert cold._verdicts.glances > 0
    (store.roots.task_dir(kept).parent.parent.parent).rename(archive / CHANGE)
    assert cold.status(glancing=True) == []  # the Lead's answer spends nothing on it: the next full walk drops them
    assert cold.status() == []
    assert cold._verdicts.glances == len(cold._verdicts) == 0


def test_the_changes_held_are_those_of_every_verdict_and_glance_held(store: Store, warm: Queries) -> None:
    returned(store)
    assert warm._verdicts.held_changes() == set()
    warm.status()  # judged in full: verdicts held
    assert warm._verdicts.held_changes() == {CHANGE}
    warm._verdicts._held.clear()
    assert warm._verdicts.held_changes() == set()
    warm.status(glancing=True)  # glanced: glances held
    assert warm._verdicts.held_changes() == {CHANGE}
