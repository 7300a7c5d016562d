"""Reading a change's tasks in one walk, and skipping the reads a caller already holds a verdict for."""

from __future__ import annotations

from pathlib import Path

import pytest

from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.snapshot import PROBE_STAMP, Probe
from handoff_core.files.reader import read_change_snapshots
from handoff_core.services.writing.store import Store
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

    class Reuse:
        def names(self, change: str, session: str, task: str) -> tuple[str, ...] | None:
            return None

        def holds(self, facts: ChangeFacts, session: str, task: str, same: int, probe: Probe) -> bool:
            asked.append((task, same, probe))
            return task == known.task

    walk = {t: s for _, t, s in read_change_snapshots(store.roots.state_root, CHANGE, reuse=Reuse())}
    assert (walk[known.task].reused, walk[known.task].files) == (True, {})
    assert (walk[fresh.task].reused, walk[fresh.task].file("TASK.md").kind) == (False, "file")
    stamps, names = asked[0][2]
    assert (names, len(stamps)) == (("TASK.md",), 2 * PROBE_STAMP.size)  # the directory, then TASK.md
    assert walk[fresh.task].probe is not None


def test_a_directory_whose_names_the_caller_holds_is_probed_without_opening_it(store: Store) -> None:
    """The quick probe (stat calls alone) gives the same probe as opening and listing the directory."""
    ref = store.create_task(review()).ref
    probes: list[Probe] = []

    class Reuse:
        def names(self, change: str, session: str, task: str) -> tuple[str, ...] | None:
            return probes[0][1] if probes else None

        def holds(self, facts: ChangeFacts, session: str, task: str, same: int, probe: Probe) -> bool:
            held = bool(probes) and probe == probes[0]
            probes.append(probe)
            return held

    for _ in range(2):
        list(read_change_snapshots(store.roots.state_root, CHANGE, reuse=Reuse()))
    assert len(probes) == 2
    assert probes[0] == probes[1]  # the second one from stat calls alone
    (store.roots.task_dir(ref) / ".stray").write_text("")  # a new name moves the directory's stamp
    ((_, _, snapshot),) = read_change_snapshots(store.roots.state_root, CHANGE, reuse=Reuse())
    assert snapshot.reused is False
    assert ".stray" in snapshot.task_entries


def test_without_a_reuse_test_no_probe_is_taken(store: Store, state_root: Path) -> None:
    store.create_task(review())
    ((_, _, snapshot),) = read_change_snapshots(state_root, CHANGE)
    assert (snapshot.probe, snapshot.reused) == (None, False)
