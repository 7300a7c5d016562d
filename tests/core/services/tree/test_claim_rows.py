"""Claim rows answer exactly as a brand-new index's full scan, whatever is done to the tree that a
round's stamp or a live task's files can show (``claim_rows``), across restarts from the cache."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import suppress
from dataclasses import replace
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from bench.requests import implementation, report_of, review
from bench.trees import generate
from handoff_core.contract.ids import Ref
from handoff_core.contract.scope import Scope
from handoff_core.errors import HandoffError
from handoff_core.files.cache_file import load_cache, save_cache
from handoff_core.files.task_dir import Roots
from handoff_core.services.capabilities.tokens import task_anchor
from handoff_core.services.rules.ownership import Claim
from handoff_core.services.tree.claim_rows import ClaimRows, rows_path
from handoff_core.services.tree.claims import ClaimIndex
from handoff_core.services.tree.queries import Queries
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE, make_change
from tests.support.clock import past_this_tick
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


def rowed(store: Store, index: ClaimRows) -> list[str]:
    return ageless(index.claims(store.roots.state_root, store.queries.changes(), store.queries.anchor))


def settled(folder: Path) -> bool:
    """Whether a full scan finds ``folder``'s task claiming nothing (the rows then hold it settled)."""
    index = ClaimIndex()
    index.claims(folder.parents[5], [folder.parents[2].name])
    seen = index._seen.get((folder.parents[2].name, folder.parent.name, folder.name))
    return seen is not None and seen.claim is None


class Tree(RuleBasedStateMachine):
    """Dispatches through the real Store, and what an executor's shell can do to the files of a live task,
    to rounds and to task directories."""

    def __init__(self) -> None:
        super().__init__()
        self.home = Path(tempfile.mkdtemp(prefix="claim-rows-"))
        make_change(self.home / "state")
        self.store = Store(self.home / "state", self.home)  # the Lead's: it anchors what it publishes
        secret_file = self.home / "config" / "secret"  # the record of governance goes beside it
        self.store.queries.use_anchor(lambda: task_anchor(b"s" * 32, self.home / "state", secret_file))
        self.by_hand = Store(self.home / "state", self.home)  # no anchor: TASKs as written by hand
        self.cache = self.home / "cache" / "rows"
        self.index = ClaimRows(self.cache, settle_ns=0)  # trusted from the next clock tick: what is proven
        self.outside = self.home / "outside"
        self.outside.mkdir()
        self.made = 0

    def teardown(self) -> None:
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

    def live(self, pick: int) -> Path | None:
        """A task holding a claim: only such a task's files are looked at each scan."""
        found = [p for p in self.tasks() if not p.is_symlink() and not settled(p)]
        return found[pick % len(found)] if found else None

    @rule()
    def restart_the_server(self) -> None:
        self.index.save(self.store.roots.state_root)
        self.index = ClaimRows(self.cache, settle_ns=0)

    @invariant()
    def answers_as_a_full_scan(self) -> None:
        assert rowed(self.store, self.index) == full_scan(self.store)

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
        if (folder := self.live(pick)) is None:
            return
        path = folder / "TASK.md"
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
        if (folder := self.live(pick)) is None:
            return
        (folder / name).unlink(missing_ok=True)

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99), name=st.sampled_from(FILES), same_size=st.booleans())
    def rewrite_a_file_in_place(self, pick: int, name: str, same_size: bool) -> None:
        if (folder := self.live(pick)) is None:
            return
        path = folder / name
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            changed = data.replace(b"completed", b"completes") if same_size else data + b"\nmore\n"
            with path.open("r+b") as file:  # the same inode: only its own watch can tell
                file.write(changed)

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99), name=st.sampled_from(FILES), write=st.booleans())
    def hard_link_a_file_elsewhere_and_change_it_through_the_link(self, pick: int, name: str, write: bool) -> None:
        if (folder := self.live(pick)) is None:
            return
        path = folder / name
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
        if (folder := self.live(pick)) is None:
            return
        path = folder / name
        if path.is_file() and not path.is_symlink():
            copy = path.with_name(f".{name}.copy")
            shutil.copyfile(path, copy)
            copy.rename(path)  # same bytes, another inode

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99))
    def corrupt_a_task(self, pick: int) -> None:
        if (folder := self.live(pick)) is None:
            return
        path = folder / "TASK.md"
        if path.is_file():
            path.write_bytes(b"---\n: : not yaml [\n---\n")

    @precondition(lambda self: self.tasks())
    @rule(pick=st.integers(0, 99), directory=st.booleans())
    def chmod_nothing_allowed(self, pick: int, directory: bool) -> None:
        if (folder := self.live(pick)) is None:
            return
        path = folder if directory else folder / "REPORT.md"
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


Tree.TestCase.settings = settings(max_examples=25, stateful_step_count=12)
test_claim_rows_answer_as_a_full_scan = Tree.TestCase


def released_tasks(store: Store, count: int) -> list[Ref]:
    refs = []
    for number in range(count):
        scope = Scope(workspace="required", writable=(f"src/p{number}/**",))
        ref = store.create_task(implementation(f"impl-{number}", scope=scope, writer_limit=99)).ref
        store.release_writer(ref, "none", "never started")
        refs.append(ref)
    return refs


def test_a_scan_with_nothing_changed_judges_no_settled_task_again(store: Store, tmp_path: Path) -> None:
    refs = released_tasks(store, 12)
    past_this_tick()
    index = ClaimRows(tmp_path / "rows", settle_ns=0)
    assert rowed(store, index) == full_scan(store) == []
    assert index.judged == len(refs)
    assert rowed(store, index) == []
    assert index.judged == len(refs)  # no round changed: nothing read again
    released_tasks(store, 1)
    assert rowed(store, index) == []
    assert index.judged == 2 * len(refs) + 1  # its round changed: every task in it read again
    past_this_tick()
    assert rowed(store, index) == []
    assert index.judged in (2 * len(refs) + 1, 3 * len(refs) + 2)  # listed once more if it was not past its tick
    judged = index.judged
    assert rowed(store, index) == []
    assert index.judged == judged


