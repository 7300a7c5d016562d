"""A cold status glances at settled tasks and judges in full only what its answer shows.

Its page is the page of a fully judged answer, always; its counts and free writer slots are too,
except that a glanced task whose sections turn out invalid is counted by its state until it is
judged: ``unjudged`` says how many such tasks there are, and it falls to 0 once judged.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import time
import tracemalloc
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from bench.requests import implementation, report_of, review
from bench.trees import generate
from handoff_core.contract.ids import Ref
from handoff_core.files.task_dir import Roots
from handoff_core.services.tree import judging
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.status import TaskStatus, _glance_kind, glance, task_status, written_kind
from handoff_core.services.tree.status_page import StatusPage, page_status
from handoff_core.services.tree.verdicts import Verdicts
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE
from tests.support.glances import FOCUS, cold, history, odd_files, old_times, reply, rewrite, task_file
from tests.support.mappings import rewrite_through, written_mapping


def pages(queries: Queries, view: str, *, glancing: bool) -> tuple[list[StatusPage], list[TaskStatus]]:
    """Every page of ``view`` in order, following the cursors, with a small budget so there are several."""
    tasks = queries.status(glancing=glancing)
    found, cursor = [], view
    while True:
        page = page_status(
            tasks, cursor, now=time.time(), size=lambda _: 400, budget=2000, judge=lambda t: queries.judged(t, tasks)
        )
        found.append(page)
        if not page.next_cursor:
            return found, tasks
        cursor = page.next_cursor


@pytest.mark.parametrize("view", ["needs_lead", "all", "invalid", "dispatched", "returned", "released"])
def test_a_cold_answer_pages_exactly_as_a_fully_judged_one(store: Store, view: str) -> None:
    history(store)
    rewrite(task_file(store, "review-5"), "## Acceptance", "## Acceptanc")  # invalid sections: glanced
    rewrite(task_file(store, "open-8"), "schema_version: 1", "schema_version: 2")  # invalid frontmatter
    old_times(store)
    full, _ = pages(store.queries, view, glancing=False)
    glanced, tasks = pages(cold(store), view, glancing=True)
    assert any(not t.judged for t in tasks)  # the cold walk did glance
    assert [p.tasks for p in glanced] == [p.tasks for p in full]
    assert all(t.judged for p in glanced for t in p.tasks)
    assert [p.next_cursor for p in glanced] == [p.next_cursor for p in full]


def test_a_cold_answer_counts_and_claims_as_a_fully_judged_one(store: Store) -> None:
    history(store)
    old_times(store)
    full = store.queries.status()
    queries = cold(store)
    glanced = queries.status(glancing=True)
    page = page_status(glanced, "all", now=time.time(), size=lambda _: 400, budget=800)
    assert page.unjudged > 0
    assert page.counts == page_status(full, "all", now=time.time(), size=lambda _: 400).counts
    assert [t.ref for t in glanced if t.claims_writer] == [t.ref for t in full if t.claims_writer]
    assert sorted(page.counts) == [
        "dispatched",
        "released",
        "returned:blocked",
        "returned:completed",
        "returned:failed",
    ]


def test_a_task_whose_files_cannot_be_read_cheaply_is_judged_at_once_and_holds_its_claim(store: Store) -> None:
    history(store)
    rewrite(task_file(store, "implement-a2"), "---\n", "--\n")  # no frontmatter: the kind is unknown
    report = next(task_file(store, "review-1").parent.glob("REPORT.md"))
    report.unlink()
    report.mkdir()  # a REPORT that is no file
    linked = task_file(store, "review-2")
    os.link(linked, store.roots.project_root / "second-link")  # a TASK with two links
    old_times(store)
    full = {t.ref: t for t in store.queries.status()}
    glanced = {t.ref: t for t in cold(store).status(glancing=True)}
    odd = [ref for ref, t in full.items() if t.state in ("invalid", "incomplete")]
    assert len(odd) == 3
    assert all(glanced[ref].judged and glanced[ref] == full[ref] for ref in odd)
    writer = next(t for t in glanced.values() if t.ref.task.endswith("implement-a2"))
    assert writer.claims_writer
    assert writer.claim.startswith("whole workspace")


def test_a_glanced_task_that_is_invalid_is_counted_by_its_state_until_judged(store: Store) -> None:
    """``unjudged`` says how many tasks the counts took at their word; judged, the counts are exact."""
    history(store, reviews=60)
    rewrite(task_file(store, "review-58"), "## Acceptance", "## Acceptanc")  # beyond a small first page
    old_times(store)
    full = page_status(store.queries.status(), "needs_lead", now=time.time(), size=lambda _: 400).counts
    queries = cold(store)
    tasks = queries.status(glancing=True)
    first = page_status(tasks, "needs_lead", now=time.time(), size=lambda _: 400, budget=1600)
    assert first.unjudged > 0
    assert "invalid" not in first.counts
    label = next(t.label for t in tasks if t.ref.task.endswith("-review-58"))
    taken_at_its_word = {state: count for state, count in full.items() if state != "invalid"}
    taken_at_its_word[label] += 1
    assert first.counts == taken_at_its_word
    queries.judge_later(tasks, None, None)
    assert queries.wait_judged(timeout=60)
    again = page_status(queries.status(glancing=True), "needs_lead", now=time.time(), size=lambda _: 400)
    assert again.unjudged == 0
    assert again.counts == full
    assert full["invalid"] == 1


def test_a_walk_of_unsettled_files_glances_at_none(store: Store) -> None:
    history(store)
    tasks = Queries(store.roots, Verdicts(settle_seconds=3600)).status(glancing=True)
    assert tasks
    assert all(t.judged for t in tasks)


def test_judging_left_for_later_that_finds_the_tree_changed_under_it_stops_with_a_warning(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    history(store)
    old_times(store)
    queries = cold(store)
    tasks = queries.status(CHANGE, glancing=True)
    shutil.rmtree(store.roots.state_root / "specdev" / "changes" / CHANGE)  # the change is gone
    with caplog.at_level(logging.WARNING, logger="handoff_core.services.tree.queries"):
        queries.judge_later(tasks, CHANGE, None)
        assert queries.wait_judged(timeout=60)
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert "in the background stopped" in caplog.records[0].getMessage()


def test_background_judging_waits_while_an_answer_is_being_made(store: Store) -> None:
    history(store, reviews=60)
    old_times(store)
    queries = cold(store)
    first = queries.status(glancing=True)
    with queries.answering():  # an answer in the making, from the first call on
        queries.judge_later(first, None, None)
        assert not queries.wait_judged(timeout=0.5)  # not started while an answer is being made
        again = queries.status(glancing=True)  # asked again meanwhile: the lean walk, as the first
    assert [t.ref for t in again] == [t.ref for t in first]
    assert sum(not t.judged for t in again) == sum(not t.judged for t in first) > 0
    assert queries.wait_judged(timeout=60)  # once no answer is being made, it judges everything
    assert all(t.judged for t in queries.status(glancing=True))


def test_background_judging_ends_while_answers_keep_overlapping(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judging, "YIELD_SECONDS", 0.05)
    history(store, reviews=60)
    old_times(store)
    queries = cold(store)
    first = queries.status(glancing=True)
    with ExitStack() as answers:
        answers.enter_context(queries.answering())
        queries.judge_later(first, None, None)
        deadline = time.monotonic() + 30
        judged = False
        while not judged and time.monotonic() < deadline:
            begun = ExitStack()
            begun.enter_context(queries.answering())  # the next answer begins before the last one ends
            answers.close()
            answers.push(begun.pop_all())
            judged = queries.wait_judged(timeout=0.01)
        assert judged
    assert all(t.judged for t in queries.status(glancing=True))


def test_an_answer_made_during_the_judging_reuses_the_verdicts_held_so_far(store: Store) -> None:
    history(store, reviews=60)
    old_times(store)
    queries = cold(store)
    held = {t.ref: t for t in queries.status()}  # every verdict held
    report = task_file(store, "review-1").with_name("REPORT.md")
    os.utime(report, ns=(report.stat().st_atime_ns, report.stat().st_mtime_ns))  # a new ctime: judged again
    first = queries.status(glancing=True)
    with queries.answering():
        queries.judge_later(first, None, None)  # left pending: the judging counts as running elsewhere
        again = queries.status(glancing=True)  # the lean walk, reusing what is held
    changed = [t.ref for t in again if not t.judged]
    assert changed == [t.ref for t in first if not t.judged] == [held_ref(held, "review-1")]
    assert all(t is held[t.ref] for t in again if t.ref not in changed)
    assert again == first
    assert queries.wait_judged(timeout=60)
    assert queries.status(glancing=True) == queries.status() == list(held.values())


def held_ref(held: dict[Ref, TaskStatus], topic: str) -> Ref:
    return next(ref for ref in held if ref.task.endswith(f"-{topic}"))


ANSWER_BYTES_PER_HELD_TASK = 80  # pointers in the answer's lists, a round's listing (53 B measured; a glance is ~380 B)


def answer_while_pending(queries: Queries, tasks: list[TaskStatus]) -> tuple[list[TaskStatus], int]:
    """An answer made while the judging of ``tasks`` is left pending (judging elsewhere), and the
    peak of what it allocated (tracemalloc)."""
    with queries.answering():
        queries.judge_later(tasks, None, None)
        tracemalloc.start()
        try:
            return queries.status(glancing=True), tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def test_an_answer_made_during_the_judging_holds_no_second_copy_of_the_tasks_judged(tmp_path: Path) -> None:
    generate(tmp_path / "tree", 600)
    queries = Queries(Roots(tmp_path / "tree", tmp_path / "tree"), Verdicts(settle_seconds=0))
    held = queries.status()
    again, peak = answer_while_pending(queries, [held[0]._replace(judged=False)])
    assert peak / len(held) <= ANSWER_BYTES_PER_HELD_TASK
    assert again == held
    assert queries.wait_judged(timeout=60)


def test_an_answer_asked_before_any_judging_reuses_the_glances_of_the_first(store: Store) -> None:
    history(store, reviews=60)
    old_times(store)
    queries = cold(store)
    first = queries.status(glancing=True)
    glanced = {t.ref: t for t in first if not t.judged}
    with queries.answering():
        queries.judge_later(first, None, None)  # pending: the second answer comes before any judging
        again = queries.status(glancing=True)
    assert len(glanced) > len(first) // 2
    assert all(t is glanced[t.ref] for t in again if t.ref in glanced)  # probed, not glanced again
    assert again == first
    assert queries.held_verdicts <= len(first) - len(glanced)  # a held glance is no verdict
    assert queries.wait_judged(timeout=60)
    assert queries.status(glancing=True) == queries.status()
    assert all(t.judged for t in queries.status(glancing=True))


def test_a_held_glance_is_never_an_answer_that_judges_in_full(store: Store) -> None:
    history(store)
    old_times(store)
    queries = cold(store)
    first = queries.status(glancing=True)
    assert any(not t.judged for t in first)
    assert all(t.judged for t in queries.status())  # no glance reused where no glance may be given
    assert queries.status() == store.queries.status()


def test_a_glanced_task_whose_files_changed_is_read_again(store: Store) -> None:
    history(store)
    old_times(store)
    queries = cold(store)
    first = {t.ref: t for t in queries.status(glancing=True)}
    report = task_file(store, "review-1").with_name("REPORT.md")
    ref = held_ref(first, "review-1")
    assert not first[ref].judged
    assert first[ref].report_status == "blocked"
    rewrite(report, "Status: blocked", "Status: failed\n")
    with queries.answering():
        queries.judge_later(list(first.values()), None, None)
        again = {t.ref: t for t in queries.status(glancing=True)}
    assert again[ref].report_status == "failed"
    assert all(again[r] is first[r] for r in first if r != ref and not first[r].judged)
    assert queries.wait_judged(timeout=60)
    assert queries.status() == store.queries.status()


def test_an_answer_asked_before_any_judging_holds_no_second_copy_of_the_tasks_glanced(tmp_path: Path) -> None:
    generate(tmp_path / "tree", 600)
    queries = Queries(Roots(tmp_path / "tree", tmp_path / "tree"), Verdicts(settle_seconds=0))
    first = queries.status(glancing=True)
    assert sum(not t.judged for t in first) > len(first) // 2
    again, peak = answer_while_pending(queries, first)
    assert peak / len(first) <= ANSWER_BYTES_PER_HELD_TASK
    assert again == first
    assert queries.wait_judged(timeout=60)


def test_a_walk_that_judges_the_glances_leaves_no_table_sized_for_them_beside_the_verdicts(tmp_path: Path) -> None:
    generate(tmp_path / "tree", 600)
    queries = Queries(Roots(tmp_path / "tree", tmp_path / "tree"), Verdicts(settle_seconds=0))
    first = queries.status(glancing=True)
    glanced = queries._verdicts.glances
    assert glanced > len(first) // 2
    judged = queries.status()  # each glance judged in full, and dropped
    assert [t.ref for t in judged] == [t.ref for t in first]
    assert all(t.judged for t in judged)
    assert queries._verdicts.glances == 0
    assert sys.getsizeof(queries._verdicts._glances) == sys.getsizeof({})  # a dict never shrinks as it empties


def test_a_cold_walk_reads_every_task_as_a_glance_at_its_full_snapshot_does(store: Store) -> None:
    history(store)
    odd_files(store)
    round_dir = task_file(store, "first").parent.parent
    os.mkdir(os.fsencode(round_dir) + b"/099-caf\xe9")  # a name that is not UTF-8: shown escaped
    old_times(store)
    glanced = cold(store).status(glancing=True)
    full = store.queries.status()
    assert [t.ref for t in glanced] == [t.ref for t in full]
    assert any("\\xe9" in t.ref.task for t in glanced)
    assert sum(not t.judged for t in glanced) > len(glanced) // 2
    assert any(t.temp_files and not t.judged for t in glanced)
    for status in glanced:
        snapshot = store.queries.snapshot(status.ref)
        assert status == (glance(status.ref, snapshot) or task_status(status.ref, snapshot)), status.ref


def test_a_task_as_the_server_writes_it_is_read_by_its_bytes(store: Store) -> None:
    for spec, kind in ((review("bytes"), "review"), (implementation("implement-bytes"), "implementation")):
        ref = store.create_task(spec).ref
        data = (store.roots.task_dir(ref) / "TASK.md").read_bytes()
        assert written_kind(ref.change, ref.session, ref.task, data) == kind == _glance_kind(ref, data)


ROUND, TASK = "20261130T000000Z", "001-bench-0"
_LINES = [
    "schema_version: 1",
    "schema_version: 2",
    f'session: "{ROUND}"',
    'session: "20261130T000001Z"',
    f'task: "{TASK}"',
    'task: "002-bench-0"',
    'kind: "review"',
    'kind: "implementation"',
    'kind: "reviews"',
    "kind: review",
    f'change: "{CHANGE}"',
    'change: "2026-11-30-other"',
    'ticket: "T-1"',
    'kind: "review" ',
    "",
    "---",
]
_WRITTEN = _LINES[0], _LINES[2], _LINES[4], _LINES[6], _LINES[10]


@st.composite
def frontmatter_lines(draw: st.DrawFn) -> list[str]:
    """The lines the server writes (with or without the change), then a few lines replaced, put in or left out."""
    lines = list(_WRITTEN[: draw(st.sampled_from([4, 5]))])
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(lines)))
        line = draw(st.sampled_from(_LINES))
        edit = draw(st.sampled_from(["replace", "insert", "drop"]))
        if edit == "insert" or at == len(lines):
            lines.insert(at, line)
        elif edit == "replace":
            lines[at] = line
        else:
            del lines[at]
    return lines


@given(
    frontmatter_lines(),
    st.sampled_from(["---\n", "---\n", "\ufeff---\n", "---\r\n", ""]),
    st.sampled_from(["---\n", "---\n", "---\r\n", "--\n", ""]),
    st.one_of(st.just(b"\n# body \xe4\xbb\xbb\n"), st.binary(max_size=12)),
)
def test_a_task_read_by_its_bytes_has_the_kind_its_frontmatter_gives(
    lines: list[str], opening: str, closing: str, body: bytes
) -> None:
    """``written_kind`` answers only where ``_glance_kind`` gives that same kind."""
    data = (opening + "".join(f"{line}\n" for line in lines) + closing).encode() + body
    written = written_kind(CHANGE, ROUND, TASK, data)
    event("read by its bytes" if written is not None else "asks the frontmatter reader")
    assert written is None or written == _glance_kind(Ref(CHANGE, ROUND, TASK), data)


def test_glances_share_one_string_per_kind_and_report_word(store: Store) -> None:
    """A cold answer holds a glance per task while the server judges: equal words are one object."""
    session = store.create_task(review("first")).ref.session
    for index in range(2):
        reply(store, "completed", index, session)
    glanced = [t for t in cold(store).status(glancing=True) if not t.judged and t.report_status]
    assert len(glanced) == 2
    first, second = glanced
    assert first.kind is second.kind
    assert first.report_status is second.report_status


TWIN_ROUND = "20200101T000000Z"


def rounds_alike(store: Store) -> None:
    """A second round holding tasks of the same names as the first's, in files of the same sizes,
    one REPORT of which gives another status."""
    first = task_file(store, "review-1").parent.parent
    shutil.copytree(first, first.with_name(TWIN_ROUND), symlinks=True)
    report = first.with_name(TWIN_ROUND) / task_file(store, "review-1").parent.name / "REPORT.md"
    report.write_bytes(report.read_bytes().replace(b"Status: blocked", b"Status: failed "))


def own_task(store: Store, topic: str) -> Path:
    """The folder of the task on ``topic`` in the round the server opened (not its twin)."""
    return next(p for p in sessions(store).glob(f"*/*-{topic}") if p.parent.name != TWIN_ROUND)


def sessions(store: Store) -> Path:
    return store.roots.state_root / "specdev" / "changes" / CHANGE / "sessions"


def swap(first: Path, second: Path) -> None:
    between = first.with_name(first.name + ".swap")
    first.rename(between)
    second.rename(first)
    between.rename(second)


def rounds_swapped(store: Store) -> None:
    swap(*sessions(store).iterdir())


def tasks_swapped(store: Store) -> None:
    swap(own_task(store, "review-1"), own_task(store, "review-2"))


def report_relinked(store: Store) -> None:
    """A hard link to a REPORT made and removed: the same file, the same bytes, one more ctime."""
    report = own_task(store, "review-1") / "REPORT.md"
    os.link(report, store.roots.project_root / "held")
    os.unlink(store.roots.project_root / "held")


def report_recreated(store: Store) -> None:
    """Another status in a REPORT of the same size, written to a new inode under the old times."""
    report = own_task(store, "review-1") / "REPORT.md"
    data, times = report.read_bytes().replace(b"Status: blocked", b"Status: failed "), report.stat()
    report.unlink()
    report.write_bytes(data)
    os.utime(report, ns=(times.st_atime_ns, times.st_mtime_ns))


def change_copied(store: Store) -> None:
    """The change replaced by a copy of itself (every time kept but ctime), one REPORT's status changed."""
    change = sessions(store).parent
    shutil.copytree(change, change.with_name("copy"), symlinks=True)
    shutil.rmtree(change)
    change.with_name("copy").rename(change)
    report_recreated(store)


