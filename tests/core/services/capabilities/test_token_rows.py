"""A restarted token index answers every token as a fresh one does, reading only the TASKs its rows
cannot prove (``token_rows``): a TASK replaced, rewritten or gone since is never taken from a row."""

from __future__ import annotations

import dataclasses
import mmap
import os
import shutil
from functools import partial
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.requests import review
from handoff_core.contract.ids import Ref
from handoff_core.services.capabilities.token_index import TokenIndex
from handoff_core.services.capabilities.token_rows import Key, Row, load_rows, rows_path, save_rows, settled_stamp
from handoff_core.services.capabilities.tokens import token_check
from handoff_core.services.writing.store import Store
from tests.support.clock import past_this_tick

TASKS = 6


def _check(token: str, ref: Ref) -> str:
    return token_check(token)


def dispatched(store: Store, count: int, token: str = "token", topic: str = "topic") -> list[Ref]:
    """``count`` reviews, task ``i`` recording the hash of ``f"{token}-{i}"``."""
    refs = []
    for number in range(count):
        request = dataclasses.replace(review(f"{topic}-{number}"), token_check=partial(_check, f"{token}-{number}"))
        refs.append(store.create_task(request).ref)
    return refs


def answers(index: TokenIndex, count: int, token: str = "token") -> list[Ref | None]:
    return [index.ref_of(f"{token}-{number}") for number in range(count)]


def restarted(store: Store) -> TokenIndex:
    index = TokenIndex(store.roots.state_root, settle_ns=0)
    index.build()
    return index


def test_a_restarted_index_answers_every_token_as_a_fresh_one_and_reads_no_task(store: Store) -> None:
    refs = dispatched(store, TASKS)
    past_this_tick()
    first = restarted(store)
    assert answers(first, TASKS) == refs
    assert first.read == TASKS
    second = restarted(store)
    assert answers(second, TASKS) == refs
    assert second.read == 0
    assert second.ref_of("no-such-token") is None


def test_a_task_file_replaced_after_the_save_is_read_again_and_only_its_new_token_opens(store: Store) -> None:
    refs = dispatched(store, TASKS)
    past_this_tick()
    restarted(store)
    path = store.roots.task_dir(refs[0]) / "TASK.md"
    text = path.read_text().replace(token_check("token-0"), token_check("other-0"))
    path.unlink()
    path.write_text(text)
    index = restarted(store)
    assert index.read == 1
    assert index.ref_of("other-0") == refs[0]
    assert index.ref_of("token-0") is None


def test_a_task_file_rewritten_in_place_with_its_times_put_back_is_read_again(store: Store) -> None:
    refs = dispatched(store, TASKS)
    past_this_tick()
    restarted(store)
    path = store.roots.task_dir(refs[1]) / "TASK.md"
    before = path.stat()
    text = path.read_text().replace(token_check("token-1"), token_check("other-1"))
    with path.open("r+") as rewritten:  # the same inode and size: only the ctime can tell
        rewritten.write(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_ino, path.stat().st_size, path.stat().st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    index = restarted(store)
    assert index.read == 1
    assert (index.ref_of("other-1"), index.ref_of("token-1")) == (refs[1], None)


def test_a_task_gone_since_the_save_is_not_opened_by_its_row_and_leaves_the_rows(store: Store) -> None:
    refs = dispatched(store, TASKS)
    past_this_tick()
    restarted(store)
    shutil.rmtree(store.roots.task_dir(refs[2]))
    index = restarted(store)
    assert index.read == 0
    assert index.ref_of("token-2") is None
    assert len(load_rows(store.roots.state_root)) == TASKS - 1


def test_a_task_read_in_its_own_clock_tick_keeps_no_row(store: Store) -> None:
    refs = dispatched(store, TASKS)
    TokenIndex(store.roots.state_root).build()  # the default margin: every TASK was written just now
    assert load_rows(store.roots.state_root) == {}
    index = restarted(store)
    assert (index.read, answers(index, TASKS)) == (TASKS, refs)


def test_a_stamp_is_kept_only_when_its_ctime_is_a_settle_period_behind_the_clock_read_before_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "TASK.md").write_bytes(b"x")
    info = os.stat(tmp_path / "TASK.md")
    assert settled_stamp(info, info.st_ctime_ns + 10, settle_ns=10) is None
    assert settled_stamp(info, info.st_ctime_ns + 11, settle_ns=10) is not None


def test_a_task_written_through_a_shared_mapping_as_it_is_read_keeps_no_row(store: Store) -> None:
    """A write through a page the mapping already dirtied moves no time: a row kept from a read made
    while the mapping was open would outlive bytes put back through it, the file then as published."""
    refs = dispatched(store, TASKS)
    path = store.roots.task_dir(refs[0]) / "TASK.md"
    published = path.read_bytes()
    legit, planted = token_check("token-0").encode(), token_check("planted").encode()
    at = published.index(legit)
    fd = os.open(path, os.O_RDWR)
    view = mmap.mmap(fd, len(published))
    try:
        view[at : at + len(legit)] = planted  # the page dirtied now: this write moves the ctime
        past_this_tick()
        assert restarted(store).ref_of("planted") == refs[0]  # read while the mapping is open
        view[at : at + len(legit)] = legit  # put back through the same dirty page: no time moves
        view.flush()
    finally:
        view.close()
        os.close(fd)
    assert path.read_bytes() == published
    again = restarted(store)
    assert (again.ref_of("planted"), again.ref_of("token-0")) == (None, refs[0])


def test_rows_signed_by_no_one_or_of_another_tree_are_not_used(store: Store, tmp_path: Path) -> None:
    refs = dispatched(store, TASKS)
    past_this_tick()
    restarted(store)
    rows = load_rows(store.roots.state_root)
    assert len(rows) == TASKS
    assert load_rows(tmp_path) == {}  # another tree's rows are under another name
    cache = rows_path(store.roots.state_root)
    data = bytearray(cache.read_bytes())
    data[-1] ^= 1  # one bit of the last row's check: the file no longer matches its signature
    cache.write_bytes(bytes(data))
    index = restarted(store)
    assert (index.read, answers(index, TASKS)) == (TASKS, refs)


def test_a_hash_two_tasks_record_opens_neither_after_a_restart_too(store: Store) -> None:
    refs = dispatched(store, 2, token="twin") + dispatched(store, 1, token="twin", topic="again")
    past_this_tick()
    for index in (restarted(store), restarted(store)):
        assert index.ref_of("twin-0") is None
        assert index.ref_of("twin-1") == refs[1]
    assert index.read == 0


NAMES = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FFF), max_size=12)
STAMPS = st.tuples(*[st.integers(0, 2**63 - 1)] * 5)
ROWS = st.dictionaries(st.tuples(NAMES, NAMES, NAMES), st.tuples(STAMPS, st.none() | NAMES), max_size=20)


@settings(max_examples=50, deadline=None)
@given(rows=ROWS)
def test_saved_rows_load_as_they_were(rows: dict[Key, Row]) -> None:
    state_root = Path(os.environ["XDG_CACHE_HOME"], "trees", "round-trip")
    assert save_rows(state_root, rows)
    assert load_rows(state_root) == rows
