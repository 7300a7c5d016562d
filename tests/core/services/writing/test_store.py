from __future__ import annotations

import multiprocessing
import os
import stat
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.requests import implementation, report_of, review
from handoff_core.contract.ids import Ref, check_change, check_round, check_task, check_topic, parse_ref
from handoff_core.contract.report import Report, parse_report
from handoff_core.contract.snapshot import MISSING
from handoff_core.errors import (
    AlreadyReported,
    ChangeNotActive,
    ChangeNotFound,
    HandoffError,
    InvalidContent,
    InvalidIdentifier,
    InvalidLocator,
    LocatorConflict,
    TaskChanged,
    TaskNotFound,
    TooLarge,
    UnsafePath,
    WriteConflict,
)
from handoff_core.files.task_dir import TaskDir
from handoff_core.layout import MAX_FILE_BYTES
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE, make_change
from tests.support.gitrepo import git, write
from tests.support.reports import captured_text

FOCUS = "Built A1. Kept the API. Stopped after tests. Next: review."


def report(ref: Ref, status: str = "completed") -> Report:
    return report_of(ref, status=status, focused=FOCUS, artifacts="src/a1/x.py", verification="pytest: exit 0")


def files_under(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


def test_create_task_publishes_a_frozen_task_that_passes_dispatch_validation(store: Store) -> None:
    created = store.create_task(implementation())
    assert created.ref.task == "001-implement-a1"
    assert created.path.read_text() == created.text
    assert stat.S_IMODE(created.path.stat().st_mode) == 0o444
    assert store.queries.validate(created.ref, "dispatch").ok
    task, stored = store.queries.read_task(created.ref)
    assert stored.sha256 == created.sha256
    assert task.report_path.endswith(f"{created.ref.task}/REPORT.md")
    assert not task.report_path.startswith("/")


def test_tasks_in_one_round_get_increasing_numbers(store: Store) -> None:
    first = store.create_task(implementation())
    second = store.create_task(review(session=first.ref.session))
    assert (first.ref.session, second.ref.task) == (second.ref.session, "002-review-a1")


def test_two_rounds_opened_in_the_same_second_get_a_suffix(state_root: Path, project: Path) -> None:
    frozen = Store(state_root, project, clock=lambda: datetime(2026, 11, 30, 4, 45, tzinfo=UTC))
    first = frozen.create_task(implementation())
    second = frozen.create_task(review(new_round=True))
    assert (first.ref.session, second.ref.session) == ("20261130T044500Z", "20261130T044500Z-01")


def _create_many(state_root: str, session: str, worker: int, count: int, barrier: threading.Barrier) -> list[str]:
    store = Store(Path(state_root))
    barrier.wait(timeout=60)
    return [str(store.create_task(review(f"w{worker}-n{i}", session=session)).ref.task) for i in range(count)]


@pytest.mark.slow
def test_eight_processes_creating_25_tasks_each_get_200_distinct_numbers(store: Store, state_root: Path) -> None:
    session = "20261130T044500Z"
    (state_root / "specdev" / "changes" / CHANGE / "sessions" / session).mkdir(parents=True)
    context = multiprocessing.get_context("spawn")
    barrier = context.Manager().Barrier(8)
    with context.Pool(8) as pool:
        results = pool.starmap(_create_many, [(str(state_root), session, w, 25, barrier) for w in range(8)])
    numbers = sorted(int(task.split("-")[0]) for tasks in results for task in tasks)
    assert numbers == list(range(1, 201))
    for tasks in results:
        mine = [int(t.split("-")[0]) for t in tasks]
        assert mine == sorted(mine)


def test_dispatch_into_a_change_that_is_not_active_is_refused(state_root: Path, store: Store) -> None:
    make_change(state_root, "2026-11-29-done", outcome="completed")
    with pytest.raises(ChangeNotActive) as caught:
        store.create_task(implementation(change="2026-11-29-done"))
    assert caught.value.code == "change_not_active"
    assert files_under(state_root / "specdev" / "changes" / "2026-11-29-done") == {"README.md"}


def test_the_server_never_creates_a_change(store: Store, state_root: Path) -> None:
    with pytest.raises(ChangeNotFound) as caught:
        store.create_task(implementation(change="2026-11-29-missing"))
    assert caught.value.code == "change_not_found"
    assert not (state_root / "specdev" / "changes" / "2026-11-29-missing").exists()


@pytest.mark.parametrize("level", ["change", "sessions", "round"])
def test_a_symlinked_directory_on_the_way_is_refused_and_nothing_lands_outside(
    store: Store, state_root: Path, tmp_path: Path, level: str
) -> None:
    first = store.create_task(implementation())
    outside = tmp_path / "outside"
    change_dir = state_root / "specdev" / "changes" / CHANGE
    real = {
        "change": change_dir,
        "sessions": change_dir / "sessions",
        "round": change_dir / "sessions" / first.ref.session,
    }[level]
    real.rename(outside)
    real.symlink_to(outside)
    before = files_under(outside)
    with pytest.raises(UnsafePath) as caught:
        store.create_task(review(session=first.ref.session))
    assert caught.value.code == "unsafe_path"
    assert files_under(outside) == before


def test_a_symlinked_task_directory_is_refused_for_reports(store: Store, tmp_path: Path) -> None:
    ref = store.create_task(implementation()).ref
    outside = tmp_path / "outside"
    store.roots.task_dir(ref).rename(outside)
    store.roots.task_dir(ref).symlink_to(outside)
    with pytest.raises(UnsafePath):
        store.write_report(report(ref), ref.change)
    assert not (outside / "REPORT.md").exists()


def test_a_dangling_symlink_at_the_report_name_is_refused_and_not_followed(store: Store, tmp_path: Path) -> None:
    ref = store.create_task(implementation()).ref
    target = tmp_path / "planted"
    (store.roots.task_dir(ref) / "REPORT.md").symlink_to(target)
    with pytest.raises(WriteConflict):
        store.write_report(report(ref), ref.change)
    assert not target.exists()


def test_a_hard_linked_task_is_refused(store: Store, tmp_path: Path) -> None:
    ref = store.create_task(implementation()).ref
    os.link(store.roots.task_dir(ref) / "TASK.md", tmp_path / "alias")
    with pytest.raises(UnsafePath):
        store.write_report(report(ref), ref.change)


@pytest.mark.parametrize(
    "text",
    [
        f"{CHANGE}/20261130T044500Z/..",
        f"{CHANGE}/20261130T044500Z/-rf",
        f"{CHANGE}/20261130T044500Z/001-Topic",
        f"{CHANGE}/20261130T044500Z/0001-x",
        "../x/20261130T044500Z/001-a",
    ],
)
def test_ids_that_could_escape_or_are_off_grammar_are_refused(text: str) -> None:
    with pytest.raises(InvalidIdentifier):
        parse_ref(text)


@pytest.mark.parametrize("topic", ["..", "-rf", "Topic", "a/../x", "cafe\u0301"])
def test_a_topic_that_is_not_plain_lowercase_is_refused_before_anything_is_created(
    store: Store, state_root: Path, topic: str
) -> None:
    before = files_under(state_root)
    with pytest.raises(InvalidIdentifier):
        store.create_task(implementation(topic))
    assert files_under(state_root) == before


def test_a_refused_task_leaves_no_directory_behind(store: Store, state_root: Path) -> None:
    before = files_under(state_root)
    with pytest.raises(HandoffError):
        store.create_task(implementation(goal="## Goal\nsmuggled"))
    assert files_under(state_root) == before


def test_a_report_is_written_once_and_pins_the_task(store: Store) -> None:
    created = store.create_task(implementation())
    written = store.write_report(report(created.ref), CHANGE, created.sha256)
    assert parse_report(written.text).task_sha256 == created.sha256
    assert store.queries.validate(created.ref, "return").ok
    assert not store.write_report(report(created.ref), CHANGE).created
    with pytest.raises(WriteConflict):
        store.write_report(report(created.ref, "failed"), CHANGE)


def test_a_report_for_a_changed_task_hash_is_refused(store: Store) -> None:
    ref = store.create_task(implementation()).ref
    with pytest.raises(TaskChanged) as caught:
        store.write_report(report(ref), CHANGE, "0" * 64)
    assert caught.value.code == "task_changed"
    assert not (store.roots.task_dir(ref) / "REPORT.md").exists()


def test_a_report_for_an_unknown_task_is_refused(store: Store) -> None:
    ref = store.create_task(implementation()).ref
    with pytest.raises(TaskNotFound):
        store.write_report(
            Report(
                session=ref.session,
                task="009-ghost",
                status="completed",
                focused=FOCUS,
                artifacts="x",
                verification="y",
            ),
            CHANGE,
        )


def test_a_lead_capture_is_verbatim_and_marked(store: Store) -> None:
    ref = store.create_task(implementation()).ref
    stored = store.capture_report(ref, "completed", "codex exec call 7", "Done.\n## not a section\nAll green")
    parsed = parse_report(stored.text)
    assert parsed.captured_by == "Lead"
    assert captured_text(parsed) == "Done.\n## not a section\nAll green"
    assert store.queries.validate(ref, "return").ok


def test_the_session_locator_is_idempotent_for_one_path_and_conflicts_for_another(store: Store) -> None:
    ref = store.create_task(implementation()).ref
    path = "/home/me/.codex/sessions/2026/11/30/rollout-x-abc.jsonl"
    assert store.record_session_locator(ref, path, verify=False).created
    assert not store.record_session_locator(ref, path, verify=False).created
    with pytest.raises(LocatorConflict) as caught:
        store.record_session_locator(ref, "/home/me/other.jsonl", verify=False)
    assert caught.value.code == "locator_conflict"
    assert path in (store.roots.task_dir(ref) / "session-locator.json").read_text()


@pytest.mark.parametrize("path", ["relative/log.jsonl", "/home/unknown/x.jsonl", "/tmp/<id>.jsonl", "", " /x.jsonl"])
def test_a_placeholder_or_relative_locator_is_refused(store: Store, path: str) -> None:
    ref = store.create_task(implementation()).ref
    with pytest.raises(InvalidLocator):
        store.record_session_locator(ref, path, verify=False)
    assert not (store.roots.task_dir(ref) / "session-locator.json").exists()


def test_a_release_is_written_once_and_refused_after_a_report(store: Store) -> None:
    first = store.create_task(implementation()).ref
    released = store.release_writer(first, "stopped", "herdr pane 3 exited with code 0")
    assert "Writers: stopped: herdr pane 3 exited with code 0" in released.text
    second = store.create_task(review(session=first.session)).ref
    store.write_report(report(second), CHANGE)
    with pytest.raises(AlreadyReported) as caught:
        store.release_writer(second, "none", "never started")
    assert caught.value.code == "already_reported"


def test_writes_into_an_archived_change_are_refused(store: Store, state_root: Path) -> None:
    ref = store.create_task(implementation()).ref
    archive = state_root / "specdev" / "archive"
    archive.mkdir(parents=True)
    (state_root / "specdev" / "changes" / CHANGE).rename(archive / CHANGE)
    with pytest.raises(ChangeNotActive):
        store.write_report(report(ref), CHANGE)
    with pytest.raises(ChangeNotActive):
        store.record_session_locator(ref, "/x/y.jsonl", verify=False)


def test_a_missing_state_root_is_refused_with_the_way_out(tmp_path: Path) -> None:
    with pytest.raises(ChangeNotFound) as caught:
        Store(tmp_path / "nowhere").create_task(implementation())
    assert "--state-root" in caught.value.message
    assert not (tmp_path / "nowhere").exists()


def test_a_goal_over_the_file_limit_is_refused_before_anything_is_made(store: Store, state_root: Path) -> None:
    with pytest.raises(InvalidContent) as caught:
        store.create_task(implementation(goal="x" * (MAX_FILE_BYTES + 1)))
    assert str(MAX_FILE_BYTES) in caught.value.message
    assert store.queries.status() == []


def test_text_that_renders_over_the_file_limit_is_refused_before_publishing(store: Store) -> None:
    half = "y" * (MAX_FILE_BYTES // 2 + 10)
    with pytest.raises(InvalidContent):
        store.create_task(implementation(goal=half, inputs=half))
    assert store.queries.status() == []


def test_a_handoff_file_over_the_limit_on_disk_is_too_large_to_read_never_cut(store: Store) -> None:
    ref = store.create_task(review()).ref
    path = store.roots.task_dir(ref) / "TASK.md"
    path.chmod(0o644)
    path.write_bytes(path.read_bytes() + b"z" * (17 * 1024 * 1024))
    with pytest.raises(TooLarge) as caught:
        store.queries.read_task(ref)
    assert caught.value.code == "too_large"


@pytest.mark.parametrize(
    "check",
    [
        lambda: check_change("2026-11-30-demo\n"),
        lambda: check_round("20261130T044500Z\n"),
        lambda: check_task("001-fix\n"),
        lambda: check_topic("fix\n"),
        lambda: check_round("２０２６1130T044500Z"),
        lambda: check_change("٢٠٢٦-11-30-demo"),
    ],
)
def test_an_id_with_a_trailing_newline_or_non_ascii_digits_is_refused(check: Callable[[], str]) -> None:
    with pytest.raises(InvalidIdentifier):
        check()


def test_a_locator_written_by_a_racing_call_is_a_locator_conflict(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = store.create_task(implementation()).ref
    store.record_session_locator(ref, "/logs/first.jsonl", verify=False)
    # The other call's publish lands between this call's look and its own publish.
    monkeypatch.setattr(TaskDir, "entry", lambda self, name: MISSING)
    with pytest.raises(LocatorConflict):
        store.record_session_locator(ref, "/logs/second.jsonl", verify=False)
    assert "first.jsonl" in (store.roots.task_dir(ref) / "session-locator.json").read_text()


def test_new_round_and_task_directories_are_made_durable(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def recording(fd: int) -> None:
        synced.append(os.fstat(fd).st_ino)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording)
    ref = store.create_task(implementation()).ref
    task_dir = store.roots.task_dir(ref)
    for directory in (task_dir.parent.parent, task_dir.parent, task_dir):  # sessions/, the round, the task
        assert directory.stat().st_ino in synced


@pytest.mark.parametrize(
    ("field", "text"),
    [
        ("goal", "```\nonly code\n```"),
        ("goal", "### a subheading only"),
        ("inputs", "#\ttab heading"),
        ("acceptance", "~~~\n## Inputs\n~~~"),
    ],
)
def test_a_section_the_validator_would_call_empty_is_never_published(store: Store, field: str, text: str) -> None:
    with pytest.raises(InvalidContent) as caught:
        store.create_task(implementation(**{field: text}))
    assert "would not pass validation" in caught.value.message
    assert store.queries.status() == []


@pytest.mark.parametrize("text", ["TBD", "todo", "<fill in>", "…", "...", " Pending "])
def test_a_placeholder_section_is_refused(store: Store, text: str) -> None:
    with pytest.raises(InvalidContent) as caught:
        store.create_task(implementation(goal=text))
    assert "placeholder" in caught.value.message


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("Do it.\n    ```\n    code\n    ```", "indented"),
        ("Do it.\n\t```\n\tcode\n\t```", "indented"),
        ("Do it.\n```py`x\ncode\n```", "info string"),
        ("Do it.\n```\ncode\n``` trailing text\n```", "closing fence followed by text"),
    ],
)
def test_lines_the_seed_and_commonmark_read_differently_are_refused_with_the_line(
    store: Store, text: str, rule: str
) -> None:
    with pytest.raises(InvalidContent) as caught:
        store.create_task(implementation(goal=text))
    assert rule in caught.value.message
    assert "line " in caught.value.message


def test_a_report_that_would_fail_the_return_stage_is_never_published(store: Store) -> None:
    ref = store.create_task(implementation()).ref
    hidden = "```\nonly code\n```"
    with pytest.raises(InvalidContent):
        store.write_report(
            report_of(
                ref, status="completed", focused=FOCUS, artifacts="src/a1/x.py", verification="ok", problems=hidden
            ),
            ref.change,
        )
    assert not (store.roots.task_dir(ref) / "REPORT.md").exists()


def test_a_change_folder_without_readme_is_refused_naming_the_file_and_the_line(state_root: Path, store: Store) -> None:
    (state_root / "specdev" / "changes" / "2026-12-01-bare").mkdir(parents=True)
    with pytest.raises(ChangeNotActive) as caught:
        store.create_task(implementation(change="2026-12-01-bare"))
    assert caught.value.code == "change_not_active"
    assert "specdev/changes/2026-12-01-bare/README.md" in caught.value.message
    assert "'Outcome: active'" in caught.value.message
    assert "is active" not in caught.value.message  # it never says the change is active while refusing it


def test_a_readme_without_an_outcome_line_is_told_the_line_to_add(state_root: Path, store: Store) -> None:
    folder = state_root / "specdev" / "changes" / "2026-12-01-draft"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text("# Draft\n")
    with pytest.raises(ChangeNotActive) as caught:
        store.create_task(implementation(change="2026-12-01-draft"))
    assert "no single valid Outcome line" in caught.value.message
    assert "'Outcome: active'" in caught.value.message


def test_a_change_that_does_not_exist_is_refused_naming_the_readme_to_create(store: Store) -> None:
    with pytest.raises(ChangeNotFound) as caught:
        store.create_task(implementation(change="2026-12-01-missing"))
    assert "specdev/changes/2026-12-01-missing/README.md holding the line 'Outcome: active'" in caught.value.message


def test_a_current_task_dispatched_outside_git_warns_that_it_has_no_base_and_what_to_do(store: Store) -> None:
    (warning,) = store.create_task(implementation()).warnings
    assert "no git base" in warning
    assert "audit cannot judge" in warning
    assert "git init" in warning
    assert store.create_task(review()).warnings == ()  # a read-only task is not audited: nothing is missing


def test_a_current_task_in_a_repository_without_a_commit_warns_and_one_with_a_commit_does_not(
    store: Store, project: Path
) -> None:
    git(project, "init", "-q", "-b", "main")
    first = store.create_task(implementation())
    (warning,) = first.warnings
    assert "has no commit" in warning
    store.release_writer(first.ref, "none", "never started")  # the current tree holds one writer
    write(project, "src/a1/core.py")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "initial")
    assert store.create_task(implementation("implement-a2")).warnings == ()
