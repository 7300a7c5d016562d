"""A page reader reads each task of an unchanging tree exactly as ``read_snapshot`` does, each round
located and listed once; what changes in a round it has listed, it sees at the next answer."""

from __future__ import annotations

import os
import shutil

from handoff_core.files.page_reader import MAX_ROUNDS, PageReader
from handoff_core.files.reader import read_snapshot
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE, make_change
from tests.support.glances import history, odd_files, task_file


def test_a_page_reader_reads_every_task_as_read_snapshot_does(store: Store) -> None:
    history(store)
    odd_files(store)
    root = store.roots.state_root
    round_dir = task_file(store, "first").parent.parent
    session = round_dir.name
    (round_dir / "098-a-file").write_text("")  # an entry that is no task directory
    (round_dir / "097-a-link").symlink_to(task_file(store, "review-1").parent)
    os.mkdir(round_dir.parent / "20261130T000000Z")  # an empty round
    (round_dir.parent / "20261130T000001Z").symlink_to(round_dir)  # a round that is a link
    archived = make_change(root, "2026-11-29-old")
    shutil.copytree(round_dir, archived / "sessions" / session, symlinks=True)
    archive = root / "specdev" / "archive" / "2026-11"
    archive.mkdir(parents=True)
    archived.rename(archive / archived.name)
    asked = [(CHANGE, session, task.name) for task in sorted(round_dir.iterdir())]
    asked += [(CHANGE, session, "099-missing"), (CHANGE, "20261130T000000Z", "001-none")]
    asked += [(CHANGE, "20261130T000001Z", asked[0][2]), (CHANGE, "20261130T000002Z", "001-no-round")]
    asked += [("2026-11-29-old", session, asked[0][2]), ("2026-11-28-none", session, asked[0][2])]
    asked += [("../escape", session, "001-a"), (CHANGE, "..", "001-a"), (CHANGE, session, "../../x")]
    with PageReader(root) as reader:
        shared = [reader.snapshot(*place) for place in asked + asked]  # asked twice: the second from what is held
    alone = [read_snapshot(root, *place) for place in asked + asked]
    assert shared == alone
    assert sum(s.task_found for s in alone) > 10
    assert any(s.problems for s in alone)


def test_a_page_reader_lets_go_of_every_handle_it_took(store: Store) -> None:
    history(store)
    session = task_file(store, "first").parent.parent.name
    before = set(os.listdir("/proc/self/fd"))
    with PageReader(store.roots.state_root) as reader:
        reader.snapshot(CHANGE, session, task_file(store, "review-1").parent.name)
        assert set(os.listdir("/proc/self/fd")) > before
    assert set(os.listdir("/proc/self/fd")) == before


def test_a_page_reader_holds_one_handle_per_round_and_no_more_than_its_bound(store: Store) -> None:
    root = store.roots.state_root
    for month in range(1, 13):
        (root / "specdev" / "archive" / f"2025-{month:02d}").mkdir(parents=True)
    asked = []
    for number in range(MAX_ROUNDS + 8):
        change = f"2026-11-{number % 28 + 1:02d}-change-{number}"
        task = make_change(root, change) / "sessions" / "20261130T000000Z" / "001-a"
        task.mkdir(parents=True)
        (task / "TASK.md").write_text("---\n---\n")
        asked.append((change, "20261130T000000Z", "001-a"))
    before = len(os.listdir("/proc/self/fd"))
    with PageReader(root) as reader:
        shared = [reader.snapshot(*place) for place in asked]
        held = len(os.listdir("/proc/self/fd")) - before
    assert held <= MAX_ROUNDS
    assert shared == [read_snapshot(root, *place) for place in asked]
    assert all(s.task_found for s in shared)


def test_a_task_of_the_same_number_added_after_its_round_was_listed_is_seen_at_the_next_answer(store: Store) -> None:
    history(store)
    first = task_file(store, "first").parent
    session, number = first.parent.name, first.name.split("-", 1)[0]
    with PageReader(store.roots.state_root) as reader:
        assert reader.snapshot(CHANGE, session, first.name).same_number == 1
        (first.parent / f"{number}-a-second").mkdir()
        assert reader.snapshot(CHANGE, session, first.name).same_number == 1  # this answer's listing
    with PageReader(store.roots.state_root) as reader:
        assert reader.snapshot(CHANGE, session, first.name).same_number == 2
