"""A large cold walk glances its later rounds in a second process, and answers exactly as one walk."""

from __future__ import annotations

import logging
import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.requests import review
from handoff_core.services.tree import halves
from handoff_core.services.tree.halves import HEAD_START, SPLIT_FROM, Halves, round_sizes, split_at
from handoff_core.services.tree.queries import Queries
from handoff_core.services.tree.status import TaskStatus
from handoff_core.services.writing.store import Store
from tests.support import broken_children
from tests.support.changes import make_change
from tests.support.glances import cold, history, old_times, reply, rewrite
from tests.support.leftovers import children

ROUNDS = 4


def rounds_of(store: Store) -> list[Path]:
    return sorted(store.roots.state_root.glob("specdev/changes/*/sessions/*"))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Four rounds (the first with implementation tasks); in the last, tasks a glance leaves to the full
    read. Walked, never written, by the tests: built once."""
    project = tmp_path_factory.mktemp("halves") / "project"
    store = Store(project / "speculo" / ".speculo", project)
    sessions = make_change(store.roots.state_root) / "sessions"
    history(store, reviews=8)
    for number in range(1, ROUNDS):
        (sessions / f"20991231T00000{number}Z").mkdir()
        session = store.create_task(review("first", session=f"20991231T00000{number}Z")).ref.session
        for index in range(8):
            if index % 4:
                reply(store, ("completed", "blocked", "failed")[index % 3], index, session)
            else:
                store.create_task(review(f"open-{index}", session=session))
    last = rounds_of(store)[-1]
    tasks = sorted(p for p in last.iterdir() if (p / "REPORT.md").exists())
    rewrite(tasks[0] / "TASK.md", "## Acceptance", "## Acceptanc")  # invalid sections: still glanced
    (tasks[1] / "stray.txt").write_text("not a handoff file\n")
    (tasks[2] / "REPORT.md").chmod(0o644)
    os.link(tasks[2] / "REPORT.md", last / "second-link")  # not singly linked: read in full
    old_times(store)
    return store


@pytest.fixture
def split_small(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Split every walk; what the child sent back, round by round (glanced or left to this process)."""
    monkeypatch.setattr(halves, "SPLIT_FROM", 1)
    monkeypatch.setattr(halves, "HEAD_START", 0)
    sent: list[tuple[str, bool]] = []
    glances = Halves.glances

    def observed(self: Halves, change: str):  # type: ignore[no-untyped-def]
        for name, found in glances(self, change):
            sent.append((name, found is not None))
            yield name, found

    monkeypatch.setattr(Halves, "glances", observed)
    return sent


def one_walk(store: Store) -> tuple[list[TaskStatus], dict[object, object]]:
    queries = cold(store)
    answer = queries.status(glancing=True)
    return answer, held_glances(queries)


def unsplit(store: Store, monkeypatch: pytest.MonkeyPatch) -> tuple[list[TaskStatus], dict[object, object]]:
    """The answer and the glances held of a walk in this process alone."""
    with monkeypatch.context() as one:
        one.setattr(halves, "SPLIT_FROM", 10**9)
        return one_walk(store)


def held_glances(queries: Queries) -> dict[object, object]:
    return {ref: (h.change, h.same, h.stamps, h.names, h.status) for ref, h in queries._verdicts._glances.items()}


def test_a_split_walk_answers_and_holds_exactly_as_one_walk(
    store: Store, monkeypatch: pytest.MonkeyPatch, split_small: list[tuple[str, bool]]
) -> None:
    expected, expected_held = unsplit(store, monkeypatch)
    before = set(children())  # what earlier tests left running (a session's servers) is not this test's
    answer, held = one_walk(store)
    names = [p.name for p in rounds_of(store)]
    # The child took the last two rounds: the third it glanced, the fourth it left to the server.
    assert split_small == [(names[2], True), (names[3], False)]
    assert answer == expected
    assert held == expected_held
    assert sum(not t.judged for t in answer) > len(answer) // 2
    assert set(children()) <= before


