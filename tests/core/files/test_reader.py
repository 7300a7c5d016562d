"""Reading a change's tasks in one walk, and skipping the reads a caller already holds a verdict for."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.requests import implementation, review
from handoff_core.contract.change import ChangeFacts
from handoff_core.contract.snapshot import PROBE_STAMP, Probe, probe_ctimes
from handoff_core.files.reader import _stamps, read_change_snapshots
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE
from tests.support.mappings import written_mapping


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


U64, I64 = st.integers(0, 2**64 - 1), st.integers(-(2**63), 2**63 - 1)
U32 = st.integers(0, 2**32 - 1)


def stat_of(dev: int, ino: int, mode: int, nlink: int, size: int, mtime_ns: int, ctime_ns: int) -> os.stat_result:
    """A ``stat_result`` with these fields (the ones a probe keeps), the rest zero."""
    seconds = (0, 0, 0)
    return os.stat_result((mode, ino, dev, nlink, 0, 0, size, *seconds, *seconds, 0, mtime_ns, ctime_ns))


@given(st.lists(st.tuples(U64, U64, U32, U32, I64, I64, I64), min_size=1, max_size=4))
def test_packed_stamps_give_back_every_field_a_probe_keeps(fields: list[tuple[int, ...]]) -> None:
    stamps = _stamps([stat_of(*each) for each in fields])
    assert stamps is not None
    assert list(PROBE_STAMP.iter_unpack(stamps)) == fields
    assert probe_ctimes((stamps, ())) == [each[6] for each in fields]


@given(st.integers(2**32, 2**64 - 1), st.sampled_from(["mode", "nlink"]))
def test_a_mode_or_link_count_wider_than_its_field_gives_no_stamps(value: int, field: str) -> None:
    fields = {"dev": 1, "ino": 2, "mode": 0o100444, "nlink": 1, "size": 3, "mtime_ns": 4, "ctime_ns": 5}
    assert _stamps([stat_of(**fields), stat_of(**(fields | {field: value}))]) is None


class NothingHeld:
    """A ``reader.Reuse`` that holds no verdict: every task is read, with a probe to hold it on."""

    def names(self, change: str, session: str, task: str) -> tuple[str, ...] | None:
        return None

    def holds(self, facts: ChangeFacts, session: str, task: str, same: int, probe: Probe) -> bool:
        return False


def test_a_task_read_while_a_process_holds_one_of_its_files_open_for_writing_gives_no_probe(store: Store) -> None:
    written, quiet = (store.create_task(review(topic)).ref for topic in ("review-a1", "review-a2"))
    with written_mapping(store.roots.task_dir(written) / "TASK.md"):
        walk = {t: s for _, t, s in read_change_snapshots(store.roots.state_root, CHANGE, reuse=NothingHeld())}
    assert walk[written.task].probe is None  # read, and judged, but nothing can be held on it
    assert walk[written.task].file("TASK.md").kind == "file"
    assert walk[quiet.task].probe is not None
    after = {t: s for _, t, s in read_change_snapshots(store.roots.state_root, CHANGE, reuse=NothingHeld())}
    assert after[written.task].probe is not None


ANY_INT = st.one_of(
    st.integers(-(2**65), 2**65), st.sampled_from([-1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1])
)


@given(st.lists(st.tuples(*[ANY_INT] * 7), max_size=6))
def test_stamps_are_each_stamp_packed_in_turn_or_none_when_any_value_is_wider_than_its_field(
    fields: list[tuple[int, ...]],
) -> None:
    try:
        expected: bytes | None = b"".join(PROBE_STAMP.pack(*each) for each in fields)
    except (struct.error, OverflowError):
        expected = None
    assert _stamps([stat_of(*each) for each in fields]) == expected
