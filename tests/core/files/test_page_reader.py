"""A page reader reads each task exactly as ``read_snapshot`` does, its change and round shared."""

from __future__ import annotations

import os
import shutil

from handoff_core.files.page_reader import PageReader
from handoff_core.files.reader import read_snapshot
from handoff_core.services.writing.store import Store
from tests.conftest import CHANGE, make_change
from tests.core.services.tree.test_glance import history, odd_files, task_file


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
