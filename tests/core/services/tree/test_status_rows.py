"""Status rows: a restarted server's first status reuses the verdicts the server before it kept,
only where a stat of each task proves them current, and judges the rest from the files."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from bench.requests import implementation, report_of, review
from handoff_core.contract.scope import Scope, SharedPath
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.status_rows import ROWS_PER_FRAME, basis, load_rows, read_rows, save_rows
from handoff_core.services.tree.verdicts import Shared, Verdicts
from handoff_core.services.writing.store import Store
from tests.support.changes import CHANGE


def server(store: Store) -> Queries:
    """A server's reader of the tree (rows kept in the cache), whose verdicts count as settled at once."""
    queries = Queries(store.roots, Verdicts(settle_seconds=0))
    queries.keep_claim_rows()
    return queries


def returned(store: Store) -> Path:
    ref = store.create_task(review()).ref
    report = report_of(
        ref,
        status="completed",
        focused="Read it. Found two issues. Stopped. Next: fix.",
        artifacts="none",
        verification="ok",
    )
    store.write_report(report, CHANGE)
    return store.roots.task_dir(ref) / "REPORT.md"


def doctored(store: Store) -> None:
    """The kept rows with a note no judgement makes: an answer holding it came from the rows."""
    rows = load_rows(store.roots.state_root, basis(None))
    assert rows
    save_rows(store.roots.state_root, basis(None), [(*row[:4], row[4]._replace(notes=("kept",))) for row in rows])


def test_a_restarted_server_answers_the_same_from_the_rows_the_one_before_kept(store: Store) -> None:
    returned(store)
    store.create_task(implementation())
    first = server(store).status()
    rows = load_rows(store.roots.state_root, basis(None))
    assert sorted(row[4] for row in rows) == sorted(first)  # every task's status, round trip exact
    assert server(store).status() == first == store.queries.status()


def test_a_restarted_servers_first_status_comes_from_the_rows_where_stamps_prove_them(store: Store) -> None:
    report = returned(store)
    server(store).status()
    doctored(store)
    assert [t.notes for t in server(store).status()] == [("kept",)]
    report.chmod(0o400)  # a new ctime: the row is not proven, the task is judged from its files
    assert [t.notes for t in server(store).status()] == [()]


def test_rows_kept_under_another_anchor_are_not_loaded(store: Store) -> None:
    returned(store)
    server(store).status()
    assert load_rows(store.roots.state_root, basis(None))
    assert load_rows(store.roots.state_root, "another:governed") == []


def test_a_scope_with_shared_paths_round_trips_through_the_rows(store: Store) -> None:
    returned(store)
    server(store).status()
    (row,) = load_rows(store.roots.state_root, basis(None))
    scope = Scope(writable=("src/**",), shared=(SharedPath("docs/a.md", "lead"),), resources=("port:5432",))
    save_rows(store.roots.state_root, basis(None), [(*row[:4], row[4]._replace(scope=scope))])
    (again,) = load_rows(store.roots.state_root, basis(None))
    assert again[4].scope == scope
    assert isinstance(again[4].scope.shared[0], SharedPath)


def test_rows_read_ahead_are_what_the_first_walk_takes(store: Store) -> None:
    returned(store)
    server(store).status()
    doctored(store)
    restarted = server(store)
    restarted.read_rows()
    save_rows(store.roots.state_root, basis(None), [])  # kept no more: only the rows read ahead say "kept"
    assert [t.notes for t in restarted.status()] == [("kept",)]


def test_rows_read_ahead_under_another_anchor_are_not_taken(store: Store) -> None:
    returned(store)
    server(store).status()
    rows = load_rows(store.roots.state_root, basis(None))
    save_rows(
        store.roots.state_root, "another:governed", [(*row[:4], row[4]._replace(notes=("kept",))) for row in rows]
    )
    restarted = server(store)
    restarted.read_rows()
    assert [t.notes for t in restarted.status()] == [()]


def test_statuses_alike_round_trip_each_with_its_own_task_and_times(store: Store) -> None:
    returned(store)
    server(store).status()
    (row,) = load_rows(store.roots.state_root, basis(None))
    status = row[4]
    alike = [
        (*row[:4], status._replace(ref=status.ref._replace(task=f"00{n}-t"), dispatched_at=n, closed_at=n + 0.5))
        for n in range(2, 5)
    ]
    save_rows(store.roots.state_root, basis(None), [row, *alike])
    saved_basis, again = read_rows(store.roots.state_root, Shared())
    assert saved_basis == basis(None)
    assert again == [row, *alike]
    assert len({id(held.status.scope) for held in again}) == 1  # what they say alike is held once


def test_rows_of_many_frames_round_trip_in_order(store: Store) -> None:
    returned(store)
    server(store).status()
    (row,) = load_rows(store.roots.state_root, basis(None))
    count = 2 * ROWS_PER_FRAME + 7  # three frames of rows, the last a part one
    many = [
        (*row[:4], row[4]._replace(ref=row[4].ref._replace(task=f"{index:05d}-t"), notes=(str(index),)))
        for index in range(count)
    ]
    assert save_rows(store.roots.state_root, basis(None), many)
    assert load_rows(store.roots.state_root, basis(None)) == many


SAVING_BYTES = 4 << 20  # a frame's rows and bytes, whatever the count; whole, 20,000 rows cost 10 MB and more


def test_saving_rows_holds_a_frame_at_a_time_not_every_row_at_once(store: Store) -> None:
    returned(store)
    server(store).status()
    (row,) = load_rows(store.roots.state_root, basis(None))
    many = [(*row[:4], row[4]._replace(ref=row[4].ref._replace(task=f"{index:05d}-t"))) for index in range(20_000)]
    tracemalloc.start()
    try:
        assert save_rows(store.roots.state_root, basis(None), many)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= SAVING_BYTES
    assert len(load_rows(store.roots.state_root, basis(None))) == len(many)
