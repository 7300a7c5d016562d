"""The watched claim index answers exactly as a brand-new index's full scan, whatever is done to the tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from contextlib import suppress
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from bench.requests import implementation, report_of, review
from bench.trees import generate
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.errors import HandoffError
from handoff_core.files.task_dir import Roots
from handoff_core.files.watches import Watches, local_events
from handoff_core.services.capabilities.tokens import task_anchor
from handoff_core.services.rules.ownership import Claim
from handoff_core.services.tree.claims import ClaimIndex
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.watched_claims import WatchedClaimIndex
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE, make_change
from tests.support.glances import reachable_bytes
from tests.support.writers import ORIGINAL_TASK

FOCUS = "Built A1. Kept the API. Stopped after tests. Next: review."
FILES = ("TASK.md", "REPORT.md", "RELEASE.md")
SERVER_LINES = ("- Task anchor: ", "- Report token check: ", "- Report signing key: ")


def ageless(claims: list[Claim]) -> list[str]:
    return sorted(repr(replace(claim, age_seconds=0.0)) for claim in claims)


def full_scan(store: Store) -> list[str]:
    """The ground truth: a brand-new index's scan of every active change, by the store's anchor (if any)."""
    return ageless(ClaimIndex().claims(store.roots.state_root, store.queries.changes(), store.queries.anchor))


def watched(store: Store, index: WatchedClaimIndex) -> list[str]:
    return ageless(index.claims(store.roots.state_root, store.queries.changes(), store.queries.anchor))


class Tree(RuleBasedStateMachine):
    """Dispatches through the real Store, and everything an executor's shell can do to the files."""

    index_options: dict[str, object] = {}  # noqa: RUF012 (set by each subclass: the fallback it exercises)

    def __init__(self) -> None:
        super().__init__()
        self.home = Path(tempfile.mkdtemp(prefix="watched-claims-"))
        make_change(self.home / "state")
        self.store = Store(self.home / "state", self.home)  # the Lead's: it anchors what it publishes
        secret_file = self.home / "config" / "secret"  # the record of governance goes beside it
        self.store.queries.use_anchor(lambda: task_anchor(b"s" * 32, self.home / "state", secret_file))
        self.by_hand = Store(self.home / "state", self.home)  # no anchor: TASKs as written by hand
        self.index = WatchedClaimIndex(**self.index_options)  # type: ignore[arg-type]
        self.outside = self.home / "outside"
        self.outside.mkdir()
        self.made = 0

    def teardown(self) -> None:
        self.index.claims(self.store.roots.state_root, [])  # drops every watch it holds
        if self.index.watches is not None:
            self.index.watches.close()
        for path in self.home.rglob("*"):
            if not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(self.home)

    def away(self, name: str) -> Path:
        self.made += 1
        return self.outside / f"{self.made}-{name}"

    def tasks(self) -> list[Path]:
        return sorted(p for p in self.home.glob("state/specdev/changes/*/sessions/*/*") if p.is_dir())

    def task(self, pick: int) -> Path:
        found = self.tasks()
        return found[pick % len(found)]

    @invariant()
    def answers_as_a_full_scan(self) -> None:
        assert watched(self.store, self.index) == full_scan(self.store)

    @rule(shared=st.booleans(), new_round=st.booleans())
    def dispatch_an_implementation_task(self, shared: bool, new_round: bool) -> None:
        self.made += 1
        scope = Scope(workspace="required", writable=(f"src/p{self.made}/**",), resources=("db:x",) if shared else ())
        with suppress(HandoffError):  # refused (a conflict, the cap): nothing was written
            self.store.create_task(
                implementation(f"impl-{self.made}", scope=scope, writer_limit=99, new_round=new_round)
            )

    @rule()
    def dispatch_a_task_by_hand(self) -> None:
        """A TASK with no anchor: its globs hold until the Lead's first dispatch governs the state root."""
        self.made += 1
        scope = Scope(workspace="required", writable=(f"src/h{self.made}/**",))
        with suppress(HandoffError):
            self.by_hand.create_task(implementation(f"hand-{self.made}", scope=scope, writer_limit=99))

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99), how=st.sampled_from(["strip", "narrow", "original"]))
    def rewrite_a_task_as_its_executor_would(self, pick: int, how: str) -> None:
        path = self.task(pick) / "TASK.md"
        if not path.is_file() or path.is_symlink():
            return
        text = path.read_text("utf-8", "replace")
        if how == "strip":  # every line a server writes: it reads as written by hand
            text = "".join(line for line in text.splitlines(True) if not line.startswith(SERVER_LINES))
        text = text.replace("/**", "/narrow.py") if how == "narrow" else text
        path.chmod(0o644)
        path.write_text(ORIGINAL_TASK if how == "original" else text)

    @rule()
    def dispatch_a_review(self) -> None:
        self.made += 1
        artifacts = (f"out/r{self.made}.md",)
        with suppress(HandoffError):  # refused (a task that holds the whole workspace): nothing was written
            self.store.create_task(review(f"review-{self.made}", scope=Scope(workspace=None, artifacts=artifacts)))

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99))
    def publish_a_report(self, pick: int) -> None:
        folder = self.task(pick)
        ref = Ref(CHANGE, folder.parent.name, folder.name)
        report = report_of(ref, status="completed", focused=FOCUS, artifacts="none", verification="ok")
        with suppress(HandoffError):
            self.store.write_report(report, CHANGE, accept_warnings=True)

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99))
    def release_the_writer(self, pick: int) -> None:
        folder = self.task(pick)
        with suppress(HandoffError):
            self.store.release_writer(Ref(CHANGE, folder.parent.name, folder.name), "none", "never started")

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99), name=st.sampled_from(FILES))
    def remove_a_file(self, pick: int, name: str) -> None:
        (self.task(pick) / name).unlink(missing_ok=True)

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99), name=st.sampled_from(FILES), same_size=st.booleans())
    def rewrite_a_file_in_place(self, pick: int, name: str, same_size: bool) -> None:
        path = self.task(pick) / name
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            changed = data.replace(b"completed", b"completes") if same_size else data + b"\nmore\n"
            with path.open("r+b") as file:  # the same inode: only its own watch can tell
                file.write(changed)

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99), name=st.sampled_from(FILES), write=st.booleans())
    def hard_link_a_file_elsewhere_and_change_it_through_the_link(self, pick: int, name: str, write: bool) -> None:
        path = self.task(pick) / name
        link = self.outside / f"link-{self.made}-{pick}"
        if not path.is_file() or path.is_symlink() or link.exists():
            return
        os.link(path, link)
        if write:
            with link.open("ab") as file:
                file.write(b"\nthrough the link\n")
        else:
            link.chmod(0o600)

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99), name=st.sampled_from(FILES))
    def replace_a_file_by_a_copy(self, pick: int, name: str) -> None:
        path = self.task(pick) / name
        if path.is_file() and not path.is_symlink():
            copy = path.with_name(f".{name}.copy")
            shutil.copyfile(path, copy)
            copy.rename(path)  # same bytes, another inode

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99))
    def corrupt_a_task(self, pick: int) -> None:
        path = self.task(pick) / "TASK.md"
        if path.is_file():
            path.write_bytes(b"---\n: : not yaml [\n---\n")

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99), directory=st.booleans())
    def chmod_nothing_allowed(self, pick: int, directory: bool) -> None:
        path = self.task(pick) if directory else self.task(pick) / "REPORT.md"
        if path.exists() and not path.is_symlink():
            path.chmod(0)

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99), back=st.booleans())
    def move_a_task_directory(self, pick: int, back: bool) -> None:
        folder = self.task(pick)
        away = self.away(folder.name)
        folder.rename(away)
        if back:
            away.rename(folder)

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99))
    def replace_a_task_directory_by_a_symlink(self, pick: int) -> None:
        folder = self.task(pick)
        away = self.away(folder.name)
        folder.rename(away)
        folder.symlink_to(away)

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99), back=st.booleans())
    def move_a_round_directory(self, pick: int, back: bool) -> None:
        folder = self.task(pick).parent
        away = self.away(folder.name)
        folder.rename(away)
        if back:
            away.rename(folder)

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99), stray_file=st.booleans())
    def leave_a_task_directory_without_task_or_a_stray_file(self, pick: int, stray_file: bool) -> None:
        path = self.task(pick).parent / f"{900 + pick}-stray"
        if not path.exists() and not path.is_symlink():
            path.write_text("x") if stray_file else path.mkdir()

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99))
    def copy_a_task_into_a_task_directory_made_earlier(self, pick: int) -> None:
        source = self.task(pick) / "TASK.md"
        for folder in self.task(pick).parent.glob("9*-stray"):
            if folder.is_dir() and source.is_file():
                shutil.copyfile(source, folder / "TASK.md")