def change_archived_and_restored(store: Store) -> None:
    change = sessions(store).parent
    archive = store.roots.state_root / "specdev" / "archive"
    archive.mkdir()
    change.rename(archive / CHANGE)
    (archive / CHANGE).rename(change)


def labels(tasks: list[TaskStatus]) -> dict[Ref, tuple[str, str | None, bool, bool]]:
    return {t.ref: (t.label, t.kind, t.outstanding, t.claims_writer) for t in tasks}


@pytest.mark.parametrize(
    "move", [rounds_swapped, tasks_swapped, report_relinked, report_recreated, change_copied], ids=lambda m: m.__name__
)
def test_a_held_glance_is_not_reused_for_files_moved_or_replaced_under_it(
    store: Store, move: Callable[[Store], None]
) -> None:
    history(store)
    rounds_alike(store)
    old_times(store)
    queries = cold(store)
    first = queries.status(glancing=True)
    move(store)
    with queries.answering():
        queries.judge_later(first, None, None)  # pending: the second answer probes the glances held
        again = queries.status(glancing=True)
    assert labels(again) == labels(Queries(store.roots).status())
    assert labels(again) != labels(first) or move is report_relinked
    assert queries.wait_judged(timeout=60)


def test_a_held_glance_of_a_change_archived_and_restored_unchanged_is_reused(store: Store) -> None:
    history(store)
    old_times(store)
    queries = cold(store)
    first = queries.status(glancing=True)
    change_archived_and_restored(store)
    with queries.answering():
        queries.judge_later(first, None, None)
        again = queries.status(glancing=True)
    assert again == first
    assert all(a is f for a, f in zip(again, first, strict=True) if not f.judged)
    assert queries.wait_judged(timeout=60)


