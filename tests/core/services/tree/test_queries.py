"""The read side: status, arrivals, state files, project paths and the text that proves a log."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from bench.requests import implementation, report_of, review
from handoff_core.contract.ids import Ref
from handoff_core.contract.report import render_report
from handoff_core.errors import HandoffError, InvalidContent, TaskNotFound, UnsafePath
from handoff_core.services.tree.queries import _no_cycle_collection
from handoff_core.services.tree.waiting import wait_for_reports
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE

FOCUS = "Read it. Found two issues. Stopped. Next: fix."


def test_status_labels_a_returned_task_with_its_report_status(store: Store) -> None:
    ref = store.create_task(review()).ref
    store.write_report(
        report_of(ref, status="blocked", focused=FOCUS, artifacts="none", verification="read only"),
        CHANGE,
    )
    (found,) = store.queries.status()
    assert (found.state, found.report_status, found.label) == ("returned", "blocked", "returned:blocked")
    assert not found.outstanding


def test_status_of_an_outstanding_implementation_task_shows_its_claim(store: Store) -> None:
    store.create_task(implementation())
    (found,) = store.queries.status()
    assert (found.label, found.claims_writer) == ("dispatched", True)


def test_arrivals_name_the_file_that_ended_each_task(store: Store) -> None:
    reported = store.create_task(review("review-a")).ref
    released = store.create_task(implementation()).ref
    waiting = store.create_task(review("review-b")).ref
    store.write_report(
        report_of(reported, status="completed", focused=FOCUS, artifacts="none", verification="ok"),
        CHANGE,
    )
    store.release_writer(released, "none", "the executor never started")
    assert store.queries.arrivals([reported, released, waiting]) == {reported: "REPORT.md", released: "RELEASE.md"}


def test_reading_a_task_that_was_never_dispatched_says_so(store: Store) -> None:
    ref = store.create_task(review()).ref
    (store.roots.task_dir(ref) / "TASK.md").chmod(0o644)
    (store.roots.task_dir(ref) / "TASK.md").unlink()
    with pytest.raises(TaskNotFound) as caught:
        store.queries.read_task(ref)
    assert caught.value.code == "task_not_found"


def test_a_state_file_that_is_not_there_reads_as_none(store: Store) -> None:
    assert store.queries.read_state_file("coordination", "project.json") is None


@pytest.mark.parametrize("relative", ["/etc/passwd", "../outside", "src/../../x", "a//b", "./a"])
def test_a_project_path_that_could_escape_is_refused(store: Store, relative: str) -> None:
    with pytest.raises(InvalidContent):
        store.queries.project_has(relative)


def test_a_project_path_is_found_and_a_link_on_the_way_is_refused(store: Store, project: Path, tmp_path: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "a.md").write_text("a")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "b.md").write_text("b")
    (project / "linked").symlink_to(tmp_path / "elsewhere")
    assert store.queries.project_has("docs/a.md")
    assert not store.queries.project_has("docs/missing.md")
    with pytest.raises(UnsafePath):
        store.queries.project_has("linked/b.md")


def test_a_log_proves_itself_by_the_ref_or_the_task_path_in_both_forms(store: Store, project: Path) -> None:
    ref = store.create_task(review()).ref
    needles = store.queries.log_needles(ref)
    task = store.roots.task_dir(ref) / "TASK.md"
    assert needles == [str(ref), f"{ref.session}/{ref.task}", str(task.relative_to(project)), str(task)]


def test_only_directories_with_a_change_id_are_changes(store: Store, state_root: Path) -> None:
    (state_root / "specdev" / "changes" / "notes").mkdir()
    assert store.queries.changes() == [CHANGE]


def test_a_walk_leaves_the_cycle_collector_as_it_found_it_even_when_it_fails(store: Store) -> None:
    store.create_task(review())
    store.queries.status()
    assert gc.isenabled()
    with pytest.raises(HandoffError):
        store.queries.status("2026-01-01-missing")
    assert gc.isenabled()
    gc.disable()
    try:
        store.queries.claims()
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.anyio
async def test_waiting_reads_the_files_off_the_event_loop(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    ref = store.create_task(implementation()).ref
    readers: set[threading.Thread] = set()
    arrivals = store.queries.arrivals

    def recording(refs: list[Ref]) -> dict[Ref, str]:
        readers.add(threading.current_thread())
        return arrivals(refs)

    monkeypatch.setattr(store.queries, "arrivals", recording)
    result = await wait_for_reports(store.queries, [ref], timeout=0.05)
    assert result.timed_out
    assert readers
    assert threading.current_thread() not in readers


def test_a_stray_report_rewritten_in_place_into_a_real_one_arrives(store: Store) -> None:
    ref = store.create_task(review()).ref
    path = store.roots.task_dir(ref) / "REPORT.md"
    path.write_text("")
    assert store.queries.arrivals([ref]) == {}
    assert store.queries.arrivals([ref]) == {}  # judged by its stat now, not read again
    with path.open("w") as handle:  # the same file, now holding a report of this task
        handle.write(
            render_report(report_of(ref, status="completed", focused=FOCUS, artifacts="none", verification="ok"))
        )
    assert store.queries.arrivals([ref]) == {ref: "REPORT.md"}


def test_the_cycle_collector_stays_paused_until_the_last_of_overlapping_walks_ends() -> None:
    rows_read_ahead, walk = _no_cycle_collection(), _no_cycle_collection()
    rows_read_ahead.__enter__()  # on a thread of its own, begun before the walk and done while it runs
    walk.__enter__()
    rows_read_ahead.__exit__(None, None, None)
    try:
        assert not gc.isenabled()
    finally:
        walk.__exit__(None, None, None)
    assert gc.isenabled()