class WithWatches(Tree):
    index_options = {}  # noqa: RUF012


class WithFewWatches(Tree):
    index_options = {"cap": 5}  # noqa: RUF012


class WithATinyQueue(Tree):
    index_options = {"max_events": 2}  # noqa: RUF012


WithWatches.TestCase.settings = settings(max_examples=25, stateful_step_count=12)
WithFewWatches.TestCase.settings = settings(max_examples=10, stateful_step_count=12)
WithATinyQueue.TestCase.settings = settings(max_examples=10, stateful_step_count=12)
test_the_watched_index_answers_as_a_full_scan = WithWatches.TestCase
test_with_too_few_watches_the_index_still_answers_as_a_full_scan = WithFewWatches.TestCase
test_after_overflowing_queues_the_index_still_answers_as_a_full_scan = WithATinyQueue.TestCase


def released_tasks(store: Store, count: int) -> list[Ref]:
    refs = []
    for number in range(count):
        scope = Scope(workspace="required", writable=(f"src/p{number}/**",))
        ref = store.create_task(implementation(f"impl-{number}", scope=scope, writer_limit=99)).ref
        store.release_writer(ref, "none", "never started")
        refs.append(ref)
    return refs


def test_a_scan_with_nothing_changed_judges_no_task_again(store: Store) -> None:
    refs = released_tasks(store, 12)
    index = WatchedClaimIndex()
    assert watched(store, index) == full_scan(store) == []
    assert index.judged == len(refs)
    assert watched(store, index) == []
    assert index.judged == len(refs)  # nothing reported: nothing read again
    released_tasks(store, 1)
    assert watched(store, index) == []
    assert index.judged == len(refs) + 1  # the new task alone
    os.unlink(store.roots.task_dir(refs[5]) / "RELEASE.md")
    assert watched(store, index) == full_scan(store) != []
    assert index.judged == len(refs) + 2  # the one whose RELEASE went


