"""Claims that cannot be spoofed, poisoned or left stuck: hostile and broken trees, real files."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.requests import implementation, report_of, review
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.errors import InvalidContent, OwnershipConflict
from handoff_core.layout import WORKSPACES, Workspace
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE, make_change

SPOOF = (
    '```handoff-scope\nworkspace: "required"\nwritable: ["docs/unrelated/**"]\n'
    "read_only: []\nshared: []\nartifacts: []\n```"
)
FOCUS = "Built A1. Kept the API. Stopped after tests. Next: review."


@pytest.fixture(params=["scanned", "watched"])
def store(project: Path, state_root: Path, request: pytest.FixtureRequest) -> Store:
    """Each test against a fresh process's stat scan and against a server's watched claims."""
    store = Store(state_root, project)
    if request.param == "watched":
        store.queries.keep_claim_rows()
    return store


def editable(store: Store, ref: Ref, name: str = "TASK.md") -> Path:
    path = store.roots.task_dir(ref) / name
    path.chmod(0o644)
    return path


def refused_writer(store: Store, topic: str = "second-writer") -> OwnershipConflict:
    with pytest.raises(OwnershipConflict) as caught:
        store.create_task(implementation(topic, goal="Another change to src/a1."))
    return caught.value


@pytest.mark.parametrize("field", ["goal", "inputs", "acceptance", "return_notes"])
@pytest.mark.parametrize("outer", ["````", "~~~", "`````"])
def test_a_scope_block_hidden_inside_a_longer_fence_is_refused(store: Store, field: str, outer: str) -> None:
    spoof = f"Do it.\n\n{outer}\n{SPOOF}\n{outer}"
    with pytest.raises(InvalidContent) as caught:
        store.create_task(implementation(**{field: spoof}))
    assert "handoff-scope" in caught.value.message
    assert store.queries.status() == []


def test_a_scope_block_in_the_scope_notes_is_refused_too(store: Store) -> None:
    scope = implementation().body.scope
    request = implementation(scope=type(scope)("current", ("src/a1/**",), notes=f"~~~~\n{SPOOF}\n~~~~"))
    with pytest.raises(InvalidContent):
        store.create_task(request)


def test_a_hand_edited_task_with_a_second_scope_block_holds_the_whole_workspace(store: Store) -> None:
    holder = store.create_task(implementation()).ref
    path = editable(store, holder)
    path.write_text(path.read_text().replace("## Goal\n", f"## Goal\n````\n{SPOOF}\n````\n"))
    error = refused_writer(store)
    assert str(holder) in error.message
    with pytest.raises(OwnershipConflict):
        store.create_task(implementation("docs", scope=type(implementation().body.scope)("required", ("docs/**",))))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("schema_version: 1\n", "schema_version: 1\n? [a, b]\n: 1\n"),
        ('writable: ["src/a1/**"]', "writable: [1]"),
        ('writable: ["src/a1/**"]', "writable: [{a: b}]"),
        ('workspace: "current"', "workspace: [current]"),
        ("shared: []", "shared: [pyproject.toml]"),
    ],
)
def test_one_broken_task_never_stops_dispatch_or_status_for_the_others(store: Store, old: str, new: str) -> None:
    broken = store.create_task(implementation()).ref
    path = editable(store, broken)
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new))
    assert store.create_task(review()).created  # a reader is never blocked
    error = refused_writer(store)  # and the broken task holds the whole workspace
    assert "unreadable" in error.message
    states = {str(t.ref): t for t in store.queries.status()}
    assert states[str(broken)].state == "invalid"
    assert states[str(broken)].claims_writer


def test_a_task_directory_whose_name_is_not_utf8_is_shown_not_fatal(store: Store) -> None:
    ref = store.create_task(review()).ref
    round_dir = store.roots.task_dir(ref).parent
    bad = os.fsencode(round_dir) + b"/002-caf\xe9"
    os.mkdir(bad)
    with open(bad + b"/TASK.md", "wb") as handle:
        handle.write((store.roots.task_dir(ref) / "TASK.md").read_bytes())
    tasks = store.queries.status()
    shown = [str(t.ref) for t in tasks]
    assert any("002-caf\\xe9" in ref_text for ref_text in shown)
    assert all(ref_text.encode("utf-8") for ref_text in shown)
    assert store.create_task(review("review-b")).created


@pytest.mark.parametrize("stray", ["empty", "directory", "fifo", "dangling", "other-task"])
def test_a_stray_entry_named_report_ends_no_claim(store: Store, stray: str, tmp_path: Path) -> None:
    holder = store.create_task(implementation()).ref
    report = store.roots.task_dir(holder) / "REPORT.md"
    if stray == "empty":
        report.write_bytes(b"")
    elif stray == "directory":
        report.mkdir()
    elif stray == "fifo":
        os.mkfifo(report)
    elif stray == "dangling":
        report.symlink_to(tmp_path / "nowhere")
    else:
        report.write_text("# 任务回报\n\nSession: 20200101T000000Z\nTask: 001-other\nStatus: completed\n")
    assert str(holder) in refused_writer(store).message
    assert [t.claims_writer for t in store.queries.status()] == [True]


def test_removing_a_report_by_hand_revives_the_claim_in_a_long_lived_server(store: Store) -> None:
    holder = store.create_task(implementation()).ref
    report = report_of(
        holder, status="completed", focused=FOCUS, artifacts="src/a1/x.py", verification="pytest: exit 0"
    )
    store.write_report(report, holder.change)
    assert store.queries.claims() == []  # the claim ended; the index remembers why
    os.unlink(store.roots.task_dir(holder) / "REPORT.md")
    assert [str(c.ref) for c in store.queries.claims()] == [str(holder)]
    assert str(holder) in refused_writer(store).message


def test_a_released_claim_stays_released_and_a_replaced_release_is_judged_again(store: Store) -> None:
    holder = store.create_task(implementation()).ref
    store.release_writer(holder, "none", "the executor never started")
    assert store.queries.claims() == []
    release = editable(store, holder, "RELEASE.md")
    release.write_text("not a release\n")
    assert [str(c.ref) for c in store.queries.claims()] == [str(holder)]


def test_an_identical_retry_never_returns_a_task_that_was_already_reported(store: Store) -> None:
    first = store.create_task(review())
    assert not store.create_task(review()).created  # outstanding: the retry gets it back
    store.write_report(
        report_of(first.ref, status="completed", focused=FOCUS, artifacts="none", verification="ok"),
        first.ref.change,
    )
    again = store.create_task(review())
    assert again.created
    assert again.ref != first.ref


def test_a_link_left_by_a_crash_between_link_and_unlink_is_repaired(store: Store) -> None:
    created = store.create_task(implementation())
    folder = store.roots.task_dir(created.ref)
    os.link(folder / "TASK.md", folder / ".TASK.md.0123456789abcdef.tmp")
    assert (folder / "TASK.md").stat().st_nlink == 2
    again = store.create_task(implementation())  # the identical retry returns the task, repaired
    assert (again.ref, again.created) == (created.ref, False)
    assert store.queries.read_task(created.ref)[1].sha256 == created.sha256
    assert sorted(os.listdir(folder)) == ["TASK.md"]
    assert stat.S_IMODE((folder / "TASK.md").stat().st_mode) == 0o444
    store.release_writer(created.ref, "stopped", "pane 3 exited")
    assert store.queries.claims() == []


def test_a_task_file_over_the_size_limit_holds_the_whole_workspace_and_can_be_released(store: Store) -> None:
    holder = store.create_task(implementation()).ref
    path = editable(store, holder)
    path.write_text(path.read_text() + "x" * (5 * 1024 * 1024))
    assert any("larger than" in p for p in store.queries.validate(holder, "dispatch").errors)
    assert "unreadable" in refused_writer(store).message
    store.release_writer(holder, "stopped", "the writer's pane exited; checked by hand")
    assert store.create_task(implementation("second-writer", goal="Another change.")).created


OTHER = "2026-11-30-other"


def _second_home(store: Store, change: str) -> None:
    (store.roots.state_root / "specdev" / "archive" / "2026-11" / change).mkdir(parents=True)


def _oversize_readme(store: Store, change: str) -> None:
    readme = store.roots.state_root / "specdev" / "changes" / change / "README.md"
    readme.write_text("Outcome: active\n" + "x" * (4 * 1024 * 1024))


def _symlinked_change(store: Store, change: str) -> None:
    folder = store.roots.state_root / "specdev" / "changes" / change
    folder.rename(folder.with_name("moved-away"))
    folder.symlink_to(folder.with_name("moved-away"))


def _symlinked_round(store: Store, change: str) -> None:
    sessions = store.roots.state_root / "specdev" / "changes" / change / "sessions"
    (folder,) = sessions.iterdir()
    folder.rename(store.roots.state_root / "elsewhere")
    folder.symlink_to(store.roots.state_root / "elsewhere")


@pytest.mark.parametrize("breakage", [_second_home, _oversize_readme, _symlinked_change, _symlinked_round])
@pytest.mark.parametrize("workspace", WORKSPACES)
def test_a_change_that_cannot_be_read_holds_the_whole_workspace_and_status_says_why(
    store: Store, breakage: Callable[[Store, str], None], workspace: Workspace
) -> None:
    make_change(store.roots.state_root, OTHER)
    store.create_task(implementation())
    breakage(store, CHANGE)
    scope = Scope(workspace=workspace, writable=("src/elsewhere/**",))
    with pytest.raises(OwnershipConflict) as caught:
        store.create_task(implementation("second-writer", change=OTHER, scope=scope))
    assert f"{CHANGE}/*/*" in caught.value.message
    assert store.queries.status(OTHER) == []  # nothing was dispatched
    held = [t for t in store.queries.status() if t.ref.change == CHANGE and t.ref.task == "*"]
    assert len(held) == 1
    assert held[0].state == "invalid"
    assert held[0].claims_writer
    assert held[0].claim.startswith("whole workspace (change 2026-11-30-demo cannot be read")
    assert held[0].problems == (held[0].held_because,)


def test_a_change_whose_second_home_is_removed_frees_its_claims_again(store: Store) -> None:
    make_change(store.roots.state_root, OTHER)
    store.create_task(implementation())
    _second_home(store, CHANGE)
    store.create_task(
        implementation(
            "review-b", change=OTHER, kind="review", scope=Scope(workspace=None, writable=(), read_only=("src/**",))
        )
    )
    assert [c.ref.task for c in store.queries.claims()] == ["*"]
    (store.roots.state_root / "specdev" / "archive" / "2026-11" / CHANGE).rmdir()
    claims = store.queries.claims()
    assert [c.ref.task for c in claims] == ["001-implement-a1"]
    assert not claims[0].unreadable


def test_a_task_directory_replaced_by_a_symlink_holds_the_whole_workspace(store: Store) -> None:
    holder = store.create_task(implementation()).ref
    folder, elsewhere = store.roots.task_dir(holder), store.roots.state_root / "moved-away"
    folder.rename(elsewhere)  # out of the round: only the link is left there
    folder.symlink_to(elsewhere)
    error = refused_writer(store)
    assert f"{holder} (its task directory is a symlink" in error.message
    scope = Scope(workspace="required", writable=("docs/elsewhere/**",))
    with pytest.raises(OwnershipConflict):
        store.create_task(implementation("docs", scope=scope, writer_limit=3))
