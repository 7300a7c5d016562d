"""Reading a change's tasks in one walk, and skipping the reads a caller already holds a verdict for."""

from __future__ import annotations

from pathlib import Path

import pytest

from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.snapshot import Probe
from handoff_core.files.reader import read_change_snapshots
from handoff_core.services.store import Store
from tests.conftest import CHANGE, implementation, review


@pytest.mark.parametrize("readers", [0, 2])
def test_a_walk_reads_every_task_in_order_inline_or_with_reader_threads(store: Store, readers: int) -> None:
    refs = [store.create_task(review(f"review-{n}")).ref for n in range(3)]
    walk = list(read_change_snapshots(store.roots.state_root, CHANGE, readers=readers))
    assert [(s, t) for s, t, _ in walk] == [(r.session, r.task) for r in refs]
    assert all(snapshot.file("TASK.md").data for _, _, snapshot in walk)


def test_a_probed_task_the_caller_knows_is_not_read(store: Store) -> None:
    known, fresh = (store.create_task(request).ref for request in (review(), implementation()))
    asked: list[tuple[str, int, Probe]] = []

    def reuse(facts: ChangeFacts, session: str, task: str, same: int, probe: Probe) -> bool:
        asked.append((task, same, probe))
        return task == known.task

    walk = {t: s for _, t, s in read_change_snapshots(store.roots.state_root, CHANGE, reuse=reuse)}
    assert (walk[known.task].reused, walk[known.task].files) == (True, {})
    assert (walk[fresh.task].reused, walk[fresh.task].file("TASK.md").kind) == (False, "file")
    names, stamps = asked[0][2]
    assert (names, len(stamps)) == (("TASK.md",), 1)
    assert walk[fresh.task].probe is not None


def test_without_a_reuse_test_no_probe_is_taken(store: Store, state_root: Path) -> None:
    store.create_task(review())
    ((_, _, snapshot),) = read_change_snapshots(state_root, CHANGE)
    assert (snapshot.probe, snapshot.reused) == (None, False)