def test_a_queue_that_overflows_drops_every_watch_and_judges_everything_again(store: Store) -> None:
    refs = released_tasks(store, 4)
    index = WatchedClaimIndex(max_events=1)
    watched(store, index)
    for ref in refs:
        (store.roots.task_dir(ref) / "RELEASE.md").chmod(0o600)
    (store.roots.task_dir(refs[0]) / "RELEASE.md").unlink()
    assert watched(store, index) == full_scan(store) != []
    assert index.resets == 1


def test_past_its_watch_cap_the_index_stat_checks_what_it_could_not_watch(store: Store) -> None:
    refs = released_tasks(store, 6)
    index = WatchedClaimIndex(cap=4)  # the sessions and round directories, and a task or two
    watched(store, index)
    assert index.watches is not None
    assert len(index.watches.live) <= 4
    loose = [task for change in index._changes.values() for r in change.rounds.values() for task in r.loose]
    assert len(loose) >= len(refs) - 2
    for ref in refs:
        (store.roots.task_dir(ref) / "RELEASE.md").unlink()
        assert watched(store, index) == full_scan(store)
    assert len(full_scan(store)) == len(refs)


@pytest.mark.parametrize(
    "mounts",
    [
        "36 25 0:32 / / rw - nfs4 server:/export rw\n",
        "36 25 0:32 / / rw - ext4 /dev/vda rw\n37 36 0:33 / {root}/specdev rw - tmpfs tmpfs rw\n",
        "",
    ],
    ids=["a network filesystem", "a mount below the root", "no mount table"],
)
def test_where_a_watch_may_miss_a_writer_the_index_scans_as_a_fresh_process(
    store: Store, tmp_path: Path, mounts: str
) -> None:
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(mounts.format(root=store.roots.state_root))
    assert not local_events(store.roots.state_root, mountinfo)
    index = WatchedClaimIndex(mountinfo=mountinfo)
    refs = released_tasks(store, 2)
    assert watched(store, index) == full_scan(store) == []
    (store.roots.task_dir(refs[1]) / "RELEASE.md").unlink()
    assert watched(store, index) == full_scan(store) != []
    assert index.watches is None