def test_each_large_change_of_a_cold_walk_is_split(
    store: Store, tmp_path: Path, split_small: list[tuple[str, bool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the first change leaves held is no reason to walk the next in one process."""
    root = tmp_path / "speculo" / ".speculo"
    shutil.copytree(store.roots.state_root, root, symlinks=True)
    changes = root / "specdev" / "changes"
    (first,) = changes.iterdir()
    shutil.copytree(first, changes / "2026-12-01-other", symlinks=True)
    two = Store(root, tmp_path)
    old_times(two)
    expected, expected_held = unsplit(two, monkeypatch)
    answer, held = one_walk(two)
    assert len(split_small) == 2 * 2  # the last two rounds of each change
    assert answer == expected
    assert held == expected_held


BROKEN = ("exits", "writes_nonsense", "answers_other_rounds", "answers_a_round_with_what_is_no_glance", "never_ends")


@pytest.mark.parametrize("failure", BROKEN)
def test_a_second_process_that_fails_leaves_its_rounds_to_this_one(
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    split_small: list[tuple[str, bool]],
    caplog: pytest.LogCaptureFixture,
    failure: str,
) -> None:
    expected, expected_held = unsplit(store, monkeypatch)
    monkeypatch.setattr(halves, "ENTRY", (broken_children.__name__, failure))
    monkeypatch.setattr(halves, "WAIT_AT_LEAST", 0.5)
    monkeypatch.setattr(halves, "WAIT_FACTOR", 0.0)
    before = set(children())
    with caplog.at_level(logging.WARNING, logger=halves.__name__):
        answer, held = one_walk(store)
    assert [found for _, found in split_small] == [False, False]
    assert answer == expected
    assert held == expected_held
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert set(children()) <= before


def test_a_second_process_that_cannot_start_leaves_every_round_to_this_one(
    store: Store, monkeypatch: pytest.MonkeyPatch, split_small: list[tuple[str, bool]], caplog: pytest.LogCaptureFixture
) -> None:
    expected, _ = unsplit(store, monkeypatch)
    monkeypatch.setattr(sys, "executable", str(store.roots.project_root / "no-such-python"))
    with caplog.at_level(logging.WARNING, logger=halves.__name__):
        answer, _ = one_walk(store)
    assert answer == expected
    assert split_small == []
    assert len(caplog.records) == 1


def test_a_small_change_is_walked_in_one_process(
    store: Store, monkeypatch: pytest.MonkeyPatch, split_small: list[tuple[str, bool]]
) -> None:
    monkeypatch.setattr(halves, "SPLIT_FROM", SPLIT_FROM)  # as shipped
    fd = os.open(rounds_of(store)[0].parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        sizes = round_sizes(fd, [p.name for p in rounds_of(store)])
    finally:
        os.close(fd)
    assert sizes == [sum(t.is_dir() for t in p.iterdir()) for p in rounds_of(store)]
    assert split_at(sizes) == len(sizes)
    one_walk(store)
    assert split_small == []


def test_a_round_s_size_is_its_task_directories_and_nothing_that_is_not_a_round(tmp_path: Path) -> None:
    for name, tasks in (("a", 3), ("b", 0)):
        for index in range(tasks):
            (tmp_path / name / f"{index:03d}-t").mkdir(parents=True)
        (tmp_path / name).mkdir(exist_ok=True)
    (tmp_path / "a" / "a-file").write_text("")
    (tmp_path / "file").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert round_sizes(fd, ["a", "b", "file", "link", "missing"]) == [3, 0, 0, 0, 0]
    finally:
        os.close(fd)


@given(st.lists(st.integers(min_value=0, max_value=3 * SPLIT_FROM), max_size=40))
def test_the_server_keeps_the_fewest_leading_rounds_that_carry_its_head_start(sizes: list[int]) -> None:
    cut = split_at(sizes)
    total = sum(sizes)
    half = (total + HEAD_START) / 2
    if total < SPLIT_FROM:
        assert cut == len(sizes)
    elif cut < len(sizes):
        assert cut >= 1
        assert sum(sizes[:cut]) >= half > sum(sizes[: cut - 1])
    else:
        assert sum(sizes[:-1]) < half