def test_a_report_edited_through_a_shared_mapping_is_answered_afresh_once_judged_and_never_held(store: Store) -> None:
    history(store)
    old_times(store)
    report = task_file(store, "review-1").with_name("REPORT.md")
    with written_mapping(report) as mapping:
        queries = cold(store)
        first = queries.status(glancing=True)
        ref = held_ref({t.ref: t for t in first}, "review-1")
        assert next(t for t in first if t.ref == ref).report_status == "blocked"
        rewrite_through(mapping, b"Status: blocked", b"Status: failed ")
        # Until the judging reaches it, the glance counts as it was read (``judged`` False): the
        # judging reads it under a lease, which a process writing it refuses, so nothing is held.
        queries.judge_later(first, None, None)
        assert queries.wait_judged(timeout=60)
        for _ in range(2):
            again = {t.ref: t for t in queries.status(glancing=True)}
            assert again[ref].report_status == "failed"
            assert again[ref].judged
        assert queries.held_verdicts == len(first) - 1
        assert labels(queries.status(glancing=True)) == labels(store.queries.status())


def test_a_task_glanced_since_its_verdict_went_stale_is_probed_not_glanced_again(store: Store) -> None:
    history(store)
    open_review = task_file(store, "open-4").parent
    queries = cold(store)
    held = queries.status()  # every task judged and held: open-4 with no REPORT
    ref = Ref(CHANGE, open_review.parent.name, open_review.name)
    store.write_report(
        report_of(ref, status="completed", focused=FOCUS, artifacts="none", verification="read only"), CHANGE
    )
    with queries.answering():
        queries.judge_later([held[0]._replace(judged=False)], None, None)  # pending: judging elsewhere
        first = {t.ref: t for t in queries.status(glancing=True)}
        again = {t.ref: t for t in queries.status(glancing=True)}
    assert first[ref].label == "returned:completed"
    assert not first[ref].judged
    assert again[ref] is first[ref]  # the glance held beside the stale verdict, probed by its own names
    assert queries.wait_judged(timeout=60)
