"""A cold walk's sightings: what each read, and the probe it carries for a glance held on it."""

from __future__ import annotations

import os
import time

from bench.requests import implementation, report_of, review
from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.snapshot import Probe
from handoff_core.files.reader import read_change_snapshots
from handoff_core.files.sightings import Sighting, sight_change
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE


class Probes:
    """A ``reader.Reuse`` that holds nothing and records each probe the reader takes."""

    def __init__(self) -> None:
        self.taken: dict[str, Probe] = {}

    def names(self, change: str, session: str, task: str) -> tuple[str, ...] | None:
        return None

    def holds(self, facts: ChangeFacts, session: str, task: str, same: int, probe: Probe) -> bool:
        self.taken[task] = probe
        return False


def settled_tree(store: Store) -> None:
    """Tasks with every handoff file a glance reads, and a stray beside them."""
    returned = store.create_task(review("returned")).ref
    store.write_report(
        report_of(
            returned,
            status="completed",
            focused="Read it. Found two issues. Stopped. Next: fix.",
            artifacts="none",
            verification="read",
        ),
        CHANGE,
    )
    released = store.create_task(review("released")).ref
    store.release_writer(released, "none", "never started")
    store.create_task(review("open"))
    store.create_task(implementation())
    folder = next(store.roots.state_root.glob(f"specdev/changes/{CHANGE}/sessions/*/*-open"))
    (folder / "session-locator.json").write_text("{}")
    (folder / "notes.txt").write_text("a stray")


def test_a_sighting_carries_the_probe_the_reader_takes_of_the_same_directory(store: Store) -> None:
    settled_tree(store)
    root = store.roots.state_root
    before = time.time_ns() + 1
    seen: dict[str, Sighting] = {}

    def look(session: str, task: str, sighting: Sighting) -> str:
        seen[task] = sighting
        return task

    sighted = list(sight_change(root, CHANGE, None, before, look))
    reader = Probes()
    walked = [task for _, task, _ in read_change_snapshots(root, CHANGE, reuse=reader, readers=0)]
    assert sighted == walked == sorted(seen)
    assert len(seen) == 4
    for task, sighting in seen.items():
        assert sighting.facts is not None
        assert sighting.facts.change == CHANGE
        assert sighting.probe == reader.taken[task], task


def test_a_sighting_of_a_directory_changed_since_carries_a_probe_that_no_longer_matches(store: Store) -> None:
    settled_tree(store)
    root = store.roots.state_root
    before = time.time_ns() + 1
    seen: dict[str, Sighting] = {}
    list(sight_change(root, CHANGE, None, before, lambda s, t, sighting: seen.setdefault(t, sighting)))
    folder = next(root.glob(f"specdev/changes/{CHANGE}/sessions/*/*-returned"))
    report = folder / "REPORT.md"
    data = report.read_bytes()
    report.chmod(0o644)
    os.unlink(report)
    report.write_bytes(data)  # the same bytes in a new inode
    reader = Probes()
    list(read_change_snapshots(root, CHANGE, reuse=reader, readers=0))
    changed = folder.name
    assert seen[changed].probe != reader.taken[changed]
    assert all(seen[t].probe == reader.taken[t] for t in seen if t != changed)