def test_a_mount_point_with_a_space_is_read_as_the_kernel_escapes_it(tmp_path: Path) -> None:
    folder = tmp_path / "a b"
    folder.mkdir()
    mountinfo = tmp_path / "mountinfo"
    escaped = str(folder).replace(" ", "\\040")
    mountinfo.write_text(f"1 0 0:1 / / rw - nfs s:/x rw\n2 1 0:2 / {escaped} rw - ext4 /dev/vda rw\n")
    assert local_events(folder, mountinfo)
    assert not local_events(tmp_path, mountinfo)  # nfs at /, and a mount below it


def test_with_no_inotify_the_index_scans_as_a_fresh_process(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_: object) -> Watches:
        raise OSError(38, "no inotify on this system")

    monkeypatch.setattr("handoff_core.services.tree.watched_claims.Watches", refused)
    index = WatchedClaimIndex()
    refs = released_tasks(store, 2)
    assert watched(store, index) == full_scan(store) == []
    (store.roots.task_dir(refs[0]) / "RELEASE.md").unlink()
    assert watched(store, index) == full_scan(store) != []
    assert index.judged == 0


def test_a_mount_made_below_the_root_while_watching_turns_the_watches_off(store: Store) -> None:
    index = WatchedClaimIndex()
    refs = released_tasks(store, 2)
    assert watched(store, index) == []
    assert index.watches is not None
    hidden = store.roots.task_dir(refs[0])
    if subprocess.run(["mount", "-t", "tmpfs", "none", str(hidden)], capture_output=True, check=False).returncode:
        pytest.skip("this process may not mount")
    try:  # the RELEASE a watch is on is hidden: the task dir now shows an empty directory
        assert watched(store, index) == full_scan(store)
        assert index.watches is None
    finally:
        subprocess.run(["umount", str(hidden)], check=True, timeout=30)
    assert watched(store, index) == full_scan(store) == []
    assert index.watches is not None


def test_judging_many_ended_claims_leaves_no_flood_of_events_behind(store: Store) -> None:
    refs = released_tasks(store, 40)
    index = WatchedClaimIndex(max_events=20)  # a drain of more than 20 events counts as an overflow
    assert watched(store, index) == []
    assert watched(store, index) == []
    assert (index.resets, index.judged) == (0, len(refs))  # one watch each, none set and dropped


WATCHED_BYTES_PER_TASK = 900  # what the index holds per task it watches (819 B measured; a set per watch: 989 B)


def test_the_index_holds_a_small_cover_per_watched_task(tmp_path: Path) -> None:
    generate(tmp_path / "tree", 600)  # reviews in rounds of 100, every third returned: one watch each
    queries = Queries(Roots(tmp_path / "tree", tmp_path / "tree"))
    queries.watch_claims()
    assert queries.claims() == []
    index = queries._claims
    assert isinstance(index, WatchedClaimIndex)
    assert index.watches is not None
    assert index.judged == 600
    assert reachable_bytes(index) / 600 <= WATCHED_BYTES_PER_TASK