def test_a_restarted_server_answers_from_its_rows_without_judging_settled_tasks(store: Store, tmp_path: Path) -> None:
    released_tasks(store, 8)
    live = store.create_task(implementation("live", scope=Scope(workspace="required", writable=("x/**",)))).ref
    past_this_tick()
    first = ClaimRows(tmp_path / "rows", settle_ns=0)
    assert rowed(store, first) == full_scan(store) != []
    first.save(store.roots.state_root)
    restarted = ClaimRows(tmp_path / "rows", settle_ns=0)
    assert rowed(store, restarted) == full_scan(store)
    assert restarted.judged == 1  # the live task alone is read again
    store.release_writer(live, "none", "never started")
    assert rowed(store, restarted) == full_scan(store) == []


def test_rows_kept_with_each_settled_name_apart_are_not_used(store: Store, tmp_path: Path) -> None:
    refs = released_tasks(store, 2)
    past_this_tick()
    first = ClaimRows(tmp_path / "rows", settle_ns=0)
    rowed(store, first)
    first.save(store.roots.state_root)
    saved = json.loads(load_cache(tmp_path / "rows", 1 << 20) or b"")
    assert [row[5] for row in saved["rounds"]] == ["\0".join(sorted(ref.task for ref in refs))]  # one string
    older = {**saved, "rounds": [[*row[:5], row[5].split("\0"), row[6]] for row in saved["rounds"]]}
    assert save_cache(tmp_path / "rows", json.dumps(older).encode())
    restarted = ClaimRows(tmp_path / "rows", settle_ns=0)
    assert rowed(store, restarted) == full_scan(store) == []
    assert restarted.judged == len(refs)  # every task read from its files


def test_rows_not_signed_by_this_user_are_not_used(store: Store, tmp_path: Path) -> None:
    refs = released_tasks(store, 3)
    past_this_tick()
    index = ClaimRows(tmp_path / "rows", settle_ns=0)
    rowed(store, index)
    index.save(store.roots.state_root)
    saved = load_cache(tmp_path / "rows", 1 << 20)
    assert saved is not None
    (tmp_path / "rows").write_bytes(b"hmac-sha256:" + b"0" * 64 + b"\n" + saved)  # signed by no key of ours
    index = ClaimRows(tmp_path / "rows", settle_ns=0)
    assert rowed(store, index) == full_scan(store) == []
    assert index.judged == len(refs)  # every task read from its files


def test_rows_of_another_tree_are_not_used(store: Store, tmp_path: Path) -> None:
    refs = released_tasks(store, 2)
    past_this_tick()
    rows = {"version": 1, "root": "/elsewhere", "basis": "", "rounds": [[CHANGE, refs[0].session, 0, 0, 0, [], []]]}
    assert save_cache(tmp_path / "rows", json.dumps(rows).encode())
    index = ClaimRows(tmp_path / "rows", settle_ns=0)
    assert rowed(store, index) == full_scan(store) == []
    assert index.judged == len(refs)


def test_a_closing_file_removed_by_hand_is_seen_once_its_round_changes(store: Store, tmp_path: Path) -> None:
    """The one thing rows do not see at once: a settled task's own files (see ``claim_rows``)."""
    refs = released_tasks(store, 2)
    past_this_tick()
    index = ClaimRows(tmp_path / "rows", settle_ns=0)
    assert rowed(store, index) == []
    os.unlink(store.roots.task_dir(refs[0]) / "RELEASE.md")
    assert rowed(store, index) == []  # its round's stamp still holds
    (store.roots.task_dir(refs[0]).parent / "stray").mkdir()  # anything made or removed in the round
    assert rowed(store, index) == full_scan(store) != []
    index.forget()
    assert rowed(store, index) == full_scan(store) != []


def test_a_round_whose_mtime_is_set_back_still_shows_the_task_made_in_it(store: Store, tmp_path: Path) -> None:
    released_tasks(store, 2)
    past_this_tick()
    index = ClaimRows(tmp_path / "rows", settle_ns=0)
    assert rowed(store, index) == []
    round_dir = next(store.roots.state_root.glob("specdev/changes/*/sessions/*"))
    before = round_dir.stat()
    past_this_tick()
    scope = Scope(workspace="required", writable=("late/**",))
    store.create_task(implementation("late", scope=scope, writer_limit=99))
    os.utime(round_dir, ns=(before.st_atime_ns, before.st_mtime_ns))  # its mtime as the rows saw it
    assert rowed(store, index) == full_scan(store) != []


def test_a_server_keeps_its_rows_in_this_users_cache(store: Store) -> None:
    assert rows_path(store.roots.state_root).is_relative_to(Path(os.environ["XDG_CACHE_HOME"]))


ROW_BYTES_PER_TASK = 200  # what the rows hold per settled task: its name in a set


def test_the_rows_hold_a_name_per_settled_task(tmp_path: Path) -> None:
    generate(tmp_path / "tree", 600)  # reviews in rounds of 100, every third returned: none claims
    queries = Queries(Roots(tmp_path / "tree", tmp_path / "tree"))
    queries.keep_claim_rows()
    assert queries.claims() == []
    index = queries._claims
    assert isinstance(index, ClaimRows)
    assert index.judged == 600
    assert reachable_bytes(index) / 600 <= ROW_BYTES_PER_TASK
